"""ConversionReview and AdmissionReview answers (mpi_controller.webhook.reviews, .mpijob,
.registry): conversions of MPIJob lists, refusals with the controller's messages, malformed
reviews answered with the problem named, and the registry's configuration manifest."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.kinds import plugins
from mpi_controller.mpi.admission import validate_mpijob
from mpi_controller.mpi.conversion import ANNOTATION, convert
from mpi_controller.webhook.registry import WebhookRegistry, default_registry
from mpi_controller.webhook.reviews import (
    ValidatingWebhook,
    Verdict,
    admission_review,
    convert_review,
)

REPO = Path(__file__).resolve().parents[3]
V1_JOB = yaml.safe_load((REPO / "examples/v1/tensorflow-mnist-elastic.yaml").read_text())
A2_JOB = yaml.safe_load((REPO / "examples/v1alpha2/tensorflow-benchmarks.yaml").read_text())
PI_JOB = yaml.safe_load((REPO / "examples/pi.yaml").read_text())
CONVERTERS = default_registry().converters
WEBHOOKS = tuple(w for w in default_registry().validating if w.kind == "MPIJob")
BY_VERSION = {w.version: w for w in WEBHOOKS}


def conversion(objects: Any, desired: Any = "kubeflow.org/v2beta1", **extra: Any) -> Any:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "u-1", "desiredAPIVersion": desired, "objects": objects, **extra}}


# -- ConversionReview ---------------------------------------------------------------------------

def test_a_review_converts_every_object() -> None:
    hub = convert(V1_JOB, "v2beta1")
    answer = convert_review(conversion([V1_JOB, A2_JOB, hub], "kubeflow.org/v1"), CONVERTERS)
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1"
    assert answer["kind"] == "ConversionReview"
    response = answer["response"]
    assert response["uid"] == "u-1"
    assert response["result"] == {"status": "Success"}
    assert response["convertedObjects"] == [V1_JOB, convert(A2_JOB, "v1"), V1_JOB]


def test_an_empty_list_converts() -> None:
    assert convert_review(conversion([]), CONVERTERS)["response"] == {
        "uid": "u-1", "convertedObjects": [], "result": {"status": "Success"}}


@pytest.mark.parametrize(("body", "uid", "message"), [
    (None, "", "the body must be a ConversionReview object"),
    ([], "", "the body must be a ConversionReview object"),
    ({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "ConversionReview"}, "",
     "expected apiVersion apiextensions.k8s.io/v1 kind ConversionReview, got apiVersion "
     "'apiextensions.k8s.io/v1beta1' kind 'ConversionReview'"),
    ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}, "",
     "request: must be an object"),
    ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "request": {}}, "",
     "request.uid: must be a non-empty string"),
    (conversion([], desired="v1"), "u-1",
     "request.desiredAPIVersion: must be <group>/<version>, got 'v1'"),
    (conversion("x"), "u-1", "request.objects: must be a list"),
    (conversion([V1_JOB, 3]), "u-1", "request.objects[1]: must be an object"),
    (conversion([{"apiVersion": "batch/v1", "kind": "Job"}]), "u-1",
     "request.objects[0]: apiVersion 'batch/v1' is not in group 'kubeflow.org'"),
    (conversion([{"apiVersion": "kubeflow.org/v1", "kind": "TFJob"}]), "u-1",
     "request.objects[0]: no conversion for kind 'TFJob' in group 'kubeflow.org'"),
    (conversion([V1_JOB], desired="kubeflow.org/v3"), "u-1",
     "request.objects[0] (MPIJob tensorflow-mnist-elastic): version \"v3\" is not one of "
     "v2beta1, v1, v1alpha2"),
    (conversion([{**V1_JOB, "metadata": {"name": "x", "annotations": {ANNOTATION: "{"}}}]), "u-1",
     f"request.objects[0] (MPIJob x): metadata.annotations[{ANNOTATION}]: not valid JSON"),
])
def test_a_malformed_review_fails_with_the_problem(body: Any, uid: str, message: str) -> None:
    answer = convert_review(body, CONVERTERS)
    assert answer["response"]["uid"] == uid
    result = answer["response"]["result"]
    assert result["status"] == "Failure"
    assert result["message"].startswith(message)
    assert "convertedObjects" not in answer["response"]


# -- AdmissionReview ----------------------------------------------------------------------------

def admission(obj: Any, *, version: str = "v1", operation: str = "CREATE", old: Any = None,
              kind: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "uid": "a-1", "operation": operation, "object": obj,
        "kind": kind or {"group": "kubeflow.org", "version": version, "kind": "MPIJob"},
        "resource": {"group": "kubeflow.org", "version": version, "resource": "mpijobs"}}
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def test_valid_jobs_of_every_version_are_allowed() -> None:
    for version, job in (("v1", V1_JOB), ("v1alpha2", A2_JOB), ("v2beta1", PI_JOB)):
        answer = admission_review(admission(job, version=version), BY_VERSION[version])
        assert answer == {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                          "response": {"uid": "a-1", "allowed": True}}


def _denied(answer: dict[str, Any]) -> str:
    response = answer["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert response["status"]["reason"] == "Forbidden"
    message: str = response["status"]["message"]
    return message


def test_v1_refusal_names_the_field_with_training_operators_message() -> None:
    job = copy.deepcopy(V1_JOB)
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    assert _denied(admission_review(admission(job), BY_VERSION["v1"])) == (
        "spec.mpiReplicaSpecs[Launcher].replicas: MPIReplicaSpec is not valid: There must be "
        "only 1 launcher replica")


def test_v2beta1_refusal_has_the_controllers_validation_messages() -> None:
    job = copy.deepcopy(PI_JOB)
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    job["spec"]["slotsPerWorker"] = -1
    assert _denied(admission_review(admission(job, version="v2beta1"), BY_VERSION["v2beta1"])) \
        == ("[spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1, "
            "spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0]")


def test_v1alpha2_refusal() -> None:
    job = copy.deepcopy(A2_JOB)
    del job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert _denied(admission_review(admission(job, version="v1alpha2"),
                                    BY_VERSION["v1alpha2"])) == (
        "spec.mpiReplicaSpecs[Worker]: Required value: must have Worker replica spec")


def test_a_job_is_judged_by_the_rules_of_its_origin_version() -> None:
    """A v1 job read and written back as v2beta1 keeps v1's rules (and vice versa): v1 allows
    a Worker restartPolicy of Always, v2beta1 does not."""
    job = copy.deepcopy(V1_JOB)
    job["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "Always"
    as_hub = convert(job, "v2beta1")
    assert admission_review(admission(as_hub, version="v2beta1"),
                            BY_VERSION["v2beta1"])["response"]["allowed"] is True
    pi = copy.deepcopy(PI_JOB)
    pi["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "Always"
    message = _denied(admission_review(admission(convert(pi, "v1")), BY_VERSION["v1"]))
    assert message.startswith('spec.mpiReplicaSpecs[Worker].restartPolicy: Unsupported value: '
                              '"Always"')


def test_the_origin_version_cannot_change_on_update() -> None:
    hub = convert(V1_JOB, "v2beta1")
    stripped = copy.deepcopy(hub)
    del stripped["metadata"]["annotations"]
    answer = admission_review(admission(stripped, version="v2beta1", operation="UPDATE",
                                        old=hub), BY_VERSION["v2beta1"])
    assert _denied(answer) == (
        f'metadata.annotations[{ANNOTATION}]: Invalid value: "v2beta1": the job was created '
        "as kubeflow.org/v1; the version a job was created in cannot change")


def test_an_update_that_leaves_the_spec_alone_is_not_judged_again() -> None:
    """A job admitted before the webhook existed can still get labels and finalizers."""
    bad = copy.deepcopy(PI_JOB)
    bad["spec"]["slotsPerWorker"] = -1
    labelled = copy.deepcopy(bad)
    labelled["metadata"]["labels"] = {"team": "a"}
    webhook = BY_VERSION["v2beta1"]
    assert admission_review(admission(labelled, version="v2beta1", operation="UPDATE", old=bad),
                            webhook)["response"]["allowed"] is True
    changed = copy.deepcopy(labelled)
    changed["spec"]["slotsPerWorker"] = -2
    assert "spec.slotsPerWorker" in _denied(admission_review(
        admission(changed, version="v2beta1", operation="UPDATE", old=bad), webhook))


def test_an_unreadable_conversion_annotation_is_refused() -> None:
    job = copy.deepcopy(PI_JOB)
    job["metadata"]["annotations"] = {ANNOTATION: '{"origin": "v7"}'}
    assert _denied(admission_review(admission(job, version="v2beta1"), BY_VERSION["v2beta1"])) \
        == f'metadata.annotations[{ANNOTATION}]: origin "v7" is not one of v2beta1, v1, v1alpha2'


@pytest.mark.parametrize(("body", "message"), [
    ("x", "the body must be a AdmissionReview object"),
    ({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"},
     "expected apiVersion admission.k8s.io/v1 kind AdmissionReview, got apiVersion "
     "'admission.k8s.io/v1beta1' kind 'AdmissionReview'"),
    (admission(V1_JOB, kind={"group": "kubeflow.org", "version": "v1", "kind": "TFJob"}),
     "request.kind: /validate-kubeflow-org-v1-mpijob validates kubeflow.org/v1 MPIJob, got "
     "{'group': 'kubeflow.org', 'version': 'v1', 'kind': 'TFJob'}"),
    (admission(V1_JOB, version="v2beta1"),
     "request.kind: /validate-kubeflow-org-v1-mpijob validates kubeflow.org/v1 MPIJob, got "
     "{'group': 'kubeflow.org', 'version': 'v2beta1', 'kind': 'MPIJob'}"),
    (admission(V1_JOB, operation="DELETE"),
     "request.operation: 'DELETE' is not validated here (only CREATE, UPDATE)"),
    (admission(None), "request.object: must be an object"),
    (admission(V1_JOB, operation="UPDATE"), "request.oldObject: must be an object for UPDATE"),
])
def test_a_malformed_admission_review_is_denied_with_the_problem(body: Any, message: str) -> None:
    response = admission_review(body, BY_VERSION["v1"])["response"]
    assert response["allowed"] is False
    assert response["status"] == {"code": 400, "reason": "BadRequest", "message": message}


def test_warnings_are_passed_on() -> None:
    webhook = ValidatingWebhook(
        name="w.example.org", path="/w", group="g", version="v1", resource="things", kind="Thing",
        validate=lambda obj, old, op: Verdict(warnings=["deprecated field"]))
    body = admission({}, kind={"group": "g", "version": "v1", "kind": "Thing"})
    assert admission_review(body, webhook)["response"] == {
        "uid": "a-1", "allowed": True, "warnings": ["deprecated field"]}


def test_validate_mpijob_never_raises() -> None:
    for obj in ({}, {"apiVersion": "kubeflow.org/v1"}, {"apiVersion": "kubeflow.org/v1",
                                                        "spec": 3, "metadata": {"name": 1}}):
        errors, warnings = validate_mpijob(obj, None)
        assert errors
        assert warnings == []


# -- registry -----------------------------------------------------------------------------------

def test_registration_rejects_duplicates() -> None:
    registry = WebhookRegistry()
    registry.add_validating(WEBHOOKS[0])
    with pytest.raises(ValueError, match="already registered"):
        registry.add_validating(WEBHOOKS[0])
    registry.add_conversion("mpijobs.kubeflow.org", "kubeflow.org", "MPIJob", convert)
    with pytest.raises(ValueError, match="already registered"):
        registry.add_conversion("x", "kubeflow.org", "MPIJob", convert)


def test_the_deployed_webhook_configuration_is_the_registrys() -> None:
    """deploy/base/webhook.yaml's ValidatingWebhookConfiguration lists exactly the registered
    webhooks (names, paths, rules) behind the Service, but an explicit kind's (TrainJob's:
    deploy/overlays/trainjob adds them)."""
    docs = list(yaml.safe_load_all((REPO / "deploy/base/webhook.yaml").read_text()))
    vwc = next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    service = next(d for d in docs if d["kind"] == "Service")
    served = default_registry([p for p in plugins() if not p.explicit])
    expected = served.validating_configuration(
        "mpi-operator", lambda path: {"service": {"name": service["metadata"]["name"],
                                                  "namespace": "mpi-operator", "path": path,
                                                  "port": 443}})
    assert json.loads(json.dumps(vwc)) == expected
