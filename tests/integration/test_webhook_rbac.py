"""deploy/base/webhook-rbac.yaml is the least privilege certificate upkeep needs beyond the
controller's ClusterRole: bound with it to a ServiceAccount, a controller process with the
webhooks on creates the Secret in its namespace (the ClusterRole's Secret rule covers it),
injects its CA into the MPIJob CRD and the ValidatingWebhookConfiguration of
deploy/base/webhook.yaml, and becomes ready; with either rule removed it logs Forbidden and
never becomes ready. Single-object list/watch by ``fieldSelector=metadata.name`` is authorized
by ``resourceNames``."""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.processes import ControllerProcess, free_port, http_get
from tests.support import REPO, Cluster, rbac_denied, token_kubeconfig, wait_for

pytestmark = pytest.mark.cluster

WEBHOOK_RBAC = list(yaml.safe_load_all((REPO / "deploy/base/webhook-rbac.yaml").read_text()))
CLUSTER_ROLE = next(d for d in WEBHOOK_RBAC if d["kind"] == "ClusterRole")
CONTROLLER_ROLE = yaml.safe_load((REPO / "deploy/base/cluster-role.yaml").read_text())
RULES = list(range(len(CLUSTER_ROLE["rules"])))
SECRET = "mpi-operator-webhook-cert"


class Identity:
    """A ServiceAccount with the controller's ClusterRole and the webhook ClusterRole
    (``webhook_rules``, deploy/base's by default) minus rule ``skip``, and a controller process
    serving webhooks as that account (with ``flags`` more)."""

    def __init__(self, tag: str, skip: int | None, cluster: Cluster, api: Any,
                 tmp: Path, *, webhook_rules: list[dict[str, Any]] | None = None,
                 flags: tuple[str, ...] = ()) -> None:
        self.skip = skip
        self.ns = f"whrbac-{tag}-{'all' if skip is None else skip}"
        self.cluster, self.tmp = cluster, tmp
        self.rbac = client.RbacAuthorizationV1Api(api)
        self.core = client.CoreV1Api(api)
        self.proc: ControllerProcess | None = None
        self.webhook_rules = CLUSTER_ROLE["rules"] if webhook_rules is None else webhook_rules
        self.flags = flags

    def _rules(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(r) for i, r in enumerate(self.webhook_rules) if self.skip != i]

    def _bind_cluster_role(self, name: str, rules: list[dict[str, Any]]) -> None:
        self.rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
        self.rbac.create_cluster_role_binding({
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": "ctl", "namespace": self.ns}]})

    def start(self) -> None:
        self.core.create_namespace({"metadata": {"name": self.ns}})
        self.core.create_namespaced_service_account(self.ns, {"metadata": {"name": "ctl"}})
        self._bind_cluster_role(self.ns, copy.deepcopy(CONTROLLER_ROLE["rules"]))
        self._bind_cluster_role(f"{self.ns}-webhook", self._rules())
        kubeconfig = token_kubeconfig(self.cluster, self.ns, "ctl",
                                      self.tmp / f"{self.ns}.kubeconfig")
        self.proc = ControllerProcess(
            kubeconfig, self.tmp / f"{self.ns}.log", "--namespace", self.ns,
            "--lock-namespace", self.ns, "--webhooks", "on", "--webhook-namespace", self.ns,
            "--webhook-server-port", str(free_port()), *self.flags)
        self.proc.start()

    def ready(self) -> bool:
        assert self.proc is not None
        return http_get(self.proc.health_port, "/readyz") == (200, "ok")

    def forbidden(self) -> bool:
        """The controller logged an RBAC denial (:func:`~tests.support.rbac_denied`)."""
        assert self.proc is not None
        return rbac_denied(self.proc.log())

    def refused_then_stopped(self, timeout: float = 60) -> str:
        """Wait for an RBAC denial in the log, check the process is not ready, stop it; the
        log."""
        wait_for(self.forbidden, timeout=timeout, what=f"Forbidden in the log of {self.ns}")
        assert not self.ready(), self.ns
        log = self.proc.log() if self.proc else ""
        self.stop()
        return log

    def ready_with_secret(self, timeout: float = 90) -> dict[str, str]:
        """Start, wait until ready; the data of the certificate Secret it made."""
        self.start()
        wait_for(self.ready, timeout=timeout, what=f"the controller of {self.ns} to be ready")
        secret = json.loads(self.cluster.kubectl("get", "secret", SECRET, "-n", self.ns, "-o",
                                                 "json"))
        data: dict[str, str] = secret["data"]
        return data

    def stop(self) -> None:
        if self.proc is not None and self.proc.alive():
            self.proc.stop()
        for call in (lambda: self.rbac.delete_cluster_role_binding(self.ns),
                     lambda: self.rbac.delete_cluster_role(self.ns),
                     lambda: self.rbac.delete_cluster_role_binding(f"{self.ns}-webhook"),
                     lambda: self.rbac.delete_cluster_role(f"{self.ns}-webhook"),
                     lambda: self.core.delete_namespace(self.ns)):
            with contextlib.suppress(client.ApiException):
                call()


@pytest.fixture
def configuration(cluster: Cluster, mpijob_crd: str) -> Iterator[None]:
    """The deployed ValidatingWebhookConfiguration, removed afterwards (while no Service
    answers, MPIJobs are admitted, failurePolicy Ignore; TFJobs and PyTorchJobs, Fail, are
    refused: no test creates one meanwhile)."""
    docs = yaml.safe_load_all((REPO / "deploy/base/webhook.yaml").read_text())
    vwc = next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                    input=json.dumps(vwc))
    try:
        yield
    finally:
        cluster.kubectl("delete", "validatingwebhookconfiguration", vwc["metadata"]["name"],
                        "--ignore-not-found")


@pytest.mark.usefixtures("configuration")
def test_the_webhook_roles_are_enough_and_every_rule_is_needed(
        cluster: Cluster, kube_api: Any, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:5]
    missing = [Identity(tag, skip, cluster, kube_api, tmp_path) for skip in RULES]
    whole = Identity(tag, None, cluster, kube_api, tmp_path)
    try:
        # Without a rule nothing gets injected, so these can run side by side.
        for identity in missing:
            identity.start()
        for identity in missing:
            identity.refused_then_stopped()
        data = whole.ready_with_secret()
        ca = data["ca.crt"]
        assert sorted(data) == ["ca.crt", "ca.key", "tls.crt", "tls.key"]
        crd = json.loads(cluster.kubectl("get", "crd", "mpijobs.kubeflow.org", "-o", "json"))
        assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] == ca
        vwc = json.loads(cluster.kubectl("get", "validatingwebhookconfiguration",
                                         "mpi-operator", "-o", "json"))
        assert {w["clientConfig"]["caBundle"] for w in vwc["webhooks"]} == {ca}
        assert base64.b64decode(ca).startswith(b"-----BEGIN CERTIFICATE-----")
        assert not whole.forbidden(), whole.proc.log()[-3000:] if whole.proc else ""
    finally:
        for identity in [*missing, whole]:
            identity.stop()
