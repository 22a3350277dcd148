"""deploy/'s lists of kinds are generated from the kinds' plugins (hack/gen-manifests.py): the
CRD kustomization, the ClusterRole and the webhook configuration are what the generator writes
today, and they name every kind."""

from __future__ import annotations

import subprocess
import sys

import yaml

from mpi_controller.kinds import plugins
from tests.support import REPO


def test_the_generated_files_are_up_to_date() -> None:
    out = subprocess.run([sys.executable, str(REPO / "hack" / "gen-manifests.py"), "--check"],
                         capture_output=True, text=True, check=False)
    assert (out.returncode, out.stderr) == (0, "")


def test_they_name_every_kind() -> None:
    kustomization = yaml.safe_load((REPO / "deploy/crd/kustomization.yaml").read_text())
    assert kustomization["resources"] == [c.file_name for p in plugins() if not p.explicit
                                          for c in (p.crd, *p.extra_crds)]
    assert all((REPO / "deploy/crd" / name).exists() for name in kustomization["resources"])
    role = yaml.safe_load((REPO / "deploy/base/cluster-role.yaml").read_text())
    jobs = next(r for r in role["rules"] if r["apiGroups"] == ["kubeflow.org"])
    assert jobs == {"apiGroups": ["kubeflow.org"],
                    "resources": [p.plural for p in plugins() if p.group == "kubeflow.org"],
                    "verbs": ["get", "list", "watch", "delete"]}
    documents = list(yaml.safe_load_all((REPO / "deploy/base/webhook.yaml").read_text()))
    webhooks = documents[1]["webhooks"]
    assert {w["rules"][0]["resources"][0] for w in webhooks} == {
        a.resource or p.plural for p in plugins() if not p.explicit for a in p.admission}


def test_an_explicit_kinds_crds_are_kept_out_of_the_default_install() -> None:
    """TrainJob's CRDs (Kubeflow Trainer's, which a Trainer install owns, and which Kubernetes
    before 1.31 cannot compile) are in deploy/crd/trainjob/, installed by
    deploy/overlays/trainjob only."""
    [explicit] = [p for p in plugins() if p.explicit]
    assert explicit.crd_dir == "crd/trainjob"
    kustomization = yaml.safe_load((REPO / "deploy/crd/trainjob/kustomization.yaml").read_text())
    assert kustomization["resources"] == [
        "trainer.kubeflow.org_trainjobs.yaml", "trainer.kubeflow.org_trainingruntimes.yaml",
        "trainer.kubeflow.org_clustertrainingruntimes.yaml"]
    assert all((REPO / "deploy/crd/trainjob" / name).exists()
               for name in kustomization["resources"])
    assert not list((REPO / "deploy/crd").glob("trainer.kubeflow.org_*"))


def test_an_explicit_kinds_overlay_adds_its_crds_and_names_every_scheme() -> None:
    """deploy/overlays/trainjob is the standalone install, TrainJob's CRDs and webhooks, and
    one --enable-scheme per kind (naming one turns the unnamed ones off)."""
    overlay = yaml.safe_load((REPO / "deploy/overlays/trainjob/kustomization.yaml").read_text())
    assert overlay["resources"] == ["../standalone", "../../crd/trainjob",
                                    "mutating-webhook.yaml"]
    args, webhooks, webhook_role = overlay["patches"]
    assert args["target"] == {"kind": "Deployment", "name": "mpi-operator"}
    assert [op["value"] for op in yaml.safe_load(args["patch"])] == [
        "--enable-scheme=mpijob", "--enable-scheme=tfjob", "--enable-scheme=pytorchjob",
        "--enable-scheme=xgboostjob", "--enable-scheme=paddlejob", "--enable-scheme=jaxjob",
        "--enable-scheme=trainjob"]
    # TrainJob's webhooks, which the base's configuration leaves out.
    assert webhooks["target"] == {"kind": "ValidatingWebhookConfiguration",
                                  "name": "mpi-operator"}
    assert [(op["op"], op["path"], op["value"]["name"])
            for op in yaml.safe_load(webhooks["patch"])] == [
        ("add", "/webhooks/-", "validator.clustertrainingruntime.trainer.kubeflow.org"),
        ("add", "/webhooks/-", "validator.trainingruntime.trainer.kubeflow.org"),
        ("add", "/webhooks/-", "validator.trainjob.trainer.kubeflow.org")]
    # Its defaulter: the MutatingWebhookConfiguration, and the webhook ClusterRole's right to
    # keep its caBundle (the certificate manager reads and patches that one object).
    mutating = yaml.safe_load((REPO / "deploy/overlays/trainjob/mutating-webhook.yaml"
                               ).read_text())
    assert (mutating["kind"], mutating["metadata"]) == ("MutatingWebhookConfiguration",
                                                        {"name": "mpi-operator"})
    assert [(w["name"], w["clientConfig"]["service"]["path"]) for w in mutating["webhooks"]] == [
        ("defaulter.trainjob.trainer.kubeflow.org",
         "/mutate-trainer-kubeflow-org-v1alpha1-trainjob")]
    assert webhook_role["target"] == {"kind": "ClusterRole", "name": "mpi-operator-webhook"}
    assert yaml.safe_load(webhook_role["patch"]) == [{"op": "add", "path": "/rules/-", "value": {
        "apiGroups": ["admissionregistration.k8s.io"],
        "resources": ["mutatingwebhookconfigurations"], "resourceNames": ["mpi-operator"],
        "verbs": ["get", "list", "watch", "patch"]}}]
