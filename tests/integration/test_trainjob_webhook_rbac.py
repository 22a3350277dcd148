"""The trainjob overlay's rule for its MutatingWebhookConfiguration (deploy/overlays/trainjob
patches the webhook ClusterRole: get, list, watch and patch of ``mutatingwebhookconfigurations``
named ``mpi-operator``) is what certificate upkeep needs once TrainJob's defaulter is served,
and is needed: bound with the overlay's roles, a controller process running
``--enable-scheme trainjob`` with the webhooks on injects its CA into the overlay's Validating
and Mutating WebhookConfigurations and becomes ready; without that one rule it logs Forbidden
and never becomes ready (deploy/base's rules: ``tests/integration/test_webhook_rbac.py``).

On the addons cluster (``make addons-test``): TrainJob needs the JobSet CRD."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.addons import Addons, install_trainer_crds, open_addons
from tests.integration.test_webhook_rbac import CLUSTER_ROLE, Identity
from tests.support import REPO, Cluster

OVERLAY = REPO / "deploy" / "overlays" / "trainjob"
MUTATING_RULE = {"apiGroups": ["admissionregistration.k8s.io"],
                 "resources": ["mutatingwebhookconfigurations"],
                 "resourceNames": ["mpi-operator"], "verbs": ["get", "list", "watch", "patch"]}


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    found = open_addons()
    found.require("jobset")
    install_trainer_crds(found)
    yield found
    found.api.close()


@pytest.fixture
def overlay(addons: Addons) -> Iterator[tuple[Cluster, list[dict[str, Any]]]]:
    """The overlay's webhook configurations applied (removed afterwards: while no Service
    answers them, failurePolicy Fail refuses TrainJob writes; no test makes one meanwhile) and
    its webhook ClusterRole's rules."""
    cluster = Cluster(kubeconfig=str(addons.kubeconfig), local=True)
    docs = list(yaml.safe_load_all(cluster.kubectl("kustomize", str(OVERLAY))))
    role = next(d for d in docs if d["kind"] == "ClusterRole"
                and d["metadata"]["name"] == "mpi-operator-webhook")
    configurations = [d for d in docs if d["kind"] in (
        "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")]
    try:
        for configuration in configurations:
            cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                            input=json.dumps(configuration))
        yield cluster, role["rules"]
    finally:
        for configuration in configurations:
            cluster.kubectl("delete", configuration["kind"].lower(), "mpi-operator",
                            "--ignore-not-found")


def test_the_overlays_mutating_rule_is_enough_and_needed(
        addons: Addons, overlay: tuple[Cluster, list[dict[str, Any]]], tmp_path: Path) -> None:
    cluster, rules = overlay
    assert rules == [*CLUSTER_ROLE["rules"], MUTATING_RULE]
    tag = uuid.uuid4().hex[:5]
    flags = ("--enable-scheme", "trainjob")
    without = Identity(tag, rules.index(MUTATING_RULE), cluster, addons.api, tmp_path,
                       webhook_rules=rules, flags=flags)
    whole = Identity(tag, None, cluster, addons.api, tmp_path, webhook_rules=rules, flags=flags)
    try:
        without.start()
        assert "mutatingwebhookconfigurations" in without.refused_then_stopped(timeout=90)
        ca = whole.ready_with_secret(timeout=120)["ca.crt"]
        for kind in ("validatingwebhookconfiguration", "mutatingwebhookconfiguration"):
            configuration = json.loads(cluster.kubectl("get", kind, "mpi-operator", "-o", "json"))
            assert {w["clientConfig"]["caBundle"] for w in configuration["webhooks"]} == {ca}, kind
        mutating = json.loads(cluster.kubectl("get", "mutatingwebhookconfiguration",
                                              "mpi-operator", "-o", "json"))
        assert [w["name"] for w in mutating["webhooks"]] == [
            "defaulter.trainjob.trainer.kubeflow.org"]
        assert not whole.forbidden(), whole.proc.log()[-3000:] if whole.proc else ""
    finally:
        for identity in (without, whole):
            identity.stop()
