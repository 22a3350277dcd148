"""The TFJob and PyTorchJob validating webhooks (their plugins' admissions, served by the registry)
AdmissionReviews: training-operator v1.9's names, paths, messages (pkg/webhooks/tensorflow and
pkg/webhooks/pytorch) and PyTorchJob's deprecation warning; updates checked against the old
job; what the registry serves and deploy/ lists."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.webhook.registry import default_registry
from mpi_controller.webhook.reviews import admission_review

REPO = Path(__file__).resolve().parents[3]
TF_JOB = yaml.safe_load((REPO / "examples/tensorflow-dist-mnist.yaml").read_text())
PT_JOB = yaml.safe_load((REPO / "examples/pytorch-simple.yaml").read_text())
DEPRECATED = "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"
DNS1035 = ("should match: a DNS-1035 label must consist of lower case alphanumeric characters "
           "or '-', start with an alphabetic character, and end with an alphanumeric character "
           "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
           "'[a-z]([-a-z0-9]*[a-z0-9])?')")


def review(obj: Any, kind: str, *, operation: str = "CREATE", old: Any = None) -> Any:
    plural = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs"}.get(kind, "things")
    request: dict[str, Any] = {
        "uid": "a-1", "operation": operation, "object": obj,
        "kind": {"group": "kubeflow.org", "version": "v1", "kind": kind},
        "resource": {"group": "kubeflow.org", "version": "v1", "resource": plural}}
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def tf(**changes: Any) -> Any:
    return _changed(TF_JOB, changes)


def pt(**changes: Any) -> Any:
    return _changed(PT_JOB, changes)


def _changed(job: Any, changes: dict[str, Any]) -> Any:
    out = copy.deepcopy(job)
    for path, value in changes.items():  # "spec__runPolicy" -> out["spec"]["runPolicy"]
        *parents, last = path.split("__")
        target = out
        for key in parents:
            target = target[key]
        if value is None:
            del target[last]
        else:
            target[last] = value
    return out


SERVED = {w.path: w for w in default_registry().validating}
TFJOB_WEBHOOK = SERVED["/validate-kubeflow-org-v1-tfjob"]
PYTORCHJOB_WEBHOOK = SERVED["/validate-kubeflow-org-v1-pytorchjob"]
WEBHOOKS = (TFJOB_WEBHOOK, PYTORCHJOB_WEBHOOK)


def denied(answer: Any) -> tuple[str, list[str]]:
    """The refusal's message and warnings (and that it is a 403 Forbidden)."""
    response = answer["response"]
    assert response["uid"] == "a-1"
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert response["status"]["reason"] == "Forbidden"
    return response["status"]["message"], response.get("warnings", [])


def test_upstreams_names_paths_and_failure_policy() -> None:
    assert [(w.name, w.path, w.resource, w.kind, w.failure_policy) for w in WEBHOOKS] == [
        ("validator.tfjob.training-operator.kubeflow.org", "/validate-kubeflow-org-v1-tfjob",
         "tfjobs", "TFJob", "Fail"),
        ("validator.pytorchjob.training-operator.kubeflow.org",
         "/validate-kubeflow-org-v1-pytorchjob", "pytorchjobs", "PyTorchJob", "Fail")]
    entry = PYTORCHJOB_WEBHOOK.configuration_entry({"url": "https://x/p"})
    assert entry["failurePolicy"] == "Fail"
    assert entry["rules"] == [{"apiGroups": ["kubeflow.org"], "apiVersions": ["v1"],
                               "operations": ["CREATE", "UPDATE"],
                               "resources": ["pytorchjobs"], "scope": "Namespaced"}]


def test_the_documents_jobs_are_admitted() -> None:
    for job, webhook in ((TF_JOB, TFJOB_WEBHOOK), (PT_JOB, PYTORCHJOB_WEBHOOK)):
        assert admission_review(review(job, webhook.kind), webhook) == {
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "a-1", "allowed": True}}


def test_tfjob_chief_and_master_refused() -> None:
    master = copy.deepcopy(TF_JOB["spec"]["tfReplicaSpecs"]["Worker"])
    job = tf(spec__tfReplicaSpecs__Chief=master, spec__tfReplicaSpecs__Master=master)
    assert denied(admission_review(review(job, "TFJob"), TFJOB_WEBHOOK)) == (
        "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role", [])


def test_tfjob_errors_are_aggregated_in_upstreams_order() -> None:
    job = tf(spec__tfReplicaSpecs__Worker__template__spec__containers=[
        {"name": "main", "image": "x"}, {"name": "helper"}])
    message, _ = denied(admission_review(review(job, "TFJob"), TFJOB_WEBHOOK))
    assert message == (
        "[spec.tfReplicaSpecs[Worker].template.spec.containers[1].image: Required value: must "
        "be required, spec.tfReplicaSpecs[Worker].template.spec.containers: Required value: "
        "must have at least one container with name tensorflow]")


def test_the_job_is_judged_as_submitted_before_defaults() -> None:
    """A Master without replicas is refused (upstream's webhook sees no default of 1), while
    the controller runs such a job as 1 (docs/training-kinds.md, PyTorchJob differences)."""
    job = pt(spec__pytorchReplicaSpecs__Master__replicas=None)
    assert denied(admission_review(review(job, "PyTorchJob"), PYTORCHJOB_WEBHOOK)) == (
        "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1", [])


