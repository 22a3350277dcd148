"""The environment of a PaddleJob pod and its master role (training-operator v1.9
paddlepaddle/envvar.go setPodEnv, getPortFromPaddleJob; paddlepaddle_controller.go
IsMasterRole; the controller test's "$(POD_IP_DUMMY):8080" check)."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.engine.training.env import add_pod_env
from mpi_controller.paddle import is_master_role, parse_paddlejob, pod_env, set_defaults
from mpi_controller.paddle.envvars import master_endpoint, replica_port
from tests.unit.paddle.jobs import paddlejob, replica, simple_cpu

POD_IP = {"name": "POD_IP_DUMMY", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


def view(job: dict[str, Any]) -> Any:
    return parse_paddlejob(set_defaults(job))


def var(name: str, value: str) -> dict[str, str]:
    return {"name": name, "value": value}


def test_collective_worker_0_is_the_rendezvous_through_its_pod_ip() -> None:
    """Collective mode (no Master): rank 0 gets POD_IP_DUMMY from status.podIP, then
    PADDLE_MASTER=$(POD_IP_DUMMY):<the Worker's master port>; no SERVER/TRAINER_NUM."""
    job = view(simple_cpu())
    assert pod_env(job, "Worker", 0) == [
        var("PYTHONUNBUFFERED", "1"), var("PADDLE_JOB_ID", "paddle-simple-cpu"),
        var("PADDLE_NNODES", "2"), POD_IP, var("PADDLE_MASTER", "$(POD_IP_DUMMY):37777")]


def test_collective_other_workers_name_worker_0() -> None:
    """Collective mode, rank > 0: PADDLE_MASTER=<job>-worker-0:<port> (the Service's short
    name)."""
    job = view(simple_cpu())
    assert pod_env(job, "Worker", 1) == [
        var("PYTHONUNBUFFERED", "1"), var("PADDLE_JOB_ID", "paddle-simple-cpu"),
        var("PADDLE_NNODES", "2"), var("PADDLE_MASTER", "paddle-simple-cpu-worker-0:37777")]


def test_the_defaulted_port_is_36543() -> None:
    """PaddleJobDefaultPort 36543 (defaulted into the template, and getPortFromPaddleJob's
    fallback)."""
    job = view(paddlejob("c", {"Worker": replica(3)}))
    assert pod_env(job, "Worker", 2)[-1] == var("PADDLE_MASTER", "c-worker-0:36543")
    assert pod_env(job, "Worker", 0)[-1] == var("PADDLE_MASTER", "$(POD_IP_DUMMY):36543")


def test_parameter_server_mode_master_0() -> None:
    """PS mode: master 0 (rank 0 and rtype master) gets its pod IP and PADDLE_SERVER_NUM=1;
    PADDLE_NNODES counts masters and workers; the port is the Master's."""
    job = view(paddlejob("ps", {"Master": replica(2, port=8080), "Worker": replica(3)}))
    assert pod_env(job, "master", 0) == [
        var("PYTHONUNBUFFERED", "1"), var("PADDLE_JOB_ID", "ps"), var("PADDLE_NNODES", "5"),
        POD_IP, var("PADDLE_MASTER", "$(POD_IP_DUMMY):8080"), var("PADDLE_SERVER_NUM", "1")]


def test_parameter_server_mode_other_masters() -> None:
    """PS mode: a master other than 0 names <job>-master-0:<port> and is a server
    (PADDLE_SERVER_NUM=1)."""
    job = view(paddlejob("ps", {"Master": replica(2, port=8080), "Worker": replica(3)}))
    assert pod_env(job, "master", 1) == [
        var("PYTHONUNBUFFERED", "1"), var("PADDLE_JOB_ID", "ps"), var("PADDLE_NNODES", "5"),
        var("PADDLE_MASTER", "ps-master-0:8080"), var("PADDLE_SERVER_NUM", "1")]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_parameter_server_mode_workers_including_worker_0(index: int) -> None:
    """PS mode: every worker, worker 0 included, names master 0 (no POD_IP_DUMMY) and gets
    PADDLE_TRAINER_NUM=1; the Worker's own port does not matter."""
    job = view(paddlejob("ps", {"Master": replica(1, port=8080), "Worker": replica(3, port=9)}))
    assert pod_env(job, "worker", index) == [
        var("PYTHONUNBUFFERED", "1"), var("PADDLE_JOB_ID", "ps"), var("PADDLE_NNODES", "4"),
        var("PADDLE_MASTER", "ps-master-0:8080"), var("PADDLE_TRAINER_NUM", "1")]


