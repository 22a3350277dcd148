"""deploy/: the kustomize overlays apply cleanly and the ClusterRole is least-privilege."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import restore_conversion_service
from tests.support import REPO, TRAINER_MIN_MINOR, Cluster, server_minor, wait_for

ROLE = REPO / "deploy" / "base" / "cluster-role.yaml"


def _rules() -> list[dict[str, Any]]:
    return list(yaml.safe_load(ROLE.read_text())["rules"])


def test_cluster_role_has_no_wildcards_outside_kubeflow() -> None:
    for rule in _rules():
        assert "*" not in rule["verbs"], rule
        assert "*" not in rule["resources"], rule
        assert "*" not in rule["apiGroups"], rule


def test_deployment_runs_non_root_with_read_only_root_filesystem() -> None:
    deploy = yaml.safe_load((REPO / "deploy" / "base" / "deployment.yaml").read_text())
    pod = deploy["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["resources"]["requests"]


@pytest.mark.cluster
@pytest.mark.parametrize(("overlay", "namespace"), [("standalone", "mpi-operator"),
                                                     ("kubeflow", "kubeflow"),
                                                     ("trainjob", "mpi-operator")])
def test_overlay_applies_cleanly(cluster: Cluster, overlay: str, namespace: str) -> None:
    if overlay == "kubeflow":
        cluster.kubectl("create", "namespace", "kubeflow", check=False)
    restore_conversion_service(cluster)
    if overlay == "trainjob" and server_minor(cluster) < TRAINER_MIN_MINOR:
        # Kubeflow Trainer v2.3.0's runtime CRDs carry a CEL rule reading the
        # metadata.namespace of an embedded template, which 1.30 cannot compile: the default
        # install leaves them out (docs/install.md); the API server refuses this overlay's.
        with pytest.raises(RuntimeError) as refused:
            cluster.kubectl("apply", "--server-side", "--force-conflicts", "--dry-run=server",
                            "-k", str(Path(REPO, "deploy", "overlays", overlay)))
        assert "trainingruntimes.trainer.kubeflow.org" in str(refused.value)
        assert "metadata.namespace" in str(refused.value)
        return
    try:
        out = cluster.kubectl("apply", "--server-side", "--force-conflicts",
                              "-k", str(Path(REPO, "deploy", "overlays", overlay)))
    finally:
        # Whatever the apply did, take the webhooks out of the API server's path: every MPIJob
        # write would try the Service that no pod backs, TFJob and PyTorchJob writes would
        # fail (failurePolicy Fail), and so would every later test that writes them.
        for configuration in ("validatingwebhookconfiguration",
                              "mutatingwebhookconfiguration"):
            cluster.kubectl("delete", configuration, "mpi-operator", "--ignore-not-found")
    assert "customresourcedefinition.apiextensions.k8s.io/mpijobs.kubeflow.org" in out
    # The TrainJob defaulter's configuration, and the right to keep its caBundle.
    assert ("mutatingwebhookconfiguration.admissionregistration.k8s.io/mpi-operator "
            "serverside-applied" in out) == (overlay == "trainjob")
    webhook_rules = yaml.safe_load(cluster.kubectl("get", "clusterrole", "mpi-operator-webhook",
                                                   "-o", "yaml"))["rules"]
    assert ({"apiGroups": ["admissionregistration.k8s.io"],
             "resources": ["mutatingwebhookconfigurations"], "resourceNames": ["mpi-operator"],
             "verbs": ["get", "list", "watch", "patch"]} in webhook_rules) == (
        overlay == "trainjob")
    assert "customresourcedefinition.apiextensions.k8s.io/tfjobs.kubeflow.org" in out
    assert "customresourcedefinition.apiextensions.k8s.io/pytorchjobs.kubeflow.org" in out
    assert "clusterrole.rbac.authorization.k8s.io/mpi-operator" in out
    trainer = [f"customresourcedefinition.apiextensions.k8s.io/{plural}.trainer.kubeflow.org"
               for plural in ("trainjobs", "trainingruntimes", "clustertrainingruntimes")]
    assert [crd in out for crd in trainer] == [overlay == "trainjob"] * 3
    args = json.loads(cluster.kubectl("get", "deployment", "mpi-operator", "-n", namespace,
                                      "-o", "jsonpath={.spec.template.spec.containers[0].args}"))
    assert ("--enable-scheme=trainjob" in args) == (overlay == "trainjob")
    assert "deployment.apps/mpi-operator serverside-applied" in out
    sa = cluster.kubectl("get", "serviceaccount", "mpi-operator", "-n", namespace, "-o", "name")
    assert sa.strip() == "serviceaccount/mpi-operator"
    binding = yaml.safe_load(cluster.kubectl("get", "clusterrolebinding", "mpi-operator",
                                             "-o", "yaml"))
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "mpi-operator",
                                    "namespace": namespace}]
    # Scale the fake in-cluster controller down again: KWOK would only pretend to run it.
    cluster.kubectl("scale", "deployment/mpi-operator", "-n", namespace, "--replicas=0")
    wait_for(lambda: cluster.kubectl("get", "deployment", "mpi-operator", "-n", namespace,
                                     "-o", "jsonpath={.spec.replicas}") == "0",
             timeout=30, what="the deployment to scale to 0")