@pytest.mark.parametrize(("changes", "message"), [
    ({"spec__pytorchReplicaSpecs__Worker__replicas": 0},
     "spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1"),
    ({"spec__pytorchReplicaSpecs__Launcher": copy.deepcopy(
        PT_JOB["spec"]["pytorchReplicaSpecs"]["Worker"])},
     'spec.pytorchReplicaSpecs[Launcher]: Unsupported value: "Launcher": supported values: '
     '"Master", "Worker"'),
    ({"spec__pytorchReplicaSpecs__Worker": None, "spec__elasticPolicy": {"minReplicas": 1}},
     "spec.pytorchReplicaSpecs[Worker]: Required value: must be configured if elastic policy "
     "is used"),
    ({"metadata__name": "pytorch.simple"}, f'metadata.name: Invalid value: "pytorch.simple": '
                                           f"{DNS1035}"),
    ({"spec__runPolicy": {"managedBy": "example.com/other"}},
     'spec.runPolicy.managedBy: Unsupported value: "example.com/other": supported values: '
     '"kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"'),
])
def test_pytorchjob_refusals_name_the_field(changes: dict[str, Any], message: str) -> None:
    assert denied(admission_review(review(pt(**changes), "PyTorchJob"), PYTORCHJOB_WEBHOOK)) \
        == (message, [])


def test_the_deprecated_nproc_per_node_is_a_warning() -> None:
    job = pt(spec__elasticPolicy={"nProcPerNode": 2})
    assert admission_review(review(job, "PyTorchJob"), PYTORCHJOB_WEBHOOK)["response"] == {
        "uid": "a-1", "allowed": True, "warnings": [DEPRECATED]}


def test_a_refusal_carries_the_warning_too() -> None:
    job = pt(spec__elasticPolicy={"nProcPerNode": 2}, spec__nprocPerNode="2")
    assert denied(admission_review(review(job, "PyTorchJob"), PYTORCHJOB_WEBHOOK)) == (
        "spec.elasticPolicy.nProcPerNode: Forbidden: must not be used with spec.nprocPerNode",
        [DEPRECATED])


@pytest.mark.parametrize(("job", "webhook"), [(TF_JOB, TFJOB_WEBHOOK),
                                             (PT_JOB, PYTORCHJOB_WEBHOOK)])
def test_managed_by_cannot_change_on_update(job: Any, webhook: Any) -> None:
    """Upstream's PyTorchJob webhook compares the new job with itself (its check never fires);
    both kinds compare with the old job here."""
    changed = _changed(job, {"spec__runPolicy": {"managedBy": "kueue.x-k8s.io/multikueue"}})
    answer = admission_review(review(changed, webhook.kind, operation="UPDATE", old=job),
                              webhook)
    assert denied(answer) == ('spec.runPolicy.managedBy: Invalid value: '
                              '"kueue.x-k8s.io/multikueue": field is immutable', [])
    same = admission_review(review(changed, webhook.kind, operation="UPDATE", old=changed),
                            webhook)
    assert same["response"] == {"uid": "a-1", "allowed": True}


def test_an_update_that_leaves_the_spec_alone_is_not_judged_again() -> None:
    """A job admitted before the webhook existed can still get labels and finalizers; a spec
    change is judged."""
    bad = pt(spec__pytorchReplicaSpecs__Master__replicas=2)
    labelled = _changed(bad, {"metadata__labels": {"team": "a"}})
    answer = admission_review(review(labelled, "PyTorchJob", operation="UPDATE", old=bad),
                              PYTORCHJOB_WEBHOOK)
    assert answer["response"] == {"uid": "a-1", "allowed": True}
    scaled = _changed(labelled, {"spec__pytorchReplicaSpecs__Worker__replicas": 3})
    assert denied(admission_review(review(scaled, "PyTorchJob", operation="UPDATE", old=bad),
                                   PYTORCHJOB_WEBHOOK)) == (
        "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1", [])
    warned = _changed(labelled, {"spec__elasticPolicy": {"nProcPerNode": 2}})
    relabelled = _changed(warned, {"metadata__labels": {"team": "b"}})
    answer = admission_review(review(relabelled, "PyTorchJob", operation="UPDATE", old=warned),
                              PYTORCHJOB_WEBHOOK)
    assert answer["response"] == {"uid": "a-1", "allowed": True, "warnings": [DEPRECATED]}


def test_a_review_of_another_kind_is_a_bad_request() -> None:
    response = admission_review(review(PT_JOB, "PyTorchJob"), TFJOB_WEBHOOK)["response"]
    assert response == {"uid": "a-1", "allowed": False, "status": {
        "code": 400, "reason": "BadRequest",
        "message": "request.kind: /validate-kubeflow-org-v1-tfjob validates kubeflow.org/v1 "
                   "TFJob, got {'group': 'kubeflow.org', 'version': 'v1', "
                   "'kind': 'PyTorchJob'}"}}


@pytest.mark.parametrize("obj", [
    {}, {"spec": 3, "metadata": {"name": 1}}, {"spec": {"pytorchReplicaSpecs": {"Worker": 3}}},
    {"spec": {"pytorchReplicaSpecs": [], "tfReplicaSpecs": "x", "elasticPolicy": 5,
              "runPolicy": "x"}},
    {"metadata": {"name": "a"}, "spec": {
        "pytorchReplicaSpecs": {"Worker": {"replicas": "x", "template": {"spec": {
            "containers": [3, {"name": None}]}}}},
        "tfReplicaSpecs": {"Worker": {"template": []}}}},
])
def test_malformed_jobs_are_refused_never_raised(obj: Any) -> None:
    for webhook in WEBHOOKS:
        for operation, old in (("CREATE", None), ("UPDATE", {"spec": 1})):
            message, _ = denied(admission_review(
                review(obj, webhook.kind, operation=operation, old=old), webhook))
            assert message
