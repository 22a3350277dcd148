"""Inputs the Go operators admit and run although they cannot work as written, against a real
API server and KWOK: each job still gets the objects upstream would make, and exactly one
Warning ``ValidationError`` Event naming the field and the problem, however often it is synced;
a TFJob with negative replicas, which upstream cannot run (its reconcile panics), gets nothing
but its ``TFJobFailedValidation`` Event
(``mpi_controller.engine.admitted``; rows in docs/training-kinds.md and docs/differences.md)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from tests.controller_harness import running_controller, training_controller
from tests.mpijobs import MPIJobs, small_job
from tests.pytorchjobs import PyTorchJobs, pytorchjob
from tests.pytorchjobs import replica as pt_replica
from tests.support import Cluster, wait_for
from tests.tfjobs import TFJobs, names, replica, tfjob

pytestmark = pytest.mark.cluster

TO = " (admitted: the job runs as training-operator runs it)"
TF_TYPES = '"PS", "Worker", "Chief", "Master", "Evaluator"'


@pytest.fixture
def controllers(cluster: Cluster, namespace: str, mpijob_crd: str, tfjob_crd: str,
                pytorchjob_crd: str) -> Iterator[None]:
    with ExitStack() as stack:
        stack.enter_context(running_controller(cluster.kubeconfig, namespace))
        for scheme in ("tfjob", "pytorchjob"):
            stack.enter_context(training_controller(cluster.kubeconfig, namespace, scheme))
        yield


def warnings(jobs: Any, name: str) -> dict[tuple[str, str, str], int]:
    """The job's Warning Events by (type, reason, message), with their counts."""
    items = jobs.core.list_namespaced_event(
        jobs.namespace, field_selector=f"involvedObject.name={name},type=Warning").items
    out: dict[tuple[str, str, str], int] = {}
    for e in items:
        key = (e.type, e.reason, e.message)
        out[key] = out.get(key, 0) + (e.count or 1)
    return out


def test_each_admitted_problem_runs_as_upstream_and_is_told_once(
        kube_api: Any, namespace: str, controllers: None) -> None:
    tfjobs, pytorchjobs, mpijobs = (TFJobs(kube_api, namespace),
                                    PyTorchJobs(kube_api, namespace),
                                    MPIJobs(kube_api, namespace))
    tfjobs.create(tfjob("boss", {"Worker": replica(1), "Boss": replica(1)}))
    tfjobs.create(tfjob("negative", {"Chief": replica(1), "Worker": replica(-3)}))
    pytorchjobs.create(pytorchjob("elastic", {"Worker": pt_replica(2)},
                                  elastic={"minReplicas": 5, "maxReplicas": 2}))
    zero = small_job("zero", workers=2)
    zero["spec"]["slotsPerWorker"] = 0
    mpijobs.create(zero)

    # Each runs to the end as upstream runs it (the Boss gets its pod and Service; the
    # elastic workers are told PET_NNODES=5:2; the hostfile gives no slots).
    for jobs, name in ((tfjobs, "boss"), (pytorchjobs, "elastic"), (mpijobs, "zero")):
        jobs.wait_condition(name, "Succeeded", timeout=120)
    assert names(tfjobs.services("boss")) == ["boss-boss-0", "boss-worker-0"]
    assert "boss-boss-0" in names(tfjobs.pods("boss"))
    # Upstream's reconcile panics on it (building TF_CONFIG): nothing made; here neither.
    negative = ("Warning", "TFJobFailedValidation", "TFJob failed validation because "
                "spec.tfReplicaSpecs[Worker].replicas: Invalid value: -3: must be greater than "
                "or equal to 0")
    wait_for(lambda: negative in warnings(tfjobs, "negative"), timeout=30,
             what="the validation event of the negative job")
    assert list(warnings(tfjobs, "negative")) == [negative]
    assert tfjobs.pods("negative") == []
    assert tfjobs.services("negative") == []
    assert "status" not in tfjobs.get("negative")
    env = {e["name"]: e.get("value") for e in pytorchjobs.pods("elastic")[0]["spec"][
        "containers"][0]["env"]}
    assert env["PET_NNODES"] == "5:2"
    hostfile = mpijobs.core.read_namespaced_config_map("zero-config", namespace).data["hostfile"]
    assert hostfile == (f"zero-worker-0.zero.{namespace}.svc slots=0\n"
                        f"zero-worker-1.zero.{namespace}.svc slots=0\n")

    expected = {
        "boss": ("spec.tfReplicaSpecs[Boss]: Unsupported value: \"Boss\": supported values: "
                 f"{TF_TYPES}{TO}"),
        "elastic": ("spec.elasticPolicy.minReplicas: Invalid value: 5: must be less than or "
                    f"equal to spec.elasticPolicy.maxReplicas (2){TO}"),
        "zero": ("spec.slotsPerWorker: Invalid value: 0: must be greater than 0: mpirun has no "
                 "slot to start a process in (admitted: the job runs as mpi-operator runs it)"),
    }
    jobs_of = {"boss": tfjobs, "elastic": pytorchjobs, "zero": mpijobs}
    for name, message in expected.items():
        jobs = jobs_of[name]
        wait_for(lambda j=jobs, n=name: warnings(j, n), timeout=30,
                 what=f"the ValidationError event of {name}")
        # synced many times on the way to Succeeded: one Event, count 1
        assert warnings(jobs, name) == {("Warning", "ValidationError", message): 1}, name
