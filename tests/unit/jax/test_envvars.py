"""The environment of a JAXJob pod (training-operator v1.9 ``pkg/controller.v1/jax/envvar.go``
``setPodEnv`` and its ``TestSetPodEnv``): the exact list, in upstream's order, in every
container; the missing-port error."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.jax import parse_jaxjob, pod_env, set_defaults
from mpi_controller.jax.envvars import PORT_NOT_EXPOSED, coordinator_port
from mpi_controller.jax.hooks import JAX
from tests.unit.jax.jaxjobs import env, jaxjob, replica


def view(body: dict[str, Any], *, defaults: bool = True) -> Any:
    return parse_jaxjob(set_defaults(body) if defaults else body)


def test_upstreams_successful_case() -> None:
    """TestSetPodEnv "successful environment variable setup": one worker with jaxjob-port 6666,
    index 0."""
    job = view(jaxjob("test-jaxjob", {"Worker": replica(1, port=6666)}), defaults=False)
    assert pod_env(job, "Worker", 0) == [
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "COORDINATOR_PORT", "value": "6666"},
        {"name": "COORDINATOR_ADDRESS", "value": "test-jaxjob-worker-0"},
        {"name": "NUM_PROCESSES", "value": "1"},
        {"name": "PROCESS_ID", "value": "0"}]


@pytest.mark.parametrize(("replicas", "index"), [(1, 0), (2, 0), (2, 1), (4, 3), (16, 9)])
def test_each_worker_of_n(replicas: int, index: int) -> None:
    """NUM_PROCESSES is the workers' count, PROCESS_ID the pod's index; every pod names worker
    0 as the coordinator, with the defaulted port."""
    job = view(jaxjob("mnist", {"Worker": replica(replicas)}))
    assert pod_env(job, "Worker", index) == env("mnist", index=index, processes=replicas)


def test_the_coordinator_port_is_the_workers_own() -> None:
    """getPortFromJAXJob: the jaxjob-port of the Worker's jax container (another port of it,
    and ports of other containers, do not count)."""
    body = jaxjob("p", {"Worker": replica(2)})
    body["spec"]["jaxReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = [
        {"name": "side", "image": "s", "ports": [{"name": "jaxjob-port",
                                                   "containerPort": 1111}]},
        {"name": "jax", "image": "j", "ports": [{"name": "metrics", "containerPort": 9090},
                                                {"name": "jaxjob-port", "containerPort": 7777}]}]
    job = view(body)
    assert coordinator_port(job) == 7777
    assert pod_env(job, "Worker", 1) == env("p", index=1, processes=2, port=7777)


def test_num_processes_sums_every_replica_type() -> None:
    """getTotalReplicas adds up all replica specs (only Worker passes validation)."""
    job = view(jaxjob("s", {"Worker": replica(2), "Other": replica(3)}))
    assert pod_env(job, "Worker", 0)[3] == {"name": "NUM_PROCESSES", "value": "5"}


def test_a_slash_in_the_name_becomes_a_dash() -> None:
    """replicaName replaces "/" by "-"."""
    job = view(jaxjob("a/b", {"Worker": replica(1)}))
    assert pod_env(job, "Worker", 0)[2] == {"name": "COORDINATOR_ADDRESS",
                                            "value": "a-b-worker-0"}


@pytest.mark.parametrize("body", [
    jaxjob("m", {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "jax", "ports": [{"name": "wrong-port", "containerPort": 0}]}]}}}}),
    jaxjob("m", {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "main", "ports": [{"name": "jaxjob-port", "containerPort": 6666}]}]}}}}),
    jaxjob("m", {"Other": replica(1, port=6666)}),
], ids=["wrong-port-name", "no-jax-container", "no-worker"])
def test_without_the_worker_port_the_pod_cannot_be_made(body: dict[str, Any]) -> None:
    """TestSetPodEnv "missing container port in JAXJob": errorDefaulContainerPortNotExposed
    (upstream fails the pod's creation; no variable is added)."""
    job = view(body, defaults=False)
    with pytest.raises(ValueError, match=f"^{PORT_NOT_EXPOSED}$"):
        pod_env(job, "Worker", 0)
    template: dict[str, Any] = {"spec": {"containers": [{"name": "jax"}]}}
    with pytest.raises(ValueError, match=PORT_NOT_EXPOSED):
        JAX().set_cluster_spec(body, template, "Worker", 0)
    assert template == {"spec": {"containers": [{"name": "jax"}]}}


def test_every_container_gets_the_variables_after_its_own() -> None:
    """setPodEnv appends to each container of the template (sidecars too, init containers
    not); a variable the template sets is kept and followed by upstream's."""
    body = set_defaults(jaxjob("e", {"Worker": replica(3)}))
    template: dict[str, Any] = {"spec": {
        "initContainers": [{"name": "init"}],
        "containers": [{"name": "side"},
                       {"name": "jax", "env": [{"name": "PYTHONUNBUFFERED", "value": "0"}]}]}}
    JAX().set_cluster_spec(body, template, "Worker", 2)
    wanted = env("e", index=2, processes=3)
    assert template["spec"] == {
        "initContainers": [{"name": "init"}],
        "containers": [{"name": "side", "env": wanted},
                       {"name": "jax", "env": [{"name": "PYTHONUNBUFFERED", "value": "0"},
                                               *wanted]}]}

