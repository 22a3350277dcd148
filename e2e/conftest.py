"""e2e fixtures: mpi-controller as a separate process (``mpi-controller run --kubeConfig``,
:class:`tests.processes.ControllerProcess`) against the whole cluster, with the CRDs installed
(it runs every kind whose CRD is)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.processes import ControllerProcess
from tests.support import Cluster, wait_for


class InClusterController:
    """The controller Deployment of ``hack/kind-e2e.sh`` (``MPI_CONTROLLER_E2E_IN_CLUSTER=1``):
    ``kill`` force-deletes its pod (the Deployment starts another), ``start`` waits for it."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.starts = 1

    def _ns(self, *args: str, check: bool = True) -> str:
        return self.cluster.kubectl("-n", "mpi-operator", *args, check=check)

    def start(self) -> None:
        self.starts += 1
        self._ns("rollout", "status", "deployment/mpi-operator", "--timeout=180s")

    def kill(self) -> None:
        self._ns("delete", "pod", "-l", "app=mpi-operator", "--grace-period=0", "--force")

    def stop(self) -> int:
        return 0

    def alive(self) -> bool:
        return True

    def log(self) -> str:
        return self._ns("logs", "deployment/mpi-operator", "--tail=-1", check=False)


def _controller_kubeconfig(cluster: Cluster) -> str:
    """The local cluster gives the controller its own identity (seen in the audit log)."""
    if cluster.local:
        path = Path(cluster.kubeconfig).with_name("kubeconfig-controller")
        if path.exists():
            return str(path)
    return cluster.kubeconfig


@pytest.fixture(scope="session")
def controller(cluster: Cluster, job_crds: dict[str, str],
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControllerProcess]:
    if os.environ.get("MPI_CONTROLLER_E2E_IN_CLUSTER") == "1":
        in_cluster = InClusterController(cluster)
        in_cluster.start()
        yield in_cluster  # type: ignore[misc]
        return
    cluster.kubectl("create", "namespace", "mpi-operator", check=False)
    log = tmp_path_factory.mktemp("controller") / "mpi-controller.log"
    proc = ControllerProcess(_controller_kubeconfig(cluster), log)
    proc.start()
    wait_for(lambda: "caches synced" in proc.log() or not proc.alive(), timeout=60,
             what="the controller to sync its caches")
    assert proc.alive(), proc.log()
    yield proc
    code = proc.stop()
    assert code == 0, f"controller exited {code} on SIGTERM:\n{proc.log()[-4000:]}"


@pytest.fixture
def cleanup() -> Iterator[list[Callable[[], None]]]:
    """Calls appended to the list run at the end of the test, last first."""
    calls: list[Callable[[], None]] = []
    yield calls
    for call in reversed(calls):
        call()
