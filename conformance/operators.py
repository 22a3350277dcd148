"""The operators under comparison, each a separate process with its log in a file.

* ``ours``: ``python -m mpi_controller run --kubeConfig ...``
  (:class:`tests.processes.ControllerProcess`); ready once ``/readyz`` answers 200.
* ``go``: the reference binary built by ``hack/reference-operators.sh``: mpi-operator v0.8.2
  or v0.2.3 (``cmd/mpi-operator.v1alpha2``), ready once it logs ``Started workers`` (both
  always run leader election, v0.2.3 on an Endpoints lock, and serve ``/healthz`` on the
  fixed port 8080, so two of them never run at once here), or training-operator v1.9.2
  (:mod:`conformance.training_operator`), or Kubeflow Trainer v2.3.0's controller manager
  (:mod:`conformance.trainer`).

Both get the same flags; ours also gets ``--health-port`` and ``--monitoring-port`` (free
ports, so they never collide with the reference binary's fixed 8080) and ``--log-format
json``, which change no behaviour. Processes are :class:`tests.processes.OperatorProcess`, the
harness the e2e tests, fault runs and benchmarks use too.
"""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.processes import ControllerProcess, OperatorProcess

REPO = Path(__file__).resolve().parent.parent
TRAINER_CRDS = REPO / "deploy" / "crd" / "trainjob"
"""Our ``trainer.kubeflow.org`` CRDs (outside the default install: ``deploy/crd/trainjob``)."""
REFERENCE_SCRIPT = REPO / "hack" / "reference-operators.sh"


def reference(*args: str) -> str:
    """``hack/reference-operators.sh ARGS``; its last output line (a path for bin-dir and
    module-dir). Builds print their progress on stderr, which is passed through."""
    out = subprocess.run(["bash", str(REFERENCE_SCRIPT), *args], check=True, text=True,
                         stdout=subprocess.PIPE, timeout=3600)
    lines = out.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def build_reference(*operators: str) -> float:
    """Build (or reuse) the reference binaries; returns the seconds it took."""
    start = time.monotonic()
    reference("build", *operators)
    return round(time.monotonic() - start, 1)


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def stop_pid(pid: int, timeout: float = 30) -> None:
    """SIGTERM a process this tooling started (by its pid), SIGKILL after ``timeout``."""
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.2)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return


def ours(kubeconfig: Path, flags: list[str], log_path: Path) -> OperatorProcess:
    return ControllerProcess(str(kubeconfig), log_path, *flags, defaults=())


def go_mpi_operator(kubeconfig: Path, flags: list[str], log_path: Path, *,
                    name: str = "mpi-operator") -> OperatorProcess:
    """mpi-operator (``name``: ``mpi-operator`` or ``mpi-operator-v0.2``, as
    ``hack/reference-operators.sh`` names them); both versions take ``--kubeConfig``."""
    if port_in_use(8080):
        raise RuntimeError("port 8080 is in use: mpi-operator serves /healthz there (fixed in "
                           "its code) and would exit; stop whatever listens on 8080 first")
    binary = Path(reference("bin-dir", name)) / "mpi-operator"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run hack/reference-operators.sh build {name}")
    return OperatorProcess("go", [str(binary), "--kubeConfig", str(kubeconfig), *flags],
                           log_path, ready_marker="Started workers")


Factory = Callable[[Path, list[str], Path], OperatorProcess]


def reference_factory(name: str) -> Factory:
    """The process factory of a reference operator (``hack/reference-operators.sh`` names)."""
    if name in ("mpi-operator", "mpi-operator-v0.2"):
        return functools.partial(go_mpi_operator, name=name)
    if name == "training-operator":  # imported here: it uses this module
        from conformance.training_operator import reference_process

        return reference_process
    if name == "trainer":
        from conformance.trainer import reference_process as trainer_process

        return trainer_process
    raise ValueError(f"unknown reference operator {name!r}")