def test_the_rtype_is_compared_lower_case() -> None:
    """SetClusterSpec gets the lower-cased type from the common code; the hook may get either."""
    job = view(paddlejob("ps", {"Master": replica(1), "Worker": replica(1)}))
    assert pod_env(job, "Master", 0) == pod_env(job, "master", 0)
    assert pod_env(job, "Worker", 0) == pod_env(job, "worker", 0)


def test_the_port_is_the_paddle_containers_master_port_only() -> None:
    """getPortFromPaddleJob: the port named master of the container named paddle; another
    container's, or another port name, does not count (36543)."""
    spec = replica(1)
    spec["template"]["spec"]["containers"] = [
        {"name": "side", "image": "s", "ports": [{"name": "master", "containerPort": 1}]},
        {"name": "paddle", "image": "p", "ports": [{"name": "http", "containerPort": 2},
                                                    {"name": "master", "containerPort": 3}]}]
    assert replica_port(parse_paddlejob(paddlejob("j", {"Worker": spec})), "Worker") == 3
    del spec["template"]["spec"]["containers"][1]["ports"][1]
    assert replica_port(parse_paddlejob(paddlejob("j", {"Worker": spec})), "Worker") == 36543
    assert replica_port(parse_paddlejob(paddlejob("j", {})), "Worker") == 36543


def test_elastic_policy_changes_nothing() -> None:
    """envvar.go never reads the elastic policy."""
    plain = view(paddlejob("e", {"Worker": replica(2)}))
    elastic = view(paddlejob("e", {"Worker": replica(2)},
                             elastic={"minReplicas": 1, "maxReplicas": 4, "maxRestarts": 3}))
    for index in (0, 1):
        assert pod_env(elastic, "Worker", index) == pod_env(plain, "Worker", index)


def test_master_endpoint_by_mode() -> None:
    """setPodEnv: the rendezvous is master 0 with a Master spec, else worker 0; the port is that
    type's."""
    assert master_endpoint(view(paddlejob("j", {"Worker": replica(1, port=7)}))) == (
        "Worker", 7)
    assert master_endpoint(view(paddlejob("j", {"Master": replica(1, port=6),
                                                "Worker": replica(1, port=7)}))) == (
        "Master", 6)


def test_every_container_gets_the_env_after_its_own() -> None:
    """setPodEnv appends to each container (init containers untouched), each its own copy."""
    template: dict[str, Any] = {"spec": {
        "initContainers": [{"name": "init", "image": "i"}],
        "containers": [{"name": "side", "image": "s", "env": [var("A", "1")]},
                       {"name": "paddle", "image": "p"}]}}
    env = pod_env(view(paddlejob("j", {"Worker": replica(1)})), "Worker", 0)
    add_pod_env(template, env)
    side, paddle = template["spec"]["containers"]
    assert side["env"] == [var("A", "1"), *env]
    assert paddle["env"] == env
    assert "env" not in template["spec"]["initContainers"][0]
    side["env"][4]["valueFrom"]["fieldRef"]["fieldPath"] = "changed"
    assert paddle["env"][3] == POD_IP
    assert env[3] == POD_IP


@pytest.mark.parametrize(("rtype", "index", "master"), [
    ("Master", 0, True), ("Master", 3, True), ("Worker", 0, False), ("Worker", 1, False),
    ("master", 0, False)])
def test_master_role_is_every_master_pod_and_no_worker(rtype: str, index: int,
                                                       master: bool) -> None:
    """IsMasterRole: rtype == Master whatever the index; without a Master no pod has the role
    (unlike TFJob's and PyTorchJob's worker 0)."""
    assert is_master_role(rtype) is master
