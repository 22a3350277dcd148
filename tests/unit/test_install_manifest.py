"""The single-file install, deploy/mpi-controller.yaml, holds the controller (its equality with
`kubectl kustomize` of deploy/overlays/standalone is checked in
tests/integration/test_install_manifest.py, where the local cluster's kubectl is built)."""

from __future__ import annotations

import yaml

from tests.support import REPO


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
