"""Operator processes for e2e tests, fault runs, the conformance runner and benchmarks: one
harness for all of them.

* :class:`OperatorProcess`: any operator binary as a child process (its own session), output
  appended to a log file, never given ``$KUBECONFIG`` (the Go mpi-operator lets it override
  ``--kubeConfig``, and each process here must use its own); ready
  when a marker appears in its log; SIGTERM with a SIGKILL fallback; restartable.
* :class:`ControllerProcess`: ``mpi-controller run`` (``python -m mpi_controller run``) with its
  own health and metrics ports, ready when ``/readyz`` answers 200.
* :class:`ProcSampler`: CPU seconds and RSS of a process, sampled from ``/proc`` every 0.2 s.
* :func:`stub_api_server`: a stub API server script run as a child process, and a kubeconfig
  pointing at it.
* :func:`compile_package`: a package's modules compiled to bytecode (``__pycache__``), as an
  installed package has them, so a controller started from a source tree does not compile
  every module again at each start (where ``PYTHONDONTWRITEBYTECODE`` is set, nothing else
  writes them).
* :func:`free_port`, :func:`http_get`.
"""

from __future__ import annotations

import compileall
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ControllerProcess", "OperatorProcess", "ProcSampler", "compile_package", "free_port",
           "http_get"]

CLK_TCK = os.sysconf("SC_CLK_TCK")


_HANDED_OUT: set[int] = set()
_COMPILED: set[Path] = set()


def compile_package(directory: Path) -> None:
    """Compile every module under ``directory`` to bytecode next to it (``__pycache__``),
    once per directory in this process. ``pip install`` does this for an installed package
    (the image's); a source tree on ``PYTHONPATH`` or installed editable has none, and with
    ``PYTHONDONTWRITEBYTECODE=1`` (set on the machines here) its imports never write them, so
    each start of a controller would compile ~240 modules again (~0.1 s of CPU). For the
    controller's package it also writes the compiled dataclass methods
    (``python -m mpi_controller.startcache``, as the image's build does). Raises when a module
    does not compile."""
    directory = directory.resolve()
    if directory in _COMPILED:
        return
    if not compileall.compile_dir(str(directory), quiet=1):
        raise RuntimeError(f"compiling the modules under {directory} failed")
    if (directory / "startcache.py").exists():  # the controller's package: as the image does
        subprocess.run([sys.executable, "-m", f"{directory.name}.startcache"],
                       cwd=directory.parent, check=True)
    _COMPILED.add(directory)


def free_port() -> int:
    """A port nothing listens on now, never one this process handed out before: the kernel
    may give a just-closed ephemeral port again, and a controller given the same port for two
    of its servers fails with 'address already in use' (seen once in CI)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


@contextmanager
def stub_api_server(tmp_path: Path, script: str, *, user: str = "{}") -> Iterator[Path]:
    """Run ``script`` (a Python stub API server that prints its port on its first line of
    output) and yield a kubeconfig for ``http://127.0.0.1:<port>`` with ``user`` (YAML flow
    text) as its user; the stub is stopped on exit."""
    path = tmp_path / "stub.py"
    path.write_text(script)
    stub = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert stub.stdout is not None
        port = int(stub.stdout.readline())
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
            f"clusters: [{{name: x, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
            "contexts: [{name: x, context: {cluster: x, user: x}}]\n"
            f"users: [{{name: x, user: {user}}}]\n")
        yield kubeconfig
    finally:
        stub.terminate()
        stub.wait(timeout=10)


def http_get(port: int, path: str) -> tuple[int, str]:
    """(status, body) of GET http://127.0.0.1:port/path; (0, error) when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError as err:
        return 0, str(err)


