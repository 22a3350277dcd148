"""The environment of each XGBoostJob pod (training-operator v1.9 ``xgboost.go`` ``SetPodEnv``,
``getPortFromXGBoostJob``, ``computeTotalReplicas``): every variable, its value and upstream's
order, on every container; and which pod has the master role (``IsMasterRole``)."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.engine.training.api import replica_specs
from mpi_controller.xgboost import is_master_role, parse_xgboostjob, pod_env, set_defaults
from mpi_controller.xgboost.hooks import XGBoost
from tests.unit.xgboost.jobs import example, master_and_workers, replica, xgboostjob

NAME = "xgboost-dist-iris-test-train"


def env(body: dict[str, Any], rtype: str, index: int) -> list[tuple[str, str]]:
    job = parse_xgboostjob(set_defaults(body))
    return [(v["name"], v["value"]) for v in pod_env(job, rtype, index)]


@pytest.mark.parametrize(("rtype", "index", "rank"), [("Master", 0, "0"), ("Worker", 0, "1"),
                                                      ("Worker", 1, "2")])
def test_upstreams_example_every_pod(rtype: str, index: int, rank: str) -> None:
    """examples/xgboost/xgboostjob.yaml (1 Master, 2 Workers, port 9991): MASTER_PORT,
    MASTER_ADDR, WORLD_SIZE, RANK (workers after the master), PYTHONUNBUFFERED, then
    WORKER_PORT and WORKER_ADDRS (more than one replica), in SetPodEnv's order."""
    assert env(example(), rtype, index) == [
        ("MASTER_PORT", "9991"), ("MASTER_ADDR", f"{NAME}-master-0"), ("WORLD_SIZE", "3"),
        ("RANK", rank), ("PYTHONUNBUFFERED", "1"), ("WORKER_PORT", "9991"),
        ("WORKER_ADDRS", f"{NAME}-worker-0,{NAME}-worker-1")]


def test_a_master_alone_gets_no_worker_variables() -> None:
    """totalReplicas 1: no WORKER_PORT/WORKER_ADDRS; the defaulted port 9999."""
    assert env(xgboostjob("solo", {"Master": replica(1)}), "Master", 0) == [
        ("MASTER_PORT", "9999"), ("MASTER_ADDR", "solo-master-0"), ("WORLD_SIZE", "1"),
        ("RANK", "0"), ("PYTHONUNBUFFERED", "1")]


