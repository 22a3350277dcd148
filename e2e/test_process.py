"""The controller process: health, readiness and metrics endpoints; a second replica waits
as a standby behind the Lease; SIGTERM exits 0; so does the log's reader going away."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.mpijobs import MPIJobs, small_job
from tests.processes import ControllerProcess, compile_package, free_port, http_get
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster


def test_health_readiness_and_metrics(controller: ControllerProcess, kube_api: Any,
                                      namespace: str) -> None:
    if not isinstance(controller, ControllerProcess):
        pytest.skip("the in-cluster controller's ports are not reachable from here")
    jobs = MPIJobs(kube_api, namespace)
    jobs.create(small_job("metrics", workers=1))
    jobs.wait_condition("metrics", "Succeeded", timeout=90)
    assert http_get(controller.health_port, "/healthz") == (200, "ok")
    assert http_get(controller.health_port, "/readyz") == (200, "ok")
    status, text = http_get(controller.monitoring_port, "/metrics")
    assert status == 200
    lines = text.splitlines()
    assert "mpi_operator_is_leader 1.0" in lines
    assert f'mpi_operator_job_info{{launcher="metrics-launcher",namespace="{namespace}"}} 1.0' \
        in lines
    for name in ("mpi_operator_jobs_created_total", "mpi_operator_jobs_successful_total",
                 "mpi_operator_jobs_failed_total"):
        value = next(float(x.split()[-1]) for x in lines if x.startswith(name + " "))
        assert value >= (0 if "failed" in name else 1), name
    assert any(x.startswith('workqueue_adds_total{name="MPIJob"}') for x in lines)
    assert any(x.startswith('workqueue_depth{name="MPIJob"}') for x in lines)


def test_second_replica_is_a_standby(controller: ControllerProcess, cluster: Cluster,
                                     tmp_path: Path) -> None:
    if not isinstance(controller, ControllerProcess):
        pytest.skip("needs the local process controller")
    second_config = Path(controller.kubeconfig).with_name("kubeconfig-controller-2")
    kubeconfig = str(second_config) if second_config.exists() else controller.kubeconfig
    standby = ControllerProcess(kubeconfig, tmp_path / "standby.log")
    standby.start()
    try:
        wait_for(lambda: http_get(standby.health_port, "/healthz") == (200, "ok"), timeout=30,
                 what="the standby's /healthz")
        # Ready while waiting for the Lease: every replica serves the webhooks.
        assert http_get(standby.health_port, "/readyz") == (200, "ok")
        _, text = http_get(standby.monitoring_port, "/metrics")
        assert "mpi_operator_is_leader 0.0" in text.splitlines()
        holder = cluster.kubectl("get", "lease", "mpi-operator", "-n", "mpi-operator",
                                 "-o", "jsonpath={.spec.holderIdentity}")
        assert holder
        assert "started leading" not in standby.log()
    finally:
        assert standby.stop() == 0, standby.log()[-3000:]


def _piped_controller(controller: ControllerProcess, namespace: str, health_port: int = 0,
                      ) -> subprocess.Popen[bytes]:
    """A second ``mpi-controller run`` (a standby behind the Lease, watching only ``namespace``)
    whose log is a pipe this test reads."""
    compile_package(Path(__file__).resolve().parent.parent / "mpi_controller")
    return subprocess.Popen(
        [sys.executable, "-m", "mpi_controller", "run", "--kubeConfig", controller.kubeconfig,
         "--namespace", namespace, "--health-port", str(health_port), "--monitoring-port", "0",
         "--log-format", "json"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _read_until(proc: subprocess.Popen[bytes], text: str, timeout: float = 60) -> None:
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    seen = b""
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {text!r} in the controller's log after {timeout}s: {seen[-2000:]!r}"
        if select.select([proc.stderr], [], [], left)[0]:
            chunk = os.read(proc.stderr.fileno(), 65536)
            assert chunk, f"log closed before {text!r}: {seen[-2000:]!r}"
            seen += chunk


def _read_until_quiet(proc: subprocess.Popen[bytes], quiet: float = 1.0,
                     timeout: float = 30) -> None:
    """Read the log until it has said nothing for ``quiet`` seconds."""
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while select.select([proc.stderr], [], [], quiet)[0]:
        assert time.monotonic() < deadline, f"the controller's log never went quiet in {timeout}s"
        assert os.read(proc.stderr.fileno(), 65536), "log closed"


def test_the_logs_reader_gone_stops_the_controller_as_sigterm_does(
        controller: ControllerProcess, namespace: str) -> None:
    """``mpi-controller run 2>&1 | head -1``: the next line finds no reader, and the run stops
    (exit 0), as a Go operator ends on SIGPIPE; no signal needed. (Before: that line raised
    ``BrokenPipeError`` out of the run, a crash with status 1.)"""
    if not isinstance(controller, ControllerProcess):
        pytest.skip("needs the local process controller")
    proc = _piped_controller(controller, namespace)
    try:
        _read_until(proc, '"event": "API server"')
        assert proc.stderr is not None
        proc.stderr.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigterm_stops_the_controller_whose_log_reader_is_gone(
        controller: ControllerProcess, namespace: str) -> None:
    """The signal handler logs before it stops the run: with the log's pipe closed that line
    raised ``BrokenPipeError`` and SIGTERM was lost (a quiet controller ran on until killed)."""
    if not isinstance(controller, ControllerProcess):
        pytest.skip("needs the local process controller")
    port = free_port()
    proc = _piped_controller(controller, namespace, health_port=port)
    try:
        _read_until(proc, '"event": "mpi-controller starting"')
        wait_for(lambda: http_get(port, "/readyz") == (200, "ok"), timeout=30,
                 what="the standby's /readyz")
        _read_until_quiet(proc)  # its start-up lines written: quiet, as one runs for hours
        assert proc.stderr is not None
        proc.stderr.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _run_args(controller: ControllerProcess, namespace: str, *flags: str,
              ) -> subprocess.Popen[bytes]:
    """``mpi-controller run`` serving only ``namespace`` with exactly these flags, its log
    discarded."""
    compile_package(Path(__file__).resolve().parent.parent / "mpi_controller")
    return subprocess.Popen(
        [sys.executable, "-m", "mpi_controller", "run", "--kubeConfig", controller.kubeconfig,
         "--namespace", namespace, "--log-format", "json", *flags],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_training_operators_flags_run_unchanged(controller: ControllerProcess, cluster: Cluster,
                                                namespace: str) -> None:
    """cmd/training-operator.v1's --leader-elect, --leader-election-id, --metrics-bind-address
    and --health-probe-bind-address: a Lease of that name held, /metrics on the host and
    port given, the probes on theirs; one address for both is one server."""
    if not isinstance(controller, ControllerProcess):
        pytest.skip("needs the local process controller")
    lease = f"test-{namespace}"
    metrics, health = free_port(), free_port()
    proc = _run_args(controller, namespace, "--leader-elect", "--leader-election-id", lease,
                     f"--metrics-bind-address=127.0.0.1:{metrics}",
                     "--health-probe-bind-address", f":{health}")
    try:
        wait_for(lambda: http_get(health, "/readyz") == (200, "ok"), timeout=60,
                 what="the controller's /readyz on the probe address")
        assert "mpi_operator_is_leader 1.0" in http_get(metrics, "/metrics")[1].splitlines()
        holder = cluster.kubectl("get", "lease", lease, "-n", "mpi-operator",
                                 "-o", "jsonpath={.spec.holderIdentity}")
        assert holder.strip()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    cluster.kubectl("delete", "lease", lease, "-n", "mpi-operator")

    shared = free_port()
    proc = _run_args(controller, namespace, "--leader-elect=false",
                     f"--metrics-bind-address=:{shared}", "--health-port", str(shared))
    try:
        wait_for(lambda: http_get(shared, "/readyz") == (200, "ok"), timeout=60,
                 what="the controller's /readyz")
        assert "mpi_operator_is_leader 1.0" in http_get(shared, "/metrics")[1].splitlines()
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
