"""e2e fixtures: mpi-controller as a separate process (``mpi-controller run --kubeConfig``)
against the whole cluster, with the CRDs installed (it runs every kind whose CRD is)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import Cluster, wait_for


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_get(port: int, path: str) -> tuple[int, str]:
    """(status, body) of GET http://127.0.0.1:port/path; (0, error) when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError as err:
        return 0, str(err)


class ControllerProcess:
    """A running ``mpi-controller run`` process; logs go to ``log_path``."""

    def __init__(self, kubeconfig: str, log_path: Path, *extra: str) -> None:
        self.kubeconfig = kubeconfig
        self.log_path = log_path
        self.extra = extra
        self.health_port = free_port()
        self.monitoring_port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mpi_controller", "run", "--kubeConfig", self.kubeconfig,
             "--health-port", str(self.health_port),
             "--monitoring-port", str(self.monitoring_port), "--log-format", "json",
             "--kube-api-qps", "50", "--kube-api-burst", "100", *self.extra],
            stdout=log, stderr=subprocess.STDOUT, env=self._env(),
        )
        log.close()

    @staticmethod
    def _env() -> dict[str, str]:
        """The environment without KUBECONFIG: like the Go operator, ``run`` lets
        ``$KUBECONFIG`` override ``--kubeConfig``, and each process here must use its own."""
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise
        return self.proc.returncode

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


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
def controller(cluster: Cluster, mpijob_crd: str, tfjob_crd: str,
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