def test_zero_workers_count_as_none() -> None:
    """Worker replicas 0: WORLD_SIZE 1, so no WORKER_* (the Worker's port is not read)."""
    body = xgboostjob("z", {"Master": replica(1), "Worker": replica(0)})
    body["spec"]["xgbReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] = "x"
    assert env(body, "Master", 0)[2:] == [("WORLD_SIZE", "1"), ("RANK", "0"),
                                          ("PYTHONUNBUFFERED", "1")]


def test_each_type_has_its_own_port_and_addresses_span_all_but_one_replica() -> None:
    """MASTER_PORT is the Master's xgboostjob-port, WORKER_PORT the Worker's; WORKER_ADDRS
    lists ``totalReplicas - 1`` worker names."""
    body = xgboostjob("p", {"Master": replica(1, port=9000), "Worker": replica(4, port=9100)})
    assert env(body, "Worker", 3) == [
        ("MASTER_PORT", "9000"), ("MASTER_ADDR", "p-master-0"), ("WORLD_SIZE", "5"),
        ("RANK", "4"), ("PYTHONUNBUFFERED", "1"), ("WORKER_PORT", "9100"),
        ("WORKER_ADDRS", "p-worker-0,p-worker-1,p-worker-2,p-worker-3")]


def test_the_worker_rank_offset_compares_the_type_case_insensitively() -> None:
    """``strings.EqualFold(rtype, "worker")``."""
    job = parse_xgboostjob(set_defaults(master_and_workers("c")))
    assert [v["value"] for v in pod_env(job, "worker", 1) if v["name"] == "RANK"] == ["2"]
    assert [v["value"] for v in pod_env(job, "Master", 0) if v["name"] == "RANK"] == ["0"]


@pytest.mark.parametrize(("body", "rtype", "message"), [
    (xgboostjob("w", {"Worker": replica(2)}), "Worker", "no Master replica spec"),
    (xgboostjob("w", {"Worker": replica(2)}), "Master", "no Master replica spec"),
    (xgboostjob("m", {"Master": replica(2)}), "Master", "no Worker replica spec"),
])
def test_what_upstream_cannot_build_raises(body: dict[str, Any], rtype: str,
                                           message: str) -> None:
    """No Master (upstream dereferences a nil spec), or more than one replica without a Worker:
    the pod is not built (validation refuses these jobs first)."""
    with pytest.raises(ValueError, match=message):
        pod_env(parse_xgboostjob(set_defaults(body)), rtype, 0)


def test_a_missing_port_fails_with_upstreams_words() -> None:
    """getPortFromXGBoostJob: ``failed to found the port`` when the xgboost container has no
    xgboostjob-port (after defaults, only when no container is named xgboost)."""
    body = master_and_workers("np")
    body["spec"]["xgbReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["name"] = "x"
    body["spec"]["xgbReplicaSpecs"]["Master"]["template"]["spec"]["containers"].append(
        {"name": "xgboost", "image": "i"})
    defaulted = set_defaults(body)
    defaulted["spec"]["xgbReplicaSpecs"]["Master"]["template"]["spec"]["containers"][1][
        "ports"] = [{"name": "other", "containerPort": 1}]
    with pytest.raises(ValueError, match=r"^failed to found the port$"):
        pod_env(parse_xgboostjob(defaulted), "Worker", 0)


def test_the_hook_appends_to_every_container_but_not_init_containers() -> None:
    """SetPodEnv appends to ``Spec.Containers`` only, after their own env."""
    body = master_and_workers("e", 1)
    job = set_defaults(body)
    template: dict[str, Any] = {"spec": {
        "initContainers": [{"name": "init", "image": "i"}],
        "containers": [{"name": "xgboost", "image": "x", "env": [{"name": "A", "value": "1"}]},
                       {"name": "side", "image": "s"}]}}
    XGBoost().set_cluster_spec(job, template, "Worker", 0)
    expected = [{"name": "MASTER_PORT", "value": "9999"},
                {"name": "MASTER_ADDR", "value": "e-master-0"},
                {"name": "WORLD_SIZE", "value": "2"}, {"name": "RANK", "value": "1"},
                {"name": "PYTHONUNBUFFERED", "value": "1"},
                {"name": "WORKER_PORT", "value": "9999"},
                {"name": "WORKER_ADDRS", "value": "e-worker-0"}]
    xgb, side = template["spec"]["containers"]
    assert xgb["env"] == [{"name": "A", "value": "1"}, *expected]
    assert side["env"] == expected
    assert template["spec"]["initContainers"] == [{"name": "init", "image": "i"}]


@pytest.mark.parametrize(("types", "rtype", "index", "master"), [
    (("Master", "Worker"), "Master", 0, True),
    (("Master", "Worker"), "Worker", 0, False),
    (("Worker",), "Worker", 0, False),
    (("Master",), "Master", 3, True),
])
def test_master_role_is_the_master_type_only(types: tuple[str, ...], rtype: str, index: int,
                                             master: bool) -> None:
    """XGBoostJobReconciler.IsMasterRole: ``rtype == Master``, whatever the index; unlike the
    TFJob and PyTorchJob rule, worker 0 of a job without a Master is not the master."""
    specs = replica_specs(xgboostjob("r", {t: replica(1) for t in types}), "xgbReplicaSpecs")
    assert XGBoost().is_master_role(specs, rtype, index) is master
    assert is_master_role(rtype) is master
