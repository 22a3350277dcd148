"""conformance.kinds and the per-kind parts of the runner (pure): flag spelling, object paths
of steps, the reference operator's schemes."""

from typing import Any

import pytest

from conformance.corpus import Group
from conformance.differential import object_path, resources_of
from conformance.kinds import (
    HPA,
    KINDS,
    LAUNCHER_RBAC,
    MPIJOB_V1,
    MPIJOB_V1ALPHA2,
    MPIJOB_V2BETA1,
    POD_GROUPS,
    PYTORCHJOB_V1,
    STATEFULSETS,
    TFJOB_V1,
    crd_as_v1,
)
from conformance.kube import Recorder
from conformance.training_operator import schemes_of


def test_ours_gets_its_own_spelling_of_the_reference_flags() -> None:
    flags = ["--enable-scheme", "tfjob", "--controller-threads", "4", "--controller-threads=2",
             "--kube-api-qps", "50"]
    assert TFJOB_V1.ours_flags(flags) == ["--enable-scheme", "tfjob", "--threadiness", "4",
                                          "--threadiness=2", "--kube-api-qps", "50"]
    assert MPIJOB_V2BETA1.ours_flags(flags) == flags


def test_training_operator_kind_names_its_files_and_readme_section() -> None:
    assert KINDS["tfjob-v1"] is TFJOB_V1
    assert TFJOB_V1.crds["ours"]().name == "kubeflow.org_tfjobs.yaml"
    assert TFJOB_V1.crds["ours"]().exists()
    assert TFJOB_V1.corpus.name == "tfjob-v1"
    assert TFJOB_V1.corpus.is_dir()
    assert TFJOB_V1.readme_sections == ("Differences from training-operator v1.9.2 (TFJob)",)
    assert TFJOB_V1.resource().path("ns") == "/apis/kubeflow.org/v1/namespaces/ns/tfjobs"


def test_pytorchjob_records_its_hpa_and_names_both_readme_sections() -> None:
    assert KINDS["pytorchjob-v1"] is PYTORCHJOB_V1
    assert PYTORCHJOB_V1.crds["ours"]().name == "kubeflow.org_pytorchjobs.yaml"
    assert PYTORCHJOB_V1.crds["ours"]().exists()
    assert PYTORCHJOB_V1.readme_sections == (
        "Differences from training-operator v1.9.2 (PyTorchJob)",
        "Differences from training-operator v1.9.2 (TFJob)")
    assert HPA in PYTORCHJOB_V1.children
    assert HPA not in TFJOB_V1.children
    assert PYTORCHJOB_V1.ours_flags(["--controller-threads", "4"]) == ["--threadiness", "4"]
    scale = object_path("pytorchjobs/{name}/scale", "job", "ns",
                        resources_of(PYTORCHJOB_V1, Group("default", [], [])))
    assert scale == "/apis/kubeflow.org/v1/namespaces/ns/pytorchjobs/job/scale"


def test_the_hpa_controllers_events_are_not_activity() -> None:
    """The HPA controller's metric failures repeat every sync: they are recorded, but the
    namespace counts as quiet."""
    recorder = Recorder(None, "ns", [])  # type: ignore[arg-type]
    hpa_event = {"kind": "Event", "metadata": {"name": "job.1"},
                 "source": {"component": "horizontal-pod-autoscaler"},
                 "reason": "FailedGetResourceMetric"}
    recorder.last_event -= 10
    recorder._record("Event", "ADDED", hpa_event)
    assert recorder.quiet_for() >= 10
    assert ("Event", "job.1") in recorder.snapshot()
    ours = {"kind": "Event", "metadata": {"name": "job.2"},
            "source": {"component": "pytorchjob-controller"}, "reason": "SuccessfulCreatePod"}
    recorder._record("Event", "ADDED", ours)
    assert recorder.quiet_for() < 10
    hpa = {"kind": "HorizontalPodAutoscaler", "metadata": {"name": "job"}}
    assert not recorder.is_background(hpa)


