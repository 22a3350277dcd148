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
from typing import TypeVar

REPO = Path(__file__).resolve().parent.parent
HACK = REPO / "hack" / "local-cluster.sh"

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """A polled condition did not hold before its deadline."""


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
    deadline = time.monotonic() + timeout
    last_exc: BaseException | None = None
    last_value: object = None
    while True:
        try:
            value = probe()
            last_value = value
            if value:
                return value
        except Exception as exc:
            last_exc = exc
        if time.monotonic() >= deadline:
            detail = f"; last error: {last_exc!r}" if last_exc else f"; last value: {last_value!r}"
            raise WaitTimeout(f"timed out after {timeout}s waiting for {what}{detail}")
        time.sleep(interval)


async def async_wait_for(
    probe: Callable[[], T | None],
    *,
    timeout: float = 30.0,
    interval: float = 0.05,
    what: str = "condition",
) -> T:
    """Like :func:`wait_for` but yields to the event loop between polls (probe is sync)."""
    import asyncio

    deadline = time.monotonic() + timeout
    last_exc: BaseException | None = None
    last_value: object = None
    while True:
        try:
            value = probe()
            last_value = value
            if value:
                return value
        except Exception as exc:
            last_exc = exc
        if time.monotonic() >= deadline:
            detail = f"; last error: {last_exc!r}" if last_exc else f"; last value: {last_value!r}"
            raise WaitTimeout(f"timed out after {timeout}s waiting for {what}{detail}")
        await asyncio.sleep(interval)


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
        out = subprocess.run(
            ["bash", str(HACK), *args], check=True, capture_output=True, text=True, timeout=timeout
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


def _local_kubectl() -> str:
    bin_dir = subprocess.run(
        ["bash", str(HACK), "bin-dir"], check=True, capture_output=True, text=True
    ).stdout.strip()
    path = Path(bin_dir) / "kubectl"
    return str(path) if path.exists() else "kubectl"
