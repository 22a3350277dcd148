"""The JobSet a TrainJob becomes (Trainer v2.3.0 ``pkg/runtime/core/trainingruntime.go``
``newRuntimeInfo``, ``plugins/torch/torch.go`` ``EnforceMLPolicy``, ``plugins/jobset/jobset.go``
``Build`` and ``builder.go``), built with :func:`mpi_controller.trainjob.build.desired_jobset`
on the ``torch-distributed`` runtime, whose shape is Trainer's documented one."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import ec

from mpi_controller.trainjob.apply import upsert_ports
from mpi_controller.trainjob.build import UnsupportedPolicy, desired_jobset, desired_objects
from mpi_controller.trainjob.mpi import ssh_auth_secret

TORCH = {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [{
    "name": "node",
    "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step":
                                         "trainer"}},
                 "spec": {"template": {"spec": {"containers": [
                     {"name": "node", "image": "pytorch/pytorch:2.13.0"}]}}}}}]}}}
RANK = {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
    "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}


def trainjob(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "pi", "namespace": "ns", "uid": "u-1"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "suspend": False, **spec}}


def node_job(jobset: dict[str, Any]) -> dict[str, Any]:
    job: dict[str, Any] = jobset["spec"]["replicatedJobs"][0]
    return job


def test_a_two_node_torch_trainjob() -> None:
    """numNodes 2 and 3 CPUs per node: parallelism and completions 2, one replica, the image
    and command of the TrainJob, its resources, PET_NPROC_PER_NODE 3 (the CPUs), the master
    at <name>-node-0-0.<name>:29500, the container port 29500, the owner reference."""
    job = trainjob(trainer={"numNodes": 2, "image": "busybox", "command": ["torchrun", "t.py"],
                            "env": [{"name": "EPOCHS", "value": "1"}],
                            "resourcesPerNode": {"requests": {"cpu": "3"}}})
    assert desired_jobset(job, TORCH) == {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
        "metadata": {"name": "pi", "namespace": "ns", "ownerReferences": [{
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "pi",
            "uid": "u-1", "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"suspend": False, "replicatedJobs": [{
            "name": "node", "replicas": 1,
            "template": {
                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step":
                                        "trainer"}},
                "spec": {"parallelism": 2, "completions": 2, "template": {"spec": {
                    "containers": [{
                        "name": "node", "image": "busybox", "command": ["torchrun", "t.py"],
                        "resources": {"requests": {"cpu": "3"}},
                        "env": [{"name": "EPOCHS", "value": "1"},
                                {"name": "PET_NNODES", "value": "2"},
                                {"name": "PET_NPROC_PER_NODE", "value": "3"}, RANK,
                                {"name": "PET_MASTER_ADDR", "value": "pi-node-0-0.pi"},
                                {"name": "PET_MASTER_PORT", "value": "29500"}],
                        "ports": [{"containerPort": 29500}]}]}}}}}]}}


def test_without_a_trainer_the_policy_sets_no_environment() -> None:
    """Upstream injects PET_* only when the TrainJob has a ``trainer``: the runtime's numNodes
    still sets the count."""
    jobset = desired_jobset(trainjob(), TORCH)
    container = node_job(jobset)["template"]["spec"]["template"]["spec"]["containers"][0]
    assert container == {"name": "node", "image": "pytorch/pytorch:2.13.0"}
    assert node_job(jobset)["template"]["spec"]["parallelism"] == 1


@pytest.mark.parametrize(("trainer", "nproc"), [
    ({"numProcPerNode": 4}, "4"),
    ({"resourcesPerNode": {"limits": {"nvidia.com/gpu": "2"}}}, "auto"),
    ({"resourcesPerNode": {"limits": {"cpu": "1500m"}}}, "2"),
    ({"image": "x"}, "1"),
])
def test_procs_per_node(trainer: dict[str, Any], nproc: str) -> None:
    """numProcPerNode wins; else ``auto`` with GPUs; else the CPUs (request, else limit,
    rounded up; at least 1)."""
    container = node_job(desired_jobset(trainjob(trainer=trainer), TORCH))["template"]["spec"][
        "template"]["spec"]["containers"][0]
    assert {"name": "PET_NPROC_PER_NODE", "value": nproc} in container["env"]


def test_the_runtime_resources_merge_key_by_key() -> None:
    runtime = copy.deepcopy(TORCH)
    node = runtime["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"][
        "spec"]["containers"][0]
    node["resources"] = {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "4"}}
    job = trainjob(trainer={"resourcesPerNode": {"requests": {"cpu": "8"}}})
    container = node_job(desired_jobset(job, runtime))["template"]["spec"]["template"]["spec"][
        "containers"][0]
    assert container["resources"] == {"requests": {"cpu": "8", "memory": "1Gi"},
                                      "limits": {"cpu": "4"}}
    assert {"name": "PET_NPROC_PER_NODE", "value": "8"} in container["env"]


def test_suspend_labels_and_annotations_of_the_template_and_patches() -> None:
    runtime = copy.deepcopy(TORCH)
    runtime["template"]["metadata"] = {"labels": {"a": "1"}, "annotations": {"b": "2"}}
    job = trainjob(suspend=True, runtimePatches=[{"manager": "kueue.x-k8s.io/manager",
        "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"c": "3"}}}}}])
    jobset = desired_jobset(job, runtime)
    assert jobset["metadata"]["labels"] == {"a": "1", "c": "3"}
    assert jobset["metadata"]["annotations"] == {"b": "2"}
    assert jobset["spec"]["suspend"] is True


def test_a_patch_of_the_jobset_spec_is_merged_before_the_plugins() -> None:
    """``newRuntimeInfo`` merges the patches, then the torch plugin adds its env: the patch's
    node selector, volume and mount are in the JobSet, with PET_* after them."""
    job = trainjob(trainer={"numNodes": 1}, runtimePatches=[{
        "manager": "x.io/m", "trainingRuntimeSpec": {"template": {
        "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
            "spec": {"nodeSelector": {"pool": "a100"},
                     "volumes": [{"name": "data", "emptyDir": {}}],
                     "containers": [{"name": "node", "volumeMounts": [
                         {"name": "data", "mountPath": "/data"}]}]}}}}}]}}}}])
    pod = node_job(desired_jobset(job, TORCH))["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "a100"}
    assert pod["volumes"] == [{"name": "data", "emptyDir": {}}]
    node = pod["containers"][0]
    assert node["image"] == "pytorch/pytorch:2.13.0"
    assert node["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert [e["name"] for e in node["env"]][:2] == ["PET_NNODES", "PET_NPROC_PER_NODE"]


def test_env_injection_targets_get_the_master_too() -> None:
    runtime = copy.deepcopy(TORCH)
    pod = runtime["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"][
        "spec"]
    pod["initContainers"] = [{"name": "check", "image": "busybox"}]
    runtime["mlPolicy"]["torch"] = {"envInjection": {"targets": [
        {"jobName": "node", "containerNames": ["check"]}]}}
    init = node_job(desired_jobset(trainjob(trainer={"numNodes": 3}), runtime))["template"][
        "spec"]["template"]["spec"]["initContainers"][0]
    assert [e["name"] for e in init["env"]] == ["PET_NNODES", "PET_NPROC_PER_NODE",
                                                "PET_NODE_RANK", "PET_MASTER_ADDR",
                                                "PET_MASTER_PORT"]
    assert init["env"][0] == {"name": "PET_NNODES", "value": "3"}


def test_a_port_without_a_name_replaces_the_first_unnamed_one() -> None:
    """apply.go's byContainerPortOrName: two nil names are equal."""
    ports = [{"containerPort": 8080}, {"containerPort": 9090, "name": "metrics"}]
    upsert_ports(ports, [{"containerPort": 29500}])
    assert ports == [{"containerPort": 29500}, {"containerPort": 9090, "name": "metrics"}]