def test_step_objects_resolve_among_the_recorded_resources() -> None:
    volcano = resources_of(TFJOB_V1, Group("volcano", [], ["volcano-podgroups"]))
    assert object_path("podgroups/{name}/status", "job", "ns", volcano) == (
        "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/job/status")
    assert object_path("pods/{name}-worker-0", "job", "ns", volcano) == (
        "/api/v1/namespaces/ns/pods/job-worker-0")
    default = resources_of(TFJOB_V1, Group("default", [], []))
    with pytest.raises(ValueError, match="podgroups is not a resource of this run"):
        object_path("podgroups/{name}", "job", "ns", default)
    assert POD_GROUPS["volcano-podgroups"] in volcano


def test_schemes_of_reads_both_flag_spellings() -> None:
    assert schemes_of(["--enable-scheme", "TFJob", "--enable-scheme=pytorchjob",
                       "-enable-scheme", "jaxjob", "--namespace", "x"]) == [
        "tfjob", "pytorchjob", "jaxjob"]
    assert schemes_of(["--namespace", "x"]) == []


def test_mpijob_v1_is_served_through_conversion_from_a_crd_of_the_same_name() -> None:
    assert KINDS["mpijob-v1"] is MPIJOB_V1
    assert MPIJOB_V1.conversion
    assert not TFJOB_V1.conversion
    assert not MPIJOB_V2BETA1.conversion
    assert MPIJOB_V1.version == "v1"
    assert MPIJOB_V1.reference == "training-operator"
    assert MPIJOB_V1.crds["ours"]() == MPIJOB_V2BETA1.crds["ours"]()
    assert MPIJOB_V1.crds["ours"]().exists()
    assert MPIJOB_V1.resource().path("ns") == "/apis/kubeflow.org/v1/namespaces/ns/mpijobs"
    assert MPIJOB_V1.readme_sections == (
        "Differences from training-operator v1.9.2 (MPIJob v1)",
        "Differences from training-operator v1.9.2 (TFJob)")
    assert [r.kind for r in LAUNCHER_RBAC] == ["ServiceAccount", "Role", "RoleBinding"]
    assert all(r in MPIJOB_V1.children for r in LAUNCHER_RBAC)
    assert MPIJOB_V1.ours_flags(["--controller-threads", "4"]) == ["--threadiness", "4"]
    role = object_path("roles/{name}-launcher", "job", "ns",
                       resources_of(MPIJOB_V1, Group("default", [], [])))
    assert role == "/apis/rbac.authorization.k8s.io/v1/namespaces/ns/roles/job-launcher"


def test_mpijob_v1alpha2_runs_against_mpi_operator_v0_2_through_conversion() -> None:
    assert KINDS["mpijob-v1alpha2"] is MPIJOB_V1ALPHA2
    assert MPIJOB_V1ALPHA2.conversion
    assert MPIJOB_V1ALPHA2.version == "v1alpha2"
    assert MPIJOB_V1ALPHA2.reference == "mpi-operator-v0.2"
    assert MPIJOB_V1ALPHA2.crds["ours"]() == MPIJOB_V2BETA1.crds["ours"]()
    assert MPIJOB_V1ALPHA2.corpus.is_dir()
    assert MPIJOB_V1ALPHA2.readme_sections == (
        "Differences from mpi-operator v0.2.3 (MPIJob v1alpha2)",)
    assert STATEFULSETS in MPIJOB_V1ALPHA2.children
    assert all(r in MPIJOB_V1ALPHA2.children for r in LAUNCHER_RBAC)
    assert MPIJOB_V1ALPHA2.ours_flags(["--threadiness", "4"]) == ["--threadiness", "4"]
    sts = object_path("statefulsets/{name}-worker", "job", "ns",
                      resources_of(MPIJOB_V1ALPHA2, Group("default", [], [])))
    assert sts == "/apis/apps/v1/namespaces/ns/statefulsets/job-worker"


