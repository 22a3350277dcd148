"""The client's request rate shared fairly: jobs whose pods fail and restart forever keep the
controller's token bucket busy, and a job created after them still runs to its end.

The session controller is stopped for the test; one of our own serves the test's namespace
at the default rate (``--kube-api-qps 5 --kube-api-burst 10``), as a user's would. Its waiting
requests go by the order their jobs were first seen, and a request that has waited
``runtime.throttle.MAX_WAIT`` goes before them all (without it the new job's status write
waited behind the restarting jobs for as long as they ran: no condition after 157 s).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from e2e.conftest import _controller_kubeconfig
from tests.processes import ControllerProcess
from tests.pytorchjobs import PyTorchJobs, pytorchjob
from tests.pytorchjobs import replica as pytorch_replica
from tests.support import Cluster, unique_name, wait_for
from tests.tfjobs import EXIT_CODE, TFJobs, replica, tfjob

pytestmark = pytest.mark.cluster

DURATION = "sim.mpi-controller.io/duration"
RESTARTING_JOBS = 3


@pytest.fixture
def own_controller(controller: ControllerProcess, cluster: Cluster, kube_api: Any,
                   tmp_path: Path) -> Iterator[tuple[str, ControllerProcess]]:
    """(namespace, a controller at the default rate serving only it); the session
    controller stopped meanwhile and started again afterwards."""
    if not isinstance(controller, ControllerProcess):
        pytest.skip("needs the local process controller (it is stopped for the test)")
    core = client.CoreV1Api(kube_api)
    namespace = unique_name("fair")
    core.create_namespace({"metadata": {"name": namespace}})
    assert controller.stop() == 0, controller.log()[-3000:]
    own = ControllerProcess(_controller_kubeconfig(cluster), tmp_path / "fair.log",
                            "--namespace", namespace, "--kube-api-qps", "5",
                            "--kube-api-burst", "10")
    try:
        own.start()
        wait_for(lambda: "caches synced" in own.log() or not own.alive(), timeout=60,
                 what="the test's controller to sync its caches")
        assert own.alive(), own.log()[-3000:]
        yield namespace, own
    finally:
        code = own.stop()
        core.delete_namespace(namespace, propagation_policy="Background")
        controller.start()
        wait_for(controller.ready, timeout=120, what="the session controller to be ready again")
    assert code == 0, own.log()[-3000:]


def _restarting(name: str) -> dict[str, Any]:
    """A PyTorchJob whose three pods exit 137 after a second, forever (``ExitCode``: 137 is
    retryable, so each is deleted and created again, with the job's Events and status)."""
    failing = {EXIT_CODE: "137", DURATION: "1s"}
    return pytorchjob(name, {
        "Master": pytorch_replica(1, restart="ExitCode", annotations=failing),
        "Worker": pytorch_replica(2, restart="ExitCode", annotations=failing)})


def test_a_new_job_finishes_while_older_jobs_restart_forever(
        kube_api: Any, own_controller: tuple[str, ControllerProcess]) -> None:
    namespace, own = own_controller
    loops, jobs = PyTorchJobs(kube_api, namespace), TFJobs(kube_api, namespace)
    names = [f"loop-{i}" for i in range(RESTARTING_JOBS)]
    for name in names:
        loops.create(_restarting(name))
    # The bucket is busy once every restarting job has replaced its pods at least once.
    for name in names:
        loops.watch_condition(name, "Restarting", timeout=90)

    jobs.create(tfjob("victim", {"Worker": replica(1, restart="Never",
                                                   annotations={DURATION: "1s"})}))
    done = jobs.wait_condition("victim", "Succeeded", timeout=60)
    assert [(c["type"], c["status"], c["reason"]) for c in done["status"]["conditions"]] == [
        ("Created", "True", "TFJobCreated"), ("Running", "False", "TFJobRunning"),
        ("Succeeded", "True", "TFJobSucceeded")]
    # The restarting jobs were still at it the whole time (nothing ended them).
    for name in names:
        assert "Succeeded" not in [c[0] for c in loops.conditions(name)], name
    assert own.alive()
