"""The MPIJob webhooks served by an ``mpi-controller run`` process on 127.0.0.1, for tests on
the local cluster whose requests need them.

MPIJob ``v1`` is the group's preferred version (a GA version sorts before ``v2beta1``), so
anything that resolves MPIJobs by group and resource alone (the HPA controller's scale
client, ``kubectl`` without a version, the namespace controller) goes through the conversion
webhook. :func:`serving_webhooks` points the CRD's conversion and a
ValidatingWebhookConfiguration of its own at such a process; :func:`restore_webhooks` puts the
CRD back to the Service of ``deploy/`` and deletes the configuration.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

from tests.processes import ControllerProcess, free_port, http_get
from tests.support import Cluster, unique_name, wait_for

__all__ = ["DEPLOYED_CLIENT_CONFIG", "restore_webhooks", "serving_webhooks", "wait_serving",
           "webhook_process"]

CRD = "mpijobs.kubeflow.org"
DEPLOYED_CLIENT_CONFIG = {"url": None, "caBundle": None, "service": {
    "name": "mpi-operator-webhook", "namespace": "mpi-operator", "path": "/convert", "port": 443}}


def restore_webhooks(cluster: Cluster, configuration: str) -> None:
    """Delete the Validating (and a Mutating) WebhookConfiguration ``configuration`` and point
    the CRD's conversion back at the Service of ``deploy/``."""
    for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
        cluster.kubectl("delete", kind, configuration, "--ignore-not-found")
    cluster.kubectl("patch", "crd", CRD, "--type", "merge", "-p", json.dumps(
        {"spec": {"conversion": {"webhook": {"clientConfig": DEPLOYED_CLIENT_CONFIG}}}}))


def webhook_process(cluster: Cluster, log: Path, *extra: str, home: str, configuration: str,
                    port: int, url_port: int | None = None) -> ControllerProcess:
    """An ``mpi-controller run`` (not started) that serves the webhooks on ``port`` and points
    the CRD and the ValidatingWebhookConfiguration ``configuration`` at
    ``https://127.0.0.1:<url_port or port>``; its Lease and certificate Secret live in
    ``home``, and it reconciles only ``<home>-idle`` (no job of the tests)."""
    return ControllerProcess(
        cluster.kubeconfig, log,
        "--namespace", f"{home}-idle", "--lock-namespace", home,
        "--webhooks", "on", "--webhook-server-port", str(port),
        "--webhook-url", f"https://127.0.0.1:{url_port or port}",
        "--webhook-namespace", home, "--webhook-configuration-name", configuration, *extra)


def wait_serving(proc: ControllerProcess, timeout: float = 90) -> None:
    """Wait until ``proc`` is ready (it serves once ready); fail with its log if it exits."""
    wait_for(lambda: http_get(proc.health_port, "/readyz") == (200, "ok") or not proc.alive(),
             timeout=timeout, what="the webhook process to be ready")
    assert proc.alive(), proc.log()[-3000:]


@contextlib.contextmanager
def serving_webhooks(cluster: Cluster, logs: Path) -> Iterator[ControllerProcess]:
    """A process serving the webhooks (and reconciling no namespace, without leader
    election) until the block ends, ready when it yields; ``logs`` is a directory for its
    log."""
    home = unique_name("webhooks")
    configuration = f"mpi-operator-{home}"
    for namespace in (home, f"{home}-idle"):
        cluster.kubectl("create", "namespace", namespace)
    # No leader election: it reconciles nothing, and a renewal missed on a saturated API
    # server (the bench's scale workload) would end it and every webhook with it.
    proc = webhook_process(cluster, logs / f"{home}.log", "--no-leader-elect", home=home,
                           configuration=configuration, port=free_port())
    proc.start()
    try:
        wait_serving(proc)
        yield proc
    finally:
        if proc.alive():
            proc.stop()
        restore_webhooks(cluster, configuration)
        for namespace in (home, f"{home}-idle"):
            cluster.kubectl("delete", "namespace", namespace, "--wait=false")
