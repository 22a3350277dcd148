"""Replacing the Go operators without losing running jobs, and running beside them, as
docs/install.md ("Beside or instead of the Go operators") tells a cluster admin to do, against
the real mpi-operator v0.8.2 and training-operator v1.9.2 (built from the Go module proxy by
``hack/reference-operators.sh``, run as processes as ``conformance/`` runs them).

* **Handover**: a job starts under one operator; once it runs, that operator stops (as a
  Deployment scaled to 0) and the other starts; the job finishes under the other with the same
  children (the launcher Job, worker pods and Services keep their UIDs), its status carries on
  (one ``Created`` condition and one ``...Created`` Event: the newcomer does not start the job
  again) and no child is made twice. MPIJob ``v2beta1``: mpi-operator -> ours and
  ours -> mpi-operator; TFJob: training-operator -> ours.
* **Side by side**: ours runs only TFJobs (``--enable-scheme tfjob``) with its Lease in a
  namespace of its own (mpi-operator's Lease has ours' name and namespace, ``mpi-operator`` in
  ``mpi-operator``, so with the defaults one of the two would stand by), while mpi-operator runs
  the MPIJobs: both jobs succeed, each under its own operator.

The session controller (``e2e/conftest.py``) is stopped for these tests and started again
afterwards: two controllers of one kind would fight. mpi-operator is built on first use
(``make test`` builds it before these suites); training-operator is built by ``make
conformance`` (or ``hack/reference-operators.sh build training-operator``): without it the
TFJob handover is skipped and says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from conformance import operators
from tests.mpijobs import MPIJobs, small_job
from tests.processes import ControllerProcess, OperatorProcess
from tests.support import Cluster, unique_name, wait_for
from tests.tfjobs import DURATION, TFJobs, replica, tfjob

pytestmark = pytest.mark.cluster

LEASE = ("mpi-operator", "mpi-operator")  # (namespace, name): ours' default and mpi-operator's
GO_EXITS = {
    # mpi-operator v0.8.2 (process name "go") ends with klog.Fatalf("Leader election stopped")
    # when its leader election returns (cmd/mpi-operator/app/server.go), exit code 255.
    "go": (255, "Leader election stopped"),
    # training-operator v1.9.2 panics after its manager has stopped: its main closes a channel
    # twice (cmd/training-operator.v1/main.go:182), exit code 2.
    "training-operator": (2, "panic: close of closed channel"),
}


def _controller_kubeconfig(cluster: Cluster) -> Path:
    path = Path(cluster.kubeconfig).with_name("kubeconfig-controller")
    return path if path.exists() else Path(cluster.kubeconfig)


def _drop_lease(kube_api: Any) -> None:
    """mpi-operator keeps its Lease when it exits: the next leader would wait out its term."""
    with contextlib.suppress(client.ApiException):
        client.CoordinationV1Api(kube_api).delete_namespaced_lease(LEASE[1], LEASE[0])


class Handover:
    """Starts and stops the operators of one test (logs in its temporary directory)."""

    def __init__(self, cluster: Cluster, kube_api: Any, logs: Path) -> None:
        self.kubeconfig = _controller_kubeconfig(cluster)
        self.kube_api = kube_api
        self.logs = logs
        self.running: list[OperatorProcess] = []

    def ours(self, *flags: str) -> OperatorProcess:
        proc = ControllerProcess(str(self.kubeconfig), self.logs / unique_name("ours"), *flags)
        return self._start(proc)

    def go(self, name: str, *flags: str) -> OperatorProcess:
        log = self.logs / unique_name(name)
        _drop_lease(self.kube_api)
        with contextlib.suppress(client.ApiException):
            client.CoreV1Api(self.kube_api).create_namespace({"metadata": {"name": LEASE[0]}})
        return self._start(operators.reference_factory(name)(self.kubeconfig, list(flags), log))

    def start(self, name: str) -> OperatorProcess:
        """``ours`` or a reference operator (``hack/reference-operators.sh`` names), defaults."""
        return self.ours() if name == "ours" else self.go(name)

    def _start(self, proc: OperatorProcess) -> OperatorProcess:
        proc.start()
        self.running.append(proc)
        proc.wait_ready(180)
        return proc

    def stop(self, proc: OperatorProcess) -> None:
        """Stops it as a Deployment scaled to 0 would (SIGTERM), after which it must have
        exited as it always does: ours with 0; the Go operators with their usual failure once
        their workers have stopped (:data:`GO_EXITS`)."""
        code = proc.stop()
        self.running.remove(proc)
        expected, last_words = GO_EXITS.get(proc.name, (0, ""))
        assert (code, last_words in proc.log()) == (expected, True), \
            f"{proc.name} exited {code}:\n{proc.log()[-3000:]}"
        _drop_lease(self.kube_api)

    def close(self) -> None:
        for proc in self.running:
            proc.stop()
        self.running.clear()


@pytest.fixture
def operators_of(controller: ControllerProcess, cluster: Cluster, kube_api: Any,
                 tmp_path: Path) -> Iterator[Handover]:
    """The session controller stopped for the test (the operators of the test stopped and it
    started again afterwards)."""
    if not isinstance(controller, ControllerProcess):
        pytest.skip("needs the local process controller (it is stopped for the handover)")
    operators.build_reference("mpi-operator")  # `make test` built it; minutes when cold
    assert controller.stop() == 0, controller.log()[-3000:]
    handover = Handover(cluster, kube_api, tmp_path)
    try:
        yield handover
    finally:
        handover.close()
        _drop_lease(kube_api)
        controller.start()
        wait_for(controller.ready, timeout=120, what="the session controller to be ready again")


def _reference_built(name: str) -> bool:
    return (Path(operators.reference("bin-dir", name)) / name).exists()


def _mpijob_children(jobs: MPIJobs, name: str) -> dict[str, str]:
    """kind/name -> uid of every child of MPIJob ``name``."""
    ns = jobs.namespace
    found: dict[str, str] = {}
    for kind, items in (
        ("Job", jobs.batch.list_namespaced_job(ns).items),
        ("Pod", jobs.core.list_namespaced_pod(ns).items),
        ("Service", jobs.core.list_namespaced_service(ns).items),
        ("ConfigMap", jobs.core.list_namespaced_config_map(ns).items),
        ("Secret", jobs.core.list_namespaced_secret(ns).items),
    ):
        for obj in items:
            owners = obj.metadata.owner_references or []
            if any(o.kind == "MPIJob" and o.name == name and o.controller for o in owners):
                found[f"{kind}/{obj.metadata.name}"] = obj.metadata.uid
    return found


def _condition(job: dict[str, Any], ctype: str) -> dict[str, Any]:
    [found] = [c for c in job["status"]["conditions"] if c["type"] == ctype]
    return found


def _reasons(jobs: MPIJobs, name: str) -> list[str]:
    return [reason for _, reason, _ in jobs.events(name)]


def _handed_over_mpijob(operators_of: Handover, namespace: str, first: str,
                        then: str) -> None:
    jobs = MPIJobs(operators_of.kube_api, namespace)
    before = operators_of.start(first)
    name = unique_name("handover")
    jobs.create(small_job(name, workers=2, launcher_runs="30s"))
    created = _condition(jobs.wait_condition(name, "Running", timeout=120), "Created")
    wait_for(lambda: "MPIJobRunning" in _reasons(jobs, name), timeout=30,
             what="the MPIJobRunning Event")
    children = _mpijob_children(jobs, name)
    assert {k for k in children if not k.startswith("Pod/")} == {
        f"Job/{name}-launcher", f"Service/{name}", f"ConfigMap/{name}-config",
        f"Secret/{name}-ssh"}
    assert {k for k in children if k.startswith("Pod/") and "-worker-" in k} == {
        f"Pod/{name}-worker-0", f"Pod/{name}-worker-1"}
    operators_of.stop(before)

    operators_of.start(then)
    job = jobs.wait_condition(name, "Succeeded", timeout=180)
    status = job["status"]
    assert [c["type"] for c in status["conditions"]] == ["Created", "Running", "Succeeded"]
    assert _condition(job, "Created") == created  # the newcomer did not start the job again
    assert status["replicaStatuses"]["Launcher"] == {"succeeded": 1}
    assert status["startTime"]
    assert status["completionTime"]
    after = _mpijob_children(jobs, name)
    # The newcomer adopted what it found: nothing it owns was made again (the Running workers
    # are deleted at the end, cleanPodPolicy Running, so only what is left is compared).
    assert {k: after[k] for k in after if k in children} == \
        {k: children[k] for k in after if k in children}
    assert set(after) <= set(children), f"made anew: {sorted(set(after) - set(children))}"
    wait_for(lambda: "MPIJobSucceeded" in _reasons(jobs, name), timeout=30,
             what="the MPIJobSucceeded Event")
    reasons = _reasons(jobs, name)
    assert reasons.count("MPIJobCreated") == 1, reasons
    assert "ErrResourceExists" not in reasons, reasons


def test_mpijob_handed_from_mpi_operator_to_ours(operators_of: Handover, namespace: str) -> None:
    """docs/install.md's migration: mpi-operator scaled to 0, ours started; the running job
    finishes under ours."""
    _handed_over_mpijob(operators_of, namespace, "mpi-operator", "ours")


def test_mpijob_handed_back_from_ours_to_mpi_operator(operators_of: Handover,
                                                      namespace: str) -> None:
    """docs/install.md's way back: ours scaled to 0, mpi-operator started again; the running
    job finishes under mpi-operator."""
    _handed_over_mpijob(operators_of, namespace, "ours", "mpi-operator")


def _tfjob_children(jobs: TFJobs, name: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for kind, items in (("Pod", jobs.core.list_namespaced_pod(jobs.namespace).items),
                        ("Service", jobs.core.list_namespaced_service(jobs.namespace).items)):
        for obj in items:
            if any(o.kind == "TFJob" and o.name == name for o in obj.metadata.owner_references
                   or []):
                found[f"{kind}/{obj.metadata.name}"] = obj.metadata.uid
    return found


def test_tfjob_handed_from_training_operator_to_ours(operators_of: Handover,
                                                     namespace: str) -> None:
    """training-operator (TFJob scheme) scaled to 0, ours started: the running TFJob finishes
    under ours with the pods and Services training-operator made."""
    if not _reference_built("training-operator"):
        pytest.skip("training-operator is not built: `hack/reference-operators.sh build "
                    "training-operator` (make conformance builds it)")
    jobs = TFJobs(operators_of.kube_api, namespace)
    before = operators_of.go("training-operator", "--enable-scheme", "tfjob")
    name = unique_name("tf-handover")
    jobs.create(tfjob(name, {"Worker": replica(2, annotations={DURATION: "30s"})}))
    created = _condition(jobs.wait_condition(name, "Running", timeout=120), "Created")
    children = _tfjob_children(jobs, name)
    assert set(children) == {f"{k}/{name}-worker-{i}" for k in ("Pod", "Service")
                             for i in range(2)}
    operators_of.stop(before)

    operators_of.ours("--enable-scheme", "tfjob")
    job = jobs.wait_condition(name, "Succeeded", timeout=180)
    assert [(c["type"], c["status"]) for c in job["status"]["conditions"]] == [
        ("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
    assert _condition(job, "Created") == created
    assert job["status"]["replicaStatuses"]["Worker"]["succeeded"] == 2
    after = _tfjob_children(jobs, name)
    assert after == {k: children[k] for k in after}, "a child was made again"
    # training-operator records no Event when it sees a new job: ours, taking over a job whose
    # Created condition is set, records none either. Worker 0's exit ends the job (no chief):
    # worker 1's exit gets an ExitedWithCode only if a sync saw it before that, as
    # training-operator's reconcile, which stops reconciling pods once the job succeeded.
    # Events are written after the sync that records them (the status may land first): polled.
    exited = [f"Pod: {namespace}.{name}-worker-{i} exited with code 0" for i in range(2)]

    def recorded() -> list[tuple[str, str]]:
        return sorted((reason, message) for _, reason, message in jobs.events(name)
                      if reason != "ExitedWithCode" or message != exited[1])
    wait_for(lambda: len(recorded()) >= 6, timeout=30, what="the TFJob's Events")
    assert [r for r, _ in recorded()] == ["ExitedWithCode"] + ["SuccessfulCreatePod"] * 2 + [
        "SuccessfulCreateService"] * 2 + ["TFJobSucceeded"], jobs.events(name)
    assert ("ExitedWithCode", exited[0]) in recorded()


def test_side_by_side_with_mpi_operator(operators_of: Handover, namespace: str) -> None:
    """mpi-operator runs the MPIJobs, ours only the TFJobs with its Lease elsewhere: both jobs
    succeed at once, each under its own operator."""
    lease_ns = unique_name("lease")
    client.CoreV1Api(operators_of.kube_api).create_namespace({"metadata": {"name": lease_ns}})
    try:
        go = operators_of.go("mpi-operator")
        ours = operators_of.ours("--enable-scheme", "tfjob", "--lock-namespace", lease_ns)
        mpi = MPIJobs(operators_of.kube_api, namespace)
        tf = TFJobs(operators_of.kube_api, namespace)
        mpi.create(small_job("beside-mpi", workers=1, launcher_runs="3s"))
        tf.create(tfjob("beside-tf", {"Worker": replica(1, annotations={DURATION: "3s"})}))
        mpi.wait_condition("beside-mpi", "Succeeded", timeout=120)
        tf.wait_condition("beside-tf", "Succeeded", timeout=120)
        assert "beside-tf" not in go.log()
        assert "beside-mpi" not in ours.log()
        assert "beside-tf" in ours.log()  # ours logs each phase change with the job key
        lease = client.CoordinationV1Api(operators_of.kube_api).read_namespaced_lease(
            "mpi-operator", lease_ns)
        assert lease.spec.holder_identity
    finally:
        client.CoreV1Api(operators_of.kube_api).delete_namespace(lease_ns)
