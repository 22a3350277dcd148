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
    assert kustomization["resources"] == [c.file_name for p in plugins()
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
        a.resource or p.plural for p in plugins() for a in p.admission}
