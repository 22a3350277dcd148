"""deploy/ for the webhooks, as kustomize builds it: the base's Service, configuration and
Deployment port; an overlay's namespace reaching the Service references of the CRD and the
configuration; the cert-manager overlay (cert-manager's Certificate and CA injector, the
controller reading the mounted certificate, no webhook RBAC)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import REPO, Cluster

pytestmark = pytest.mark.cluster


def build(cluster: Cluster, overlay: str) -> dict[tuple[str, str], dict[str, Any]]:
    text = cluster.kubectl("kustomize", str(Path(REPO, "deploy", "overlays", overlay)))
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(text)}


def test_an_overlays_namespace_reaches_the_webhook_service_references(cluster: Cluster) -> None:
    docs = build(cluster, "kubeflow")
    crd = docs[("CustomResourceDefinition", "mpijobs.kubeflow.org")]
    service = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
    assert service == {"name": "mpi-operator-webhook", "namespace": "kubeflow",
                       "path": "/convert", "port": 443}
    vwc = docs[("ValidatingWebhookConfiguration", "mpi-operator")]
    assert {w["clientConfig"]["service"]["namespace"] for w in vwc["webhooks"]} == {"kubeflow"}
    assert docs[("Service", "mpi-operator-webhook")]["metadata"]["namespace"] == "kubeflow"
    binding = docs[("ClusterRoleBinding", "mpi-operator-webhook")]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "mpi-operator",
                                    "namespace": "kubeflow"}]


def test_the_deployment_serves_the_webhook_port(cluster: Cluster) -> None:
    docs = build(cluster, "standalone")
    pod = docs[("Deployment", "mpi-operator")]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert {"name": "webhook", "containerPort": 9443} in container["ports"]
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    assert not any(a.startswith("--webhook") for a in container["args"])  # on in a pod
    service = docs[("Service", "mpi-operator-webhook")]
    assert service["spec"]["ports"] == [{"name": "webhook", "port": 443,
                                         "targetPort": "webhook"}]
    assert service["spec"]["selector"] == {"app": "mpi-operator"}


def test_the_cert_manager_overlay(cluster: Cluster) -> None:
    docs = build(cluster, "cert-manager")
    pod = docs[("Deployment", "mpi-operator")]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["args"][-1] == "--webhook-cert-dir=/etc/mpi-operator/webhook-certs"
    assert {"name": "webhook-certs", "mountPath": "/etc/mpi-operator/webhook-certs",
            "readOnly": True} in container["volumeMounts"]
    assert {"name": "webhook-certs", "secret": {"secretName": "mpi-operator-webhook-tls"}} \
        in pod["volumes"]
    certificate = docs[("Certificate", "mpi-operator-webhook")]
    assert certificate["spec"]["secretName"] == "mpi-operator-webhook-tls"
    assert "mpi-operator-webhook.mpi-operator.svc" in certificate["spec"]["dnsNames"]
    inject = {"cert-manager.io/inject-ca-from": "mpi-operator/mpi-operator-webhook"}
    for key in (("CustomResourceDefinition", "mpijobs.kubeflow.org"),
                ("ValidatingWebhookConfiguration", "mpi-operator")):
        assert docs[key]["metadata"]["annotations"] == inject
    assert ("ClusterRole", "mpi-operator-webhook") not in docs
    assert ("ClusterRoleBinding", "mpi-operator-webhook") not in docs
    assert ("Issuer", "mpi-operator-selfsigned") in docs
