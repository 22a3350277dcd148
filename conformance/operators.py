"""The operators under comparison, each a separate process with its log in a file.

* ``ours``: ``python -m mpi_controller run --kubeConfig ...``, as e2e/conftest.py starts it;
  ready once it logs ``caches synced``.
* ``go``: the reference binary built by ``hack/reference-operators.sh`` (mpi-operator v0.8.2);
  ready once it logs ``Started workers``. It always runs leader election and serves
  ``/healthz`` on the fixed port 8080, so two of them never run at once here.

Both get the same flags; ours also gets ``--health-port`` (a free port, so it never collides
with the reference binary's fixed 8080) and ``--log-format json``, which change no behaviour.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE_SCRIPT = REPO / "hack" / "reference-operators.sh"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


@dataclass
class OperatorProcess:
    """One operator process: ``argv``, ready when ``ready_marker`` appears in its log."""

    name: str
    argv: list[str]
    log_path: Path
    ready_marker: str
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # Like the Go operator, ours lets $KUBECONFIG override --kubeConfig: never pass it on.
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env.update(self.env)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_ready(self, timeout: float = 120) -> float:
        """Seconds until the ready marker is logged; raises if the process exits first."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.ready_marker in self.log():
                return round(time.monotonic() - start, 2)
            if not self.alive():
                raise RuntimeError(f"{self.name} exited with {self.proc and self.proc.returncode}"
                                   f" before it was ready:\n{self.log()[-3000:]}")
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} was not ready after {timeout}s:\n{self.log()[-3000:]}")

    def stop(self, timeout: float = 30) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


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
    return OperatorProcess(
        "ours",
        [sys.executable, "-m", "mpi_controller", "run", "--kubeConfig", str(kubeconfig), *flags,
         "--health-port", str(free_port()), "--log-format", "json"],
        log_path, "caches synced", env={"PYTHONUNBUFFERED": "1"})


def go_mpi_operator(kubeconfig: Path, flags: list[str], log_path: Path) -> OperatorProcess:
    if port_in_use(8080):
        raise RuntimeError("port 8080 is in use: mpi-operator serves /healthz there (fixed in "
                           "its code) and would exit; stop whatever listens on 8080 first")
    binary = Path(reference("bin-dir", "mpi-operator")) / "mpi-operator"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run hack/reference-operators.sh build")
    return OperatorProcess("go", [str(binary), "--kubeConfig", str(kubeconfig), *flags],
                           log_path, "Started workers")


REFERENCE = {"mpi-operator": go_mpi_operator}


def reference_factory(name: str) -> Callable[[Path, list[str], Path], OperatorProcess]:
    """The process factory of a reference operator (``hack/reference-operators.sh`` names)."""
    return REFERENCE[name]
