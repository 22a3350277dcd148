"""The controller process: health, readiness and metrics endpoints; a second replica waits
as a standby behind the Lease; SIGTERM exits 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.mpijobs import MPIJobs, small_job
from tests.processes import ControllerProcess, http_get
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