def test_a_runtime_without_a_framework_policy_gets_the_trainers_nodes_and_env() -> None:
    """plainml.go: numNodes and env, no PET_* variables."""
    runtime = copy.deepcopy(TORCH)
    runtime["mlPolicy"] = {"numNodes": 1}
    job = trainjob(trainer={"numNodes": 3, "env": [{"name": "A", "value": "1"}]})
    node = node_job(desired_jobset(job, runtime))
    assert node["template"]["spec"]["completions"] == 3
    assert node["template"]["spec"]["template"]["spec"]["containers"][0]["env"] == [
        {"name": "A", "value": "1"}]


@pytest.mark.parametrize("policy", ["flux"])
def test_other_policies_are_refused_not_half_built(policy: str) -> None:
    runtime = copy.deepcopy(TORCH)
    runtime["mlPolicy"] = {"numNodes": 1, policy: {}}
    with pytest.raises(UnsupportedPolicy, match=f"the {policy} ML policy is not supported"):
        desired_jobset(trainjob(), runtime)


def test_jax_sets_processes_id_and_coordinator_then_the_trainers_env() -> None:
    """jax.go: JAX_* first, the TrainJob's env after (the JobSet builder's upsert)."""
    runtime = copy.deepcopy(TORCH)
    runtime["mlPolicy"] = {"numNodes": 1, "jax": {}}
    job = trainjob(trainer={"numNodes": 2, "env": [{"name": "A", "value": "1"}]})
    node = node_job(desired_jobset(job, runtime))["template"]["spec"]
    container = node["template"]["spec"]["containers"][0]
    assert node["parallelism"] == 2
    assert container["env"] == [
        {"name": "JAX_NUM_PROCESSES", "value": "2"},
        {"name": "JAX_PROCESS_ID", "valueFrom": RANK["valueFrom"]},
        {"name": "JAX_COORDINATOR_ADDRESS", "value": "pi-node-0-0.pi:29500"},
        {"name": "A", "value": "1"}]
    assert container["ports"] == [{"containerPort": 29500}]


