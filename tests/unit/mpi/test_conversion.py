"""MPIJob conversion (mpi_controller.mpi.conversion): each mapping as a table, the two example
manifests through the hub, partial objects, the origin annotation and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.mpi.conversion import (
    ANNOTATION,
    FIELD_PREFIX,
    HUB_DEFAULTS,
    ConversionError,
    conversion_record,
    convert,
    generation_of,
)

REPO = Path(__file__).resolve().parents[3]
TEMPLATE = {"spec": {"containers": [{"name": "m", "image": "i"}]}}


def job(version: str, spec: dict[str, Any] | None = None, *, status: Any = None,
        annotation: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": f"kubeflow.org/{version}", "kind": "MPIJob",
                           "metadata": {"name": "j", "namespace": "ns", **meta}}
    if annotation is not None:
        obj["metadata"].setdefault("annotations", {})[ANNOTATION] = json.dumps(
            annotation, sort_keys=True, separators=(",", ":"))
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


def record(obj: dict[str, Any]) -> dict[str, Any] | None:
    """What the conversion annotations hold (``None``: there are none)."""
    return conversion_record(obj) or None


ALL_UNSET = ["spec.slotsPerWorker", "spec.runLauncherAsWorker", "spec.sshAuthMountPath",
             "spec.launcherCreationPolicy", "spec.mpiImplementation"]


# -- v1 <-> v2beta1 -----------------------------------------------------------------------------

V1_TO_HUB = [
    pytest.param(
        {"slotsPerWorker": 2, "mpiReplicaSpecs": {"Worker": {"replicas": 2}}},
        {"slotsPerWorker": 2, "mpiReplicaSpecs": {"Worker": {"replicas": 2}}},
        {"origin": "v1", "unset": ALL_UNSET[1:]},
        id="shared fields stay; unset hub defaults are recorded"),
    pytest.param(
        {"cleanPodPolicy": "Running", "mainContainer": "mpi"},
        {},
        {"origin": "v1", "fields": {"spec": {"cleanPodPolicy": "Running", "mainContainer": "mpi"}},
         "unset": ALL_UNSET},
        id="top-level cleanPodPolicy and mainContainer kept in the annotation"),
    pytest.param(
        {"runPolicy": {"cleanPodPolicy": "All", "backoffLimit": 3, "suspend": True,
                       "managedBy": "kueue.x-k8s.io/multikueue",
                       "schedulingPolicy": {"queue": "q", "minAvailable": 2}}},
        {"runPolicy": {"cleanPodPolicy": "All", "backoffLimit": 3, "suspend": True,
                       "managedBy": "kueue.x-k8s.io/multikueue",
                       "schedulingPolicy": {"queue": "q", "minAvailable": 2}}},
        {"origin": "v1", "unset": ALL_UNSET},
        id="runPolicy is the same in both"),
    pytest.param(
        {"runPolicy": {}},
        {"runPolicy": {}},
        {"origin": "v1", "unset": [*ALL_UNSET, "spec.runPolicy.suspend"]},
        id="suspend recorded as unset only when runPolicy is there"),
]


@pytest.mark.parametrize(("v1_spec", "hub_spec", "hub_record"), V1_TO_HUB)
def test_v1_to_hub_and_back(v1_spec: dict[str, Any], hub_spec: dict[str, Any],
                            hub_record: dict[str, Any]) -> None:
    v1 = job("v1", v1_spec)
    hub = convert(v1, "v2beta1")
    assert hub["apiVersion"] == "kubeflow.org/v2beta1"
    assert hub["spec"] == hub_spec
    assert record(hub) == hub_record
    assert convert(hub, "v1") == v1


HUB_TO_V1 = [
    pytest.param(
        {"slotsPerWorker": 1, "sshAuthMountPath": "/home/mpiuser/.ssh",
         "mpiImplementation": "Intel", "launcherCreationPolicy": "WaitForWorkersReady",
         "runLauncherAsWorker": True,
         "runPolicy": {"suspend": False, "ttlSecondsAfterFinished": 9}},
        {"slotsPerWorker": 1, "runPolicy": {"suspend": False, "ttlSecondsAfterFinished": 9}},
        {"origin": "v2beta1", "fields": {"spec": {
            "sshAuthMountPath": "/home/mpiuser/.ssh", "mpiImplementation": "Intel",
            "launcherCreationPolicy": "WaitForWorkersReady", "runLauncherAsWorker": True}}},
        id="hub-only fields kept in the annotation"),
    pytest.param(
        {"sshAuthMountPath": "/root/.ssh", "mpiImplementation": "OpenMPI"},
        {},
        {"origin": "v2beta1", "fields": {"spec": {"sshAuthMountPath": "/root/.ssh",
                                                  "mpiImplementation": "OpenMPI"}}},
        id="a v2beta1 job keeps hub fields even at their defaults"),
]


@pytest.mark.parametrize(("hub_spec", "v1_spec", "v1_record"), HUB_TO_V1)
def test_hub_to_v1_and_back(hub_spec: dict[str, Any], v1_spec: dict[str, Any],
                            v1_record: dict[str, Any]) -> None:
    hub = job("v2beta1", hub_spec)
    v1 = convert(hub, "v1")
    assert v1["spec"] == v1_spec
    assert record(v1) == v1_record
    assert convert(v1, "v2beta1") == hub


def test_defaults_the_api_server_adds_on_read_do_not_show_in_the_v1_view() -> None:
    """A v1 job is stored without the hub's defaulted fields; the API server adds them when it
    reads the object from storage (v2beta1 schema defaults) before converting it to v1."""
    v1 = job("v1", {"mpiReplicaSpecs": {"Worker": {"replicas": 1}}, "runPolicy": {}})
    hub = convert(v1, "v2beta1")
    read = json.loads(json.dumps(hub))
    read["spec"].update(slotsPerWorker=1, runLauncherAsWorker=False, sshAuthMountPath="/root/.ssh",
                        launcherCreationPolicy="AtStartup", mpiImplementation="OpenMPI")
    read["spec"]["runPolicy"]["suspend"] = False
    assert convert(read, "v1") == v1
    assert convert(read, "v1alpha2") == convert(v1, "v1alpha2")


def test_a_defaulted_field_changed_later_through_v2beta1_shows_in_v1() -> None:
    hub = convert(job("v1", {"mpiReplicaSpecs": {}}), "v2beta1")
    hub["spec"]["slotsPerWorker"] = 4
    hub["spec"]["mpiImplementation"] = "MPICH"
    v1 = convert(hub, "v1")
    assert v1["spec"] == {"mpiReplicaSpecs": {}, "slotsPerWorker": 4}
    assert record(v1) == {"fields": {"spec": {"mpiImplementation": "MPICH"}}}


# -- v1alpha2 <-> v2beta1 -----------------------------------------------------------------------

def test_v1alpha2_fields_without_a_hub_place_are_kept() -> None:
    spec = {"slotsPerWorker": 2, "backoffLimit": 3, "activeDeadlineSeconds": 60,
            "cleanPodPolicy": "Running", "mainContainer": "tf",
            "runPolicy": {"backoffLimit": 5, "cleanPodPolicy": "All",
                          "schedulingPolicy": {"minAvailable": 3}},
            "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": TEMPLATE}}}
    a2 = job("v1alpha2", spec)
    hub = convert(a2, "v2beta1")
    assert hub["spec"] == {"slotsPerWorker": 2,
                           "runPolicy": {"backoffLimit": 5, "cleanPodPolicy": "All",
                                         "schedulingPolicy": {"minAvailable": 3}},
                           "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": TEMPLATE}}}
    assert record(hub) == {
        "origin": "v1alpha2",
        "fields": {"spec": {"backoffLimit": 3, "activeDeadlineSeconds": 60,
                            "cleanPodPolicy": "Running", "mainContainer": "tf"}},
        "unset": [*ALL_UNSET[1:], "spec.runPolicy.suspend"]}
    assert convert(hub, "v1alpha2") == a2


def test_hub_fields_v1alpha2_lacks_are_kept() -> None:
    hub = job("v2beta1", {"runPolicy": {"suspend": True, "managedBy": "m", "schedulingPolicy": {
        "minAvailable": 1, "queue": "q", "priorityClass": "p", "scheduleTimeoutSeconds": 5,
        "minResources": {"cpu": "1"}}}},
        status={"replicaStatuses": {"Worker": {"active": 2, "selector": "a=b"}},
                "conditions": [{"type": "Created", "status": "True"}]})
    a2 = convert(hub, "v1alpha2")
    assert a2["spec"] == {"runPolicy": {"schedulingPolicy": {"minAvailable": 1}}}
    assert a2["status"] == {"replicaStatuses": {"Worker": {"active": 2}},
                            "conditions": [{"type": "Created", "status": "True"}]}
    assert record(a2) == {"origin": "v2beta1", "fields": {
        "spec": {"runPolicy": {"suspend": True, "managedBy": "m", "schedulingPolicy": {
            "queue": "q", "priorityClass": "p", "scheduleTimeoutSeconds": 5,
            "minResources": {"cpu": "1"}}}},
        "status": {"replicaStatuses": {"Worker": {"selector": "a=b"}}}}}
    assert convert(a2, "v2beta1") == hub


def test_v1_and_v1alpha2_share_their_common_fields_through_the_hub() -> None:
    """mainContainer and the top-level cleanPodPolicy have no hub place but the same meaning in
    both spokes: a v1alpha2 job read as v1 shows them as fields, not in the annotation."""
    a2 = job("v1alpha2", {"cleanPodPolicy": "Running", "mainContainer": "tf", "backoffLimit": 2})
    v1 = convert(a2, "v1")
    assert v1["spec"] == {"cleanPodPolicy": "Running", "mainContainer": "tf"}
    assert record(v1) == {"origin": "v1alpha2", "fields": {"spec": {"backoffLimit": 2}}}
    assert convert(v1, "v1alpha2") == a2
    assert convert(convert(v1, "v2beta1"), "v1alpha2") == a2


# -- the example manifests ----------------------------------------------------------------------

@pytest.mark.parametrize(("path", "origin"), [("examples/v1/tensorflow-mnist-elastic.yaml", "v1"),
                                              ("examples/v1alpha2/tensorflow-benchmarks.yaml",
                                               "v1alpha2")])
def test_the_example_manifests_round_trip_through_every_version(path: str, origin: str) -> None:
    doc = yaml.safe_load((REPO / path).read_text())
    assert doc["apiVersion"] == f"kubeflow.org/{origin}"
    hub = convert(doc, "v2beta1")
    assert hub["spec"]["mpiReplicaSpecs"] == doc["spec"]["mpiReplicaSpecs"]
    assert hub["spec"]["slotsPerWorker"] == doc["spec"]["slotsPerWorker"]
    assert record(hub) == {"origin": origin,
                           "fields": {"spec": {"cleanPodPolicy": "Running"}},
                           "unset": ALL_UNSET[1:]}
    for version in ("v1", "v1alpha2", "v2beta1"):
        other = convert(doc, version)
        assert generation_of(other) == origin
        assert convert(other, origin) == doc


# -- partial objects, identity, metadata --------------------------------------------------------

@pytest.mark.parametrize("target", ["v1", "v1alpha2"])
def test_a_partial_object_gains_only_the_annotation(target: str) -> None:
    partial = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
               "metadata": {"name": "j"},
               "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 3}}}}
    out = convert(partial, target)
    assert out["spec"] == {"mpiReplicaSpecs": {"Worker": {"replicas": 3}}}
    assert "status" not in out
    assert record(out) == {"origin": "v2beta1"}
    assert convert(out, "v2beta1") == partial


def test_a_partial_spoke_object_without_spec_records_no_unset_fields() -> None:
    partial = {"apiVersion": "kubeflow.org/v1", "kind": "MPIJob",
               "metadata": {"labels": {"a": "b"}}}
    hub = convert(partial, "v2beta1")
    assert hub == {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                   "metadata": {"labels": {"a": "b"},
                                "annotations": {ANNOTATION: '{"origin":"v1"}'}}}
    assert convert(hub, "v1") == partial


def test_same_version_is_an_unchanged_copy() -> None:
    obj = job("v1", {"unknownField": 1}, annotation={"bogus": True})
    out = convert(obj, "v1")
    assert out == obj
    assert out is not obj
    assert out["metadata"] is not obj["metadata"]


def test_other_annotations_labels_and_metadata_are_kept() -> None:
    v1 = job("v1", {"slotsPerWorker": 1}, labels={"x": "y"}, uid="u", resourceVersion="7",
             annotations={"keep": "me"})
    hub = convert(v1, "v2beta1")
    assert hub["metadata"]["labels"] == {"x": "y"}
    assert hub["metadata"]["uid"] == "u"
    assert hub["metadata"]["annotations"]["keep"] == "me"
    assert convert(hub, "v1") == v1


def test_fields_no_version_has_are_dropped() -> None:
    v1 = job("v1", {"slotsPerWorker": 1, "bogus": 1}, status={"bogus": 2})
    v1["extra"] = 3
    hub = convert(v1, "v2beta1")
    assert hub["spec"] == {"slotsPerWorker": 1}
    assert hub["status"] == {}
    assert "extra" not in hub
    assert "fields" not in (record(hub) or {})


def test_the_input_is_not_changed() -> None:
    v1 = job("v1", {"cleanPodPolicy": "All", "mpiReplicaSpecs": {"Worker": {"template": TEMPLATE}}})
    snapshot = json.dumps(v1, sort_keys=True)
    hub = convert(v1, "v2beta1")
    hub["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"].clear()
    assert json.dumps(v1, sort_keys=True) == snapshot


# -- generation ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("obj", "generation"), [
    (job("v2beta1", {}), "v2beta1"),
    (job("v1", {}), "v1"),
    (job("v1alpha2", {}), "v1alpha2"),
    (job("v2beta1", {}, annotation={"origin": "v1"}), "v1"),
    (job("v1", {}, annotation={"origin": "v1alpha2"}), "v1alpha2"),
    (job("v2beta1", {}, annotation={"origin": "v9"}), "v2beta1"),
    (job("v1", {}, annotations={ANNOTATION: "{not json"}), "v1"),
    ({"apiVersion": "batch/v1"}, "v2beta1"),
    ({}, "v2beta1"),
])
def test_generation_of(obj: dict[str, Any], generation: str) -> None:
    assert generation_of(obj) == generation


# -- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("obj", "target", "message"), [
    ({"apiVersion": "kubeflow.org/v3", "kind": "MPIJob"}, "v1",
     'apiVersion "kubeflow.org/v3" is not an MPIJob version (kubeflow.org/v2beta1, '
     "kubeflow.org/v1, kubeflow.org/v1alpha2)"),
    ({"kind": "MPIJob"}, "v1", "apiVersion null is not an MPIJob version"),
    (job("v1", {}), "v2", 'version "v2" is not one of v2beta1, v1, v1alpha2'),
    ({"apiVersion": "kubeflow.org/v1", "metadata": "x"}, "v2beta1", "metadata: must be an object"),
    (job("v1", {}, annotations=["a"]), "v2beta1", "metadata.annotations: must be an object"),
    (job("v1", {}, annotations={ANNOTATION: "{x"}), "v2beta1",
     f"metadata.annotations[{ANNOTATION}]: not valid JSON"),
    (job("v1", {}, annotations={ANNOTATION: "[]"}), "v2beta1",
     f"metadata.annotations[{ANNOTATION}]: must be a JSON object"),
    (job("v1", {}, annotation={"origin": "v3"}), "v2beta1",
     f'metadata.annotations[{ANNOTATION}]: origin "v3" is not one of v2beta1, v1, v1alpha2'),
    (job("v1", {}, annotation={"fields": 1}), "v2beta1",
     f"metadata.annotations[{ANNOTATION}]: fields must be an object"),
    (job("v1", {}, annotation={"extra": 1}), "v2beta1",
     f'metadata.annotations[{ANNOTATION}]: unknown key "extra" (known: origin, fields, unset)'),
    (job("v1", {}, annotation={"unset": ["spec.slotsPerWorker"]}), "v2beta1",
     f"metadata.annotations[{ANNOTATION}]: unset is kept only in kubeflow.org/v2beta1 objects"),
    (job("v2beta1", {}, annotation={"unset": ["spec.x"]}), "v1",
     f"metadata.annotations[{ANNOTATION}]: unset must be a list of " + ", ".join(HUB_DEFAULTS)),
    (job("v2beta1", {}, annotations={f"{FIELD_PREFIX}spec.nope": "1"}), "v1",
     f"metadata.annotations[{FIELD_PREFIX}spec.nope]: spec.nope is not a field of any MPIJob "
     "version"),
    (job("v2beta1", {}, annotations={f"{FIELD_PREFIX}spec.mainContainer": "{x"}), "v1",
     f"metadata.annotations[{FIELD_PREFIX}spec.mainContainer]: not valid JSON"),
])
def test_errors_name_the_problem(obj: dict[str, Any], target: str, message: str) -> None:
    with pytest.raises(ConversionError) as err:
        convert(obj, target)
    assert str(err.value).startswith(message)


def test_hub_defaults_are_the_crds_v2beta1_schema_defaults() -> None:
    """HUB_DEFAULTS must list every default of the v2beta1 schema outside the pod template."""
    crd = yaml.safe_load((REPO / "deploy/crd/kubeflow.org_mpijobs.yaml").read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v2beta1")
    found: dict[str, object] = {}

    def walk(schema: dict[str, Any], path: str) -> None:
        if "default" in schema:
            found[path] = schema["default"]
        for name, sub in schema.get("properties", {}).items():
            if name != "template":
                walk(sub, f"{path}.{name}" if path else name)

    walk(version["schema"]["openAPIV3Schema"], "")
    assert found == dict(HUB_DEFAULTS)


# -- the annotations, one per field ---------------------------------------------------------


def test_each_field_set_aside_has_an_annotation_of_its_own() -> None:
    hub = convert(job("v1", {"cleanPodPolicy": "Running", "mainContainer": "mpi",
                             "runPolicy": {"schedulingPolicy": {"queue": "q"}}}), "v2beta1")
    assert hub["metadata"]["annotations"] == {
        f"{FIELD_PREFIX}spec.cleanPodPolicy": '"Running"',
        f"{FIELD_PREFIX}spec.mainContainer": '"mpi"',
        ANNOTATION: json.dumps({"origin": "v1", "unset": [*ALL_UNSET, "spec.runPolicy.suspend"]},
                               separators=(",", ":")),
    }
    alpha = convert(job("v2beta1", {"runPolicy": {"suspend": True}}, status={
        "replicaStatuses": {"Worker": {"active": 1, "selector": "a=b"},
                            "Odd.type": {"labelSelector": {"matchLabels": {"a": "b"}}}}}),
        "v1alpha2")
    # a map key that cannot be part of an annotation name: kept in the record's fields
    assert alpha["metadata"]["annotations"] == {
        f"{FIELD_PREFIX}spec.runPolicy.suspend": "true",
        f"{FIELD_PREFIX}status.replicaStatuses.Worker.selector": '"a=b"',
        ANNOTATION: json.dumps({"fields": {"status": {"replicaStatuses": {"Odd.type": {
            "labelSelector": {"matchLabels": {"a": "b"}}}}}}, "origin": "v2beta1"},
            separators=(",", ":")),
    }
    assert alpha["status"] == {"replicaStatuses": {"Worker": {"active": 1}, "Odd.type": {}}}
    assert convert(alpha, "v2beta1") == job("v2beta1", {"runPolicy": {"suspend": True}}, status={
        "replicaStatuses": {"Worker": {"active": 1, "selector": "a=b"},
                            "Odd.type": {"labelSelector": {"matchLabels": {"a": "b"}}}}})


def test_a_field_an_applier_drops_is_a_field_annotation_that_goes() -> None:
    """Server-side apply prunes by field sets, converted to each manager's version: in
    ``v2beta1`` a ``v1`` field dropped from the applied object must be a whole field that
    disappears, not a change inside one annotation's value (which the API server keeps)."""
    applied = {"cleanPodPolicy": "Running", "mainContainer": "mpi", "slotsPerWorker": 1}
    before = convert(job("v1", applied), "v2beta1")["metadata"]["annotations"]
    dropped = {k: v for k, v in applied.items() if k != "mainContainer"}
    after = convert(job("v1", dropped), "v2beta1")["metadata"]["annotations"]
    assert set(before) - set(after) == {f"{FIELD_PREFIX}spec.mainContainer"}
    assert {k: v for k, v in before.items() if k in after} == after


def test_objects_written_with_every_field_in_one_annotation_still_convert() -> None:
    """Stored objects of earlier releases keep their fields in the record's ``fields``."""
    old = job("v2beta1", {"slotsPerWorker": 1}, annotation={
        "origin": "v1", "fields": {"spec": {"mainContainer": "mpi", "cleanPodPolicy": "All"}}})
    v1 = convert(old, "v1")
    assert v1["spec"] == {"slotsPerWorker": 1, "mainContainer": "mpi", "cleanPodPolicy": "All"}
    assert "annotations" not in v1["metadata"]
    assert generation_of(old) == "v1"
    assert convert(v1, "v2beta1")["metadata"]["annotations"] == {
        f"{FIELD_PREFIX}spec.cleanPodPolicy": '"All"',
        f"{FIELD_PREFIX}spec.mainContainer": '"mpi"',
        ANNOTATION: json.dumps({"origin": "v1", "unset": ALL_UNSET[1:]}, separators=(",", ":")),
    }
