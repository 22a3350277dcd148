"""conformance.real_node: which of upstream's specs run on the real node, how they are
reported when it cannot serve, and the kustomizations that deploy each operator there."""

import pytest

from conformance.real_node import (
    REAL_SPECS,
    go_dev_kustomization,
    go_kustomization,
    ours_kustomization,
    real_specs,
    running_addons,
    skipped,
    suite_env,
)

SPECS = [
    "MPIJob with OpenMPI implementation when has malformed command should fail",
    "MPIJob with OpenMPI implementation when running as root should succeed",
    "MPIJob with scheduler-plugins should create pending pods",
    "MPIJob with volcano-scheduler should create pending pods",
    "MPIJob with custom cluster-domain when running as root should succeed",
    "MPIJob with Intel MPI implementation when running as root should succeed",
]


def test_the_specs_needing_real_pods_or_the_deployment_run_there() -> None:
    assert real_specs(SPECS) == [SPECS[0], SPECS[2], SPECS[3], SPECS[4]]
    assert len(REAL_SPECS) == 4


def test_without_a_real_node_they_are_skipped_with_the_reason() -> None:
    [result] = skipped([SPECS[0]], "the real node is not built on this machine yet (kubelet)")
    assert (result.text, result.outcome, result.seconds, result.reason) == (
        SPECS[0], "skipped", 0.0, "the real node is not built on this machine yet (kubelet)")


def test_running_addons_needs_every_process_up() -> None:
    status = ("cluster up at https://127.0.0.1:1\n"
              "addon volcano v1.10.0: volcano-scheduler (pid 12)\n"
              "addon scheduler-plugins v0.32.7: scheduler-plugins-scheduler (pid 13) "
              "scheduler-plugins-controller (stopped)\n"
              "addon kueue v0.17.0: kueue-manager (stopped)\n")
    assert running_addons(status) == {"volcano"}


def test_the_suite_is_told_the_images_and_schedulers_already_there() -> None:
    env = suite_env({"MPI_PI_OPENMPI_IMAGE": "localhost/pi:openmpi",
                     "MPI_PI_MPICH_IMAGE": "localhost/pi:mpich", "OTHER": "x"})
    assert env == {"TEST_OPENMPI_IMAGE": "localhost/pi:openmpi",
                   "TEST_MPICH_IMAGE": "localhost/pi:mpich",
                   "USE_EXISTING_SCHEDULER_PLUGINS": "true",
                   "USE_EXISTING_VOLCANO_SCHEDULER": "true"}


def test_ours_is_the_real_node_overlay_with_the_image_built_here() -> None:
    assert ours_kustomization("../../e2e/real/deploy", "localhost/controller:abc123") == (
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources: [../../e2e/real/deploy]\n"
        "images: [{name: mpi-controller, newName: localhost/controller, newTag: abc123}]\n")


TEMPLATE = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../../base
images:
- name: mpioperator/mpi-operator
  newName: %IMAGE_NAME%
  newTag: %IMAGE_TAG%
"""


def test_the_go_operator_is_upstreams_dev_overlay_filled_as_its_makefile_does() -> None:
    text = go_dev_kustomization(TEMPLATE, "../../mod/manifests/base", "localhost/base:7")
    assert "- ../../mod/manifests/base\n" in text
    assert "newName: localhost/base\n  newTag: 7\n" in text
    with pytest.raises(ValueError, match=r"no longer names \.\./\.\./base"):
        go_dev_kustomization(TEMPLATE.replace("../../base", "../base"), "x", "a:b")


def test_the_go_operator_runs_the_binary_built_here_on_the_real_node() -> None:
    text = go_kustomization("dev", binary="/cache/bin/mpi-operator", label="example.io/real")
    assert text.startswith("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                           "resources: [dev]\npatches:\n- target: {kind: Deployment, "
                           "name: mpi-operator}\n")
    assert '      value: ["/opt/mpi-operator"]\n' in text
    assert '"hostPath": {"path": "/cache/bin/mpi-operator", "type": "File"}' in text
    assert '      value: {"example.io/real": "true"}\n' in text
    assert '"key": "example.io/real", "operator": "Exists", "effect": "NoSchedule"' in text
