"""Shared test support: the cluster under test, polling with a deadline, namespaces.

The cluster is either the one ``$KUBECONFIG`` points to (when it is set and answers), such as
kind, or the local control plane started by ``hack/local-cluster.sh up``. Tests that need to
restart or compact parts of the control plane use :class:`Cluster` methods that exist only for
the local cluster (``cluster.local`` is True).
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
HACK = REPO / "hack" / "local-cluster.sh"

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """A polled condition did not hold before its deadline."""


class _Poll:
    """One polling run: call ``probe`` until truthy or the deadline passes."""

    def __init__(self, probe: Callable[[], object], timeout: float, what: str) -> None:
        self.probe = probe
        self.timeout = timeout
        self.what = what
        self.deadline = time.monotonic() + timeout
        self.last_exc: BaseException | None = None
        self.last_value: object = None

    def attempt(self) -> bool:
        """True when the probe held; raises WaitTimeout once past the deadline."""
        try:
            self.last_value = self.probe()
            if self.last_value:
                return True
        except Exception as exc:
            self.last_exc = exc
        if time.monotonic() >= self.deadline:
            detail = (f"; last error: {self.last_exc!r}" if self.last_exc
                      else f"; last value: {self.last_value!r}")
            raise WaitTimeout(f"timed out after {self.timeout}s waiting for {self.what}{detail}")
        return False


def wait_pods_succeeded(list_pods: Callable[[], list[dict[str, Any]]], what: str,
                        timeout: float = 30.0) -> list[dict[str, Any]]:
    """Poll ``list_pods()`` until every pod it lists is Succeeded, and return them. A job its
    master decides counts its still active replicas as succeeded (upstream's ReconcileJobs),
    so its other pods may end a moment after the job's status says so."""
    def all_succeeded() -> list[dict[str, Any]] | None:
        got = list_pods()
        return got if all(p["status"].get("phase") == "Succeeded" for p in got) else None

    return wait_for(all_succeeded, timeout=timeout, what=f"every pod of {what} Succeeded")


def wait_for(
    probe: Callable[[], T | None],
    *,
    timeout: float = 30.0,
    interval: float = 0.1,
    what: str = "condition",
) -> T:
    """Call ``probe`` until it returns a truthy value, and return it; fail after ``timeout``.

    Exceptions from ``probe`` count as "not yet" until the deadline, then the last one is
    reported with the timeout.
    """
    poll = _Poll(probe, timeout, what)
    while not poll.attempt():
        time.sleep(interval)
    return poll.last_value  # type: ignore[return-value]


async def async_wait_for(
    probe: Callable[[], T | None],
    *,
    timeout: float = 30.0,
    interval: float = 0.05,
    what: str = "condition",
) -> T:
    """Like :func:`wait_for` but yields to the event loop between polls (probe is sync)."""
    import asyncio

    poll = _Poll(probe, timeout, what)
    while not poll.attempt():
        await asyncio.sleep(interval)
    return poll.last_value  # type: ignore[return-value]


def server_minor(cluster: Cluster) -> int:
    """The minor version of the cluster's API server (``36`` for 1.36.3)."""
    import json

    version = json.loads(cluster.kubectl("version", "-o", "json"))["serverVersion"]
    return int(version["minor"].rstrip("+"))


TRAINER_MIN_MINOR = 31
"""TrainJob's runtime CRDs (Kubeflow Trainer v2.3.0's) need Kubernetes 1.31: 1.30 cannot
compile their CEL rule that reads an embedded template's ``metadata.namespace``."""


def rbac_denied(log: str) -> bool:
    """The controller's log shows an RBAC denial (``... is forbidden: User "..." cannot ...``),
    not any 'Forbidden': a server without WatchList (before 1.34) refuses a streaming list with
    ``sendInitialEvents: Forbidden``, a 422 the reflector answers with a LIST."""
    return "is forbidden: user" in log.lower()


def unique_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@dataclass
class Cluster:
    """The cluster under test."""

    kubeconfig: str
    local: bool

    def hack(self, *args: str, timeout: float = 300) -> str:
        """Run ``hack/local-cluster.sh ARGS`` (local cluster only) and return its stdout."""
        if not self.local:
            raise RuntimeError("this operation needs the local control plane")
        env = {**os.environ, "MPI_CONTROLLER_CLUSTER_DIR": str(Path(self.kubeconfig).parent)}
        out = subprocess.run(
            ["bash", str(HACK), *args], check=True, capture_output=True, text=True,
            timeout=timeout, env=env,
        )
        return out.stdout

    def restart_apiserver(self) -> None:
        self.hack("restart", "kube-apiserver")

    def stop(self, component: str) -> None:
        self.hack("stop", component)

    def start(self, component: str) -> None:
        self.hack("start", component)

    def compact_etcd(self) -> int:
        """Compact etcd at its current revision; returns that revision."""
        return int(self.hack("compact").strip().splitlines()[-1])

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> str:
        binary = os.environ.get("KUBECTL") or _local_kubectl()
        out = subprocess.run(
            [binary, "--kubeconfig", self.kubeconfig, *args],
            capture_output=True, text=True, input=input, timeout=120,
        )
        if check and out.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} exited {out.returncode}: {out.stderr}")
        return out.stdout


def token_kubeconfig(cluster: Cluster, namespace: str, service_account: str,
                     path: Path) -> str:
    """Write a kubeconfig for ``cluster`` that authenticates as the ServiceAccount (a token
    from ``kubectl create token``, valid 1 h) to ``path``; returns the path."""
    import yaml

    token = cluster.kubectl("create", "token", service_account, "-n", namespace,
                            "--duration=1h").strip()
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    config["users"] = [{"name": "sa", "user": {"token": token}}]
    for ctx in config["contexts"]:
        ctx["context"]["user"] = "sa"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def _local_kubectl() -> str:
    bin_dir = subprocess.run(
        ["bash", str(HACK), "bin-dir"], check=True, capture_output=True, text=True
    ).stdout.strip()
    path = Path(bin_dir) / "kubectl"
    return str(path) if path.exists() else "kubectl"