# mpi-operator v0.2.3's deploy/v1alpha2/mpi-operator.yaml CRD, as written there
V1BETA1_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "mpijobs.kubeflow.org"},
    "spec": {
        "group": "kubeflow.org", "version": "v1alpha2", "scope": "Namespaced",
        "names": {"plural": "mpijobs", "singular": "mpijob", "kind": "MPIJob",
                  "shortNames": ["mj", "mpij"]},
        "subresources": {"status": {}},
        "validation": {"openAPIV3Schema": {"properties": {"spec": {"properties": {
            "slotsPerWorker": {"type": "integer", "minimum": 1},
            "mpiReplicaSpecs": {"properties": {
                "Launcher": {"properties": {"replicas": {
                    "type": "integer", "minimum": 1, "maximum": 1}}},
                "Worker": {"properties": {"replicas": {"type": "integer", "minimum": 1}}},
            }}}}}}},
    },
}


def test_a_v1beta1_crd_is_installed_as_the_api_server_converted_it() -> None:
    keep = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert crd_as_v1(V1BETA1_CRD) == {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "mpijobs.kubeflow.org"},
        "spec": {
            "group": "kubeflow.org", "scope": "Namespaced",
            "names": {"plural": "mpijobs", "singular": "mpijob", "kind": "MPIJob",
                      "shortNames": ["mj", "mpij"], "listKind": "MPIJobList"},
            "versions": [{
                "name": "v1alpha2", "served": True, "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {**keep, "properties": {"spec": {
                    **keep, "properties": {
                        "slotsPerWorker": {"type": "integer", "minimum": 1},
                        "mpiReplicaSpecs": {**keep, "properties": {
                            "Launcher": {**keep, "properties": {"replicas": {
                                "type": "integer", "minimum": 1, "maximum": 1}}},
                            "Worker": {**keep, "properties": {"replicas": {
                                "type": "integer", "minimum": 1}}},
                        }}}}}}},
            }],
        },
    }
    assert "version" in V1BETA1_CRD["spec"]  # the input is left as it was


def test_printer_columns_move_into_the_version_and_v1_crds_pass_through() -> None:
    crd = {**V1BETA1_CRD, "spec": {**V1BETA1_CRD["spec"], "additionalPrinterColumns": [
        {"name": "Age", "type": "date", "JSONPath": ".metadata.creationTimestamp"}]}}
    (version,) = crd_as_v1(crd)["spec"]["versions"]
    assert version["additionalPrinterColumns"] == [
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    ours = {"apiVersion": "apiextensions.k8s.io/v1", "spec": {"versions": []}}
    assert crd_as_v1(ours) is ours


def test_every_registered_training_kind_is_compared() -> None:
    """A kubeflow.org/v1 kind of the registry is a differential kind by its plugin alone: the
    corpus directory named after its scheme, the replica specs field of its hooks, its own
    differences section in docs/ and the TFJob one (the engine's rows)."""
    assert [k for k in KINDS if k not in ("mpijob-v2beta1", "mpijob-v1", "mpijob-v1alpha2",
                                          "trainjob-v1alpha1")] == [
        "tfjob-v1", "pytorchjob-v1", "xgboostjob-v1", "paddlejob-v1", "jaxjob-v1"]
    xgb = KINDS["xgboostjob-v1"]
    assert (xgb.kind, xgb.plural, xgb.replica_specs, xgb.reference) == (
        "XGBoostJob", "xgboostjobs", "xgbReplicaSpecs", "training-operator")
    assert xgb.corpus == TFJOB_V1.corpus.parent / "xgboostjob-v1"
    assert xgb.readme_sections == ("Differences from training-operator v1.9.2 (XGBoostJob)",
                                   "Differences from training-operator v1.9.2 (TFJob)")
    assert xgb.children == TFJOB_V1.children
