"""The single-file install, deploy/mpi-controller.yaml, is `kubectl kustomize` of
deploy/overlays/standalone (hack/gen-install-manifest.sh)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support import REPO


def _kubectl() -> str | None:
    bin_dir = subprocess.run(["bash", str(REPO / "hack" / "local-cluster.sh"), "bin-dir"],
                             capture_output=True, text=True, check=False).stdout.strip()
    built = Path(bin_dir) / "kubectl"
    return str(built) if bin_dir and built.exists() else shutil.which("kubectl")


def test_the_single_file_manifest_is_the_kustomize_output() -> None:
    kubectl = _kubectl()
    if kubectl is None:
        pytest.skip("no kubectl (the local cluster's is built by hack/local-cluster.sh)")
    built = subprocess.run([kubectl, "kustomize", str(REPO / "deploy/overlays/standalone")],
                           capture_output=True, text=True, check=True).stdout
    text = (REPO / "deploy" / "mpi-controller.yaml").read_text()
    header = text.splitlines(keepends=True)[:3]
    assert all(line.startswith("# ") for line in header)
    assert text[len("".join(header)):] == built, "run hack/gen-install-manifest.sh"


def test_the_single_file_manifest_installs_the_controller() -> None:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # 5 MB: libyaml when there
    docs = list(yaml.load_all((REPO / "deploy" / "mpi-controller.yaml").read_text(),
                              Loader=loader))
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert {("Namespace", "mpi-operator"), ("Deployment", "mpi-operator"),
            ("Service", "mpi-operator-metrics"),
            ("CustomResourceDefinition", "mpijobs.kubeflow.org")} <= kinds
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    assert deployment["metadata"]["namespace"] == "mpi-operator"