class OperatorProcess:
    """``argv`` as a child process logging to ``log_path`` (see the module doc)."""

    def __init__(self, name: str, argv: list[str], log_path: Path, *, ready_marker: str = "",
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.ready_marker = ready_marker
        self.env = dict(env or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.started_at = 0.0

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env.update(self.env)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        self.started_at = time.time()
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                         env=env, start_new_session=True)

    @property
    def pid(self) -> int:
        assert self.proc is not None, f"{self.name} was never started"
        return self.proc.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ready(self) -> bool:
        return bool(self.ready_marker) and self.ready_marker in self.log()

    def wait_ready(self, timeout: float = 120) -> float:
        """Seconds from now until :meth:`ready`; raises if the process exits first or the
        deadline passes."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.ready():
                return round(time.monotonic() - start, 2)
            if not self.alive():
                code = self.proc.returncode if self.proc else None
                raise RuntimeError(f"{self.name} exited with {code} before it was ready:\n"
                                   f"{self.log()[-3000:]}")
            time.sleep(0.05)
        raise RuntimeError(f"{self.name} was not ready after {timeout}s:\n{self.log()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL, and wait for it."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self, timeout: float = 30) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; returns the exit code (None if never
        started)."""
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


class ControllerProcess(OperatorProcess):
    """``mpi-controller run --kubeConfig KUBECONFIG`` with free health and metrics ports and
    JSON logs, plus ``extra`` flags (later flags win, so ``extra`` may override the defaults
    ``--kube-api-qps 50 --kube-api-burst 100``)."""

    def __init__(self, kubeconfig: str, log_path: Path, *extra: str,
                 defaults: tuple[str, ...] = ("--kube-api-qps", "50", "--kube-api-burst", "100"),
                 ) -> None:
        self.kubeconfig = kubeconfig
        self.extra = extra
        self.health_port = free_port()
        self.monitoring_port = free_port()
        compile_package(Path(__file__).resolve().parent.parent / "mpi_controller")
        argv = [sys.executable, "-m", "mpi_controller", "run", "--kubeConfig", kubeconfig,
                "--health-port", str(self.health_port),
                "--monitoring-port", str(self.monitoring_port), "--log-format", "json",
                *defaults, *extra]
        super().__init__("mpi-controller", argv, log_path, env={"PYTHONUNBUFFERED": "1"})

    def ready(self) -> bool:
        """``/readyz`` answers 200 (every runnable ready and, when leading, caches synced)."""
        return http_get(self.health_port, "/readyz")[0] == 200


class ProcSampler:
    """Samples a process's CPU seconds and RSS from ``/proc`` every ``interval`` seconds in a
    thread, until it exits or :meth:`stop` is called."""

    def __init__(self, pid: int, *, interval: float = 0.2) -> None:
        self.pid = pid
        self.interval = interval
        self.samples: list[tuple[float, float, int]] = []  # (wall, cpu seconds, rss bytes)
        self.peak_rss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def read(self) -> tuple[float, int, int] | None:
        """(cpu seconds, rss bytes, peak rss bytes), or None once the process is gone."""
        return self.read_pid(self.pid)

    @staticmethod
    def read_pid(pid: int) -> tuple[float, int, int] | None:
        """:meth:`read` for any process ``pid``."""
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return None
        fields = stat.rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
        mem = {line.split(":")[0]: line.split()[1] for line in status.splitlines()
               if line.startswith(("VmRSS", "VmHWM"))}
        return cpu, int(mem.get("VmRSS", 0)) * 1024, int(mem.get("VmHWM", 0)) * 1024

    @staticmethod
    def switches_pid(pid: int) -> tuple[int, int] | None:
        """``pid``'s context switches so far, summed over its live threads: (voluntary,
        involuntary), or None once it is gone. A voluntary switch is a thread going to sleep
        (waiting for I/O, a timer or a lock): each costs the CPU of waking up again. An
        involuntary one is a thread preempted by another task. Threads that have exited are
        not counted (the operators measured keep theirs)."""
        voluntary = involuntary = 0
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            return None
        for task in tasks:
            try:
                status = (task / "status").read_text()
            except OSError:  # exited meanwhile
                continue
            for line in status.splitlines():
                if line.startswith("voluntary_ctxt_switches"):
                    voluntary += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches"):
                    involuntary += int(line.split()[1])
        return voluntary, involuntary

    def _loop(self) -> None:
        while not self._stop.is_set():
            value = self.read()
            if value is None:
                return
            self.samples.append((time.time(), value[0], value[1]))
            self.peak_rss = max(self.peak_rss, value[2])
            self._stop.wait(self.interval)

    def cpu(self) -> float:
        """CPU seconds now (or at the last sample once the process is gone)."""
        value = self.read()
        return value[0] if value else (self.samples[-1][1] if self.samples else 0.0)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
