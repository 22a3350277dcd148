"""The single-file install, deploy/mpi-controller.yaml, is `kubectl kustomize` of
deploy/overlays/standalone (hack/gen-install-manifest.sh). Here rather than in the unit tests:
it needs the kubectl that hack/local-cluster.sh builds, there by the time these run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support import REPO


def _kubectl() -> str | None:
    bin_dir = subprocess.run(["bash", str(REPO / "hack" / "local-cluster.sh"), "bin-dir"],
                             capture_output=True, text=True, check=False).stdout.strip()
    built = Path(bin_dir) / "kubectl"
    return str(built) if bin_dir and built.exists() else shutil.which("kubectl")


def test_the_single_file_manifest_is_the_kustomize_output() -> None:
    kubectl = _kubectl()
    assert kubectl, "no kubectl: hack/local-cluster.sh build makes one"
    built = subprocess.run([kubectl, "kustomize", str(REPO / "deploy/overlays/standalone")],
                           capture_output=True, text=True, check=True).stdout
    text = (REPO / "deploy" / "mpi-controller.yaml").read_text()
    header = text.splitlines(keepends=True)[:3]
    assert all(line.startswith("# ") for line in header)
    assert text[len("".join(header)):] == built, "run hack/gen-install-manifest.sh"