@pytest.mark.parametrize(("resources", "workers"), [
    (None, "3"), ({"limits": {"nvidia.com/gpu": "4"}}, "12")])
def test_xgboost_sets_the_tracker_and_the_workers(resources: dict[str, Any] | None,
                                                  workers: str) -> None:
    """xgboost.go: DMLC_NUM_WORKER is nodes x GPUs per node (x 1 without GPUs)."""
    runtime = copy.deepcopy(TORCH)
    runtime["mlPolicy"] = {"numNodes": 1, "xgboost": {}}
    trainer: dict[str, Any] = {"numNodes": 3, "env": [{"name": "A", "value": "1"}]}
    if resources is not None:
        trainer["resourcesPerNode"] = resources
    container = node_job(desired_jobset(trainjob(trainer=trainer), runtime))["template"][
        "spec"]["template"]["spec"]["containers"][0]
    assert container["env"] == [
        {"name": "A", "value": "1"},
        {"name": "DMLC_TRACKER_URI", "value": "pi-node-0-0.pi"},
        {"name": "DMLC_TRACKER_PORT", "value": "29500"},
        {"name": "DMLC_TASK_ID", "valueFrom": RANK["valueFrom"]},
        {"name": "DMLC_NUM_WORKER", "value": workers}]


def _deepspeed() -> dict[str, Any]:
    path = Path(__file__).resolve().parents[3] / "deploy/runtimes/deepspeed-distributed.yaml"
    spec: dict[str, Any] = yaml.safe_load(path.read_text())["spec"]
    return spec


def test_mpi_with_the_launcher_as_a_node() -> None:
    """mpi.go: 3 nodes with runLauncherAsNode are 2 workers and the launcher; the launcher's
    count is the runtime's numNodes (it carries the trainer label); volumes, mounts, OMPI_*
    and the hostfile of every node's endpoint."""
    desired = desired_objects(trainjob(trainer={"numNodes": 3, "numProcPerNode": 2}),
                              _deepspeed())
    node, launcher = desired.jobset["spec"]["replicatedJobs"]
    assert (node["template"]["spec"]["parallelism"],
            launcher["template"]["spec"]["parallelism"]) == (2, 1)
    ssh = {"name": "mpi-ssh-auth", "secret": {
        "secretName": "pi-mpi-ssh-auth", "defaultMode": 256, "items": [
            {"key": "ssh-privatekey", "path": "id_rsa", "mode": 416},
            {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 420},
            {"key": "ssh-publickey", "path": "authorized_keys", "mode": 420}]}}
    hostfile = {"name": "mpi-hostfile", "configMap": {"name": "pi-mpi-hostfile", "items": [
        {"key": "hostfile", "path": "hostfile", "mode": 292}]}}
    assert node["template"]["spec"]["template"]["spec"]["volumes"] == [ssh]
    pod = launcher["template"]["spec"]["template"]["spec"]
    assert pod["volumes"] == [ssh, hostfile]
    container = pod["containers"][0]
    assert container["volumeMounts"] == [
        {"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"},
        {"name": "mpi-hostfile", "mountPath": "/etc/mpi"}]
    assert container["env"] == [
        {"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
        {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
        {"name": "OMPI_MCA_orte_set_default_slots", "value": "2"},
        {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"}]
    assert desired.ssh_secret
    assert desired.hostfile == {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "pi-mpi-hostfile", "namespace": "ns", "ownerReferences": [
            {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "pi",
             "uid": "u-1", "controller": True, "blockOwnerDeletion": True}]},
        "data": {"hostfile": "pi-node-0-0.pi slots=2\npi-node-0-1.pi slots=2\n"
                             "pi-launcher-0-0.pi slots=2\n"}}


def test_mpi_slots_follow_the_gpus_when_the_policy_says_1() -> None:
    desired = desired_objects(
        trainjob(trainer={"resourcesPerNode": {"limits": {"nvidia.com/gpu": "4"}}}),
        _deepspeed())
    assert desired.hostfile is not None
    assert desired.hostfile["data"]["hostfile"] == ("pi-node-0-0.pi slots=4\n"
                                                     "pi-launcher-0-0.pi slots=4\n")


def test_the_ssh_secret() -> None:
    key = ec.derive_private_key(7, ec.SECP521R1())
    secret = ssh_auth_secret(trainjob(), key)
    public = base64.b64decode(secret["data"]["ssh-publickey"])
    private = base64.b64decode(secret["data"]["ssh-privatekey"])
    assert (secret["type"], secret["immutable"], secret["metadata"]["name"]) == (
        "kubernetes.io/ssh-auth", True, "pi-mpi-ssh-auth")
    assert public.startswith(b"ecdsa-sha2-nistp521 AAAA")
    assert public.endswith(b"\n")
    assert private.startswith(b"-----BEGIN EC PRIVATE KEY-----\n")
