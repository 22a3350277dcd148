"""hostfile and discover_hosts.sh per implementation (upstream newConfigMap and
updateDiscoverHostsInConfigMap), and the ConfigMap update rule."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.mpi.configmap import (
    config_map_needs_update,
    desired_config_map,
    discover_hosts_script,
    hostfile,
    update_config_map,
)
from mpi_controller.mpi.v2beta1.defaults import set_defaults
from tests.unit.mpi.conftest import pi_job


def _pod(
    name: str, phase: str, *, job: str = "pi", ns: str = "default", role: str = "worker"
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {
                "training.kubeflow.org/operator-name": "mpi-operator",
                "training.kubeflow.org/job-name": job,
                "training.kubeflow.org/job-role": role,
            },
        },
        "status": {"phase": phase},
    }


def _named(name: str, ns: str, impl: str, replicas: int, slots: int) -> dict[str, Any]:
    job = pi_job(mpiImplementation=impl, slotsPerWorker=slots)
    job["metadata"] = {"name": name, "namespace": ns, "uid": "U"}
    job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = replicas
    return job


@pytest.mark.parametrize(
    ("job", "domain", "expected"),
    [
        pytest.param(
            _named("openmpi-with-slots", "tenant-a", "OpenMPI", 1, 10),
            "",
            "openmpi-with-slots-worker-0.openmpi-with-slots.tenant-a.svc slots=10\n",
            id="openmpi-upstream-test",
        ),
        pytest.param(
            _named("intelmpi-with-slots", "project-x", "Intel", 1, 10),
            "",
            "intelmpi-with-slots-worker-0.intelmpi-with-slots.project-x.svc:10\n",
            id="intel-upstream-test",
        ),
        pytest.param(
            _named("pi", "default", "MPICH", 2, 2),
            "",
            "pi-worker-0.pi.default.svc:2\npi-worker-1.pi.default.svc:2\n",
            id="mpich",
        ),
        pytest.param(
            _named("pi", "tenant-a", "OpenMPI", 1, 1),
            "cluster.local",
            "pi-worker-0.pi.tenant-a.svc.cluster.local slots=1\n",
            id="cluster-domain",
        ),
        pytest.param(
            pi_job(runLauncherAsWorker=True),
            "",
            "pi-launcher.pi.default.svc slots=2\npi-worker-0.pi.default.svc slots=2\n"
            "pi-worker-1.pi.default.svc slots=2\n",
            id="launcher-as-worker-first",
        ),
        pytest.param(pi_job(mpiImplementation="Other"), "", "", id="unknown-impl-no-lines"),
    ],
)
def test_hostfile(job: dict[str, Any], domain: str, expected: str) -> None:
    """mpi-operator v0.8.2 newConfigMap: one line per host, OpenMPI `<fqdn> slots=N`,
    Intel/MPICH `<fqdn>:N`, the launcher first with runLauncherAsWorker, `.svc.<domain>`."""
    assert hostfile(job, cluster_domain=domain) == expected


def test_hostfile_without_worker_spec_lists_only_the_launcher() -> None:
    """R = 0 without a Worker spec; runLauncherAsWorker still lists the launcher."""
    job = pi_job(runLauncherAsWorker=True)
    del job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert hostfile(job) == "pi-launcher.pi.default.svc slots=2\n"


def test_discover_hosts_lists_running_workers_sorted_by_name() -> None:
    """updateDiscoverHostsInConfigMap: `#!/bin/sh`, then `echo <fqdn>` for each Running worker
    pod matching the worker selector, sorted as plain strings (worker-10 before worker-2)."""
    pods = [
        _pod("pi-worker-2", "Running"),
        _pod("pi-worker-10", "Running"),
        _pod("pi-worker-0", "Pending"),
        _pod("pi-worker-1", "Failed"),
        _pod("pi-launcher-x", "Running", role="launcher"),
        _pod("other-worker-0", "Running", job="other"),
    ]
    assert discover_hosts_script(pi_job(), pods) == (
        "#!/bin/sh\necho pi-worker-10.pi.default.svc\necho pi-worker-2.pi.default.svc\n"
    )


def test_discover_hosts_with_launcher_as_worker_and_domain() -> None:
    """The launcher line comes first, unconditionally; the pod's own namespace is used."""
    script = discover_hosts_script(
        pi_job(runLauncherAsWorker=True), [_pod("pi-worker-0", "Running")], cluster_domain="c.l"
    )
    assert script == (
        "#!/bin/sh\necho pi-launcher.pi.default.svc.c.l\necho pi-worker-0.pi.default.svc.c.l\n"
    )


def test_discover_hosts_with_no_running_pods_is_only_the_shebang() -> None:
    assert discover_hosts_script(pi_job(), []) == "#!/bin/sh\n"


def test_config_map_update_rule() -> None:
    """getOrCreateConfigMap: update (replace `data`) only when the data differs."""
    job = pi_job()
    current = desired_config_map(job, [])
    current["metadata"]["resourceVersion"] = "7"
    assert not config_map_needs_update(current, desired_config_map(job, []))
    want = desired_config_map(job, [_pod("pi-worker-0", "Running")])
    assert config_map_needs_update(current, want)
    updated = update_config_map(current, want)
    assert updated["data"] == want["data"]
    assert updated["metadata"]["resourceVersion"] == "7"
    assert current["data"]["discover_hosts.sh"] == "#!/bin/sh\n"  # input untouched


def test_scaling_workers_changes_the_hostfile() -> None:
    """The hostfile follows Worker replicas."""
    job = set_defaults(pi_job())
    job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 3
    assert hostfile(job).count("\n") == 3
