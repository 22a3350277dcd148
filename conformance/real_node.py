"""Upstream's e2e specs that need real MPI processes, on the local cluster's real node.

On the KWOK nodes a launcher is simulated and exits 0, so mpi-operator v0.8.2's spec "MPIJob
with OpenMPI implementation when has malformed command should fail" (``mpirun`` as root
without ``--allow-run-as-root``, the launcher Job's ``backoffLimit`` 1) cannot fail there and
is skipped (:data:`conformance.e2e_suite.SKIPS`). This part runs exactly those specs on a
cluster with a real node (``hack/local-cluster.sh up --real-node``, state in
``REAL_CLUSTER_DIR``, default ``~/.cache/mpi-controller/cluster-real``), against each
operator in turn, with:

* ``TEST_OPENMPI_IMAGE`` (the suite's own variable) naming the OpenMPI pi image built here
  (the suite's default, ``mpioperator/mpi-pi:openmpi``, comes from a registry this machine
  cannot reach);
* the KWOK nodes cordoned and the real node's taint lifted while the specs run (the suite's
  pods tolerate nothing), both restored afterwards.

:func:`unavailable` says why the part cannot run here (the real node's binaries and images
not built yet: ``make e2e-real`` builds them; or the machine cannot run a real node): the
specs are then reported skipped with that reason, nothing passes. A real-node cluster this
part started is taken down at the end; one that was running is left running.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from conformance.e2e_suite import SKIPS, SpecResult
from conformance.kube import Kube
from conformance.operators import REPO

__all__ = ["REAL_SPECS", "cluster_dir", "real_node_cluster", "real_specs", "unavailable",
           "workloads_on_the_real_node"]

REAL_SPECS = (r"has malformed command",)
"""The patterns (of :data:`conformance.e2e_suite.SKIPS`) of the specs this part runs."""

assert all(any(p == pattern for pattern, _ in SKIPS) for p in REAL_SPECS)

_HACK = REPO / "hack" / "local-cluster.sh"


def cluster_dir() -> Path:
    return Path(os.environ.get("REAL_CLUSTER_DIR")
                or Path.home() / ".cache" / "mpi-controller" / "cluster-real")


def _hack(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPI_CONTROLLER_CLUSTER_DIR": str(cluster_dir())}
    return subprocess.run(["bash", str(_HACK), *args], capture_output=True, text=True,
                          env=env, check=check)


def unavailable() -> str:
    """Why the real node cannot serve here (``""`` when it can)."""
    missing = _hack("real-node-uncached").stdout.strip()
    if missing:
        return (f"the real node is not built on this machine yet ({missing}); "
                "`make e2e-real` builds it (10 to 16 minutes the first time)")
    check = _hack("real-node-check")
    if check.returncode != 0:
        return (check.stdout + check.stderr).strip() or "the real node cannot run here"
    return ""


def real_specs(specs: list[str]) -> list[str]:
    """The spec texts of ``specs`` this part runs."""
    return [t for t in specs if any(re.search(p, t) for p in REAL_SPECS)]


@contextmanager
def real_node_cluster(log: Callable[[str], None]) -> Iterator[Path]:
    """The admin kubeconfig of a cluster with a real node, up for the block."""
    kubeconfig = cluster_dir() / "kubeconfig"
    running = _answers(kubeconfig) and (cluster_dir() / "realnode" / "images.env").exists()
    if not running:
        log("starting a cluster with a real node")
        up = _hack("up", "--real-node")
        if up.returncode != 0:
            raise RuntimeError("hack/local-cluster.sh up --real-node failed:\n"
                               + (up.stdout + up.stderr)[-3000:])
    try:
        yield kubeconfig
    finally:
        if not running:
            _hack("down")


def _answers(kubeconfig: Path) -> bool:
    if not kubeconfig.exists():
        return False
    kube = Kube(kubeconfig)
    try:
        kube.get("/version")
    except Exception:  # not running (connection refused), or not reachable
        return False
    finally:
        kube.close()
    return True


def images(state: Path) -> dict[str, str]:
    """The real node's image names by variable (``MPI_PI_OPENMPI_IMAGE``...)."""
    text = (state / "realnode" / "images.env").read_text()
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs}


@contextmanager
def workloads_on_the_real_node(kube: Kube) -> Iterator[None]:
    """KWOK nodes cordoned and the real node's taint lifted for the block (restored after)."""
    env = images(cluster_dir())
    node, label = env["REAL_NODE"], env["REAL_NODE_LABEL"]
    others = [n["metadata"]["name"] for n in kube.get("/api/v1/nodes")["items"]
              if n["metadata"]["name"] != node and not n["spec"].get("unschedulable")]
    for name in others:
        kube.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"unschedulable": True}})
    taints = kube.get(f"/api/v1/nodes/{node}")["spec"].get("taints") or []
    kube.merge_patch(f"/api/v1/nodes/{node}", {"spec": {"taints": [
        t for t in taints if t.get("key") != label] or None}})
    try:
        yield
    finally:
        kube.merge_patch(f"/api/v1/nodes/{node}", {"spec": {"taints": taints or None}})
        for name in others:
            kube.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"unschedulable": None}})


def skipped(specs: list[str], reason: str) -> list[SpecResult]:
    return [SpecResult(t, "skipped", 0.0, reason) for t in specs]
