"""The MPIJob CRD (deploy/crd/kubeflow.org_mpijobs.yaml) on a real API server.

It must become Established, accept every example (with upstream's server-side defaults), and
reject a bad enum and a malformed pod template with the API server's own messages.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import restore_conversion_service
from tests.support import REPO, Cluster, wait_for

pytestmark = pytest.mark.cluster

CRD = REPO / "deploy" / "crd" / "kubeflow.org_mpijobs.yaml"
EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.yaml")
                  if yaml.safe_load(p.read_text()).get("kind") == "MPIJob")
"""The MPIJob examples (the TFJob ones are tests/integration/test_tfjob_crd.py's)."""
GROUP, VERSION, PLURAL = "kubeflow.org", "v2beta1", "mpijobs"


@pytest.fixture(scope="module")
def crd_installed(cluster: Cluster, kube_api: object) -> None:
    from kubernetes import client

    restore_conversion_service(cluster)
    cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(CRD))
    ext = client.ApiextensionsV1Api(kube_api)

    def established() -> bool:
        crd = ext.read_custom_resource_definition("mpijobs.kubeflow.org")
        return any(
            c.type == "Established" and c.status == "True" for c in crd.status.conditions or []
        )

    wait_for(established, timeout=60, what="the MPIJob CRD to be Established")


def _create(kube_api: object, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    from kubernetes import client

    api = client.CustomObjectsApi(kube_api)
    result: dict[str, Any] = api.create_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, body, dry_run="All"
    )
    return result


def _rejection(kube_api: object, namespace: str, body: dict[str, Any]) -> str:
    from kubernetes.client.exceptions import ApiException

    with pytest.raises(ApiException) as exc:
        _create(kube_api, namespace, body)
    assert exc.value.status == 422
    message: str = json.loads(exc.value.body)["message"]
    return message


def _example(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((REPO / "examples" / name).read_text())
    return doc


@pytest.mark.usefixtures("crd_installed")
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_accepts_every_example(kube_api: object, namespace: str, example: Path) -> None:
    """Each example is accepted and gets upstream's CRD defaults (runLauncherAsWorker false,
    launcherCreationPolicy AtStartup, mpiImplementation OpenMPI, sshAuthMountPath /root/.ssh,
    slotsPerWorker 1, runPolicy.suspend false) where it sets none."""
    doc = yaml.safe_load(example.read_text())
    created = _create(kube_api, namespace, doc)
    spec = created["spec"]
    assert spec["runLauncherAsWorker"] is False
    assert spec["launcherCreationPolicy"] == "AtStartup"
    assert spec["runPolicy"]["suspend"] is False
    assert spec["mpiImplementation"] == doc["spec"].get("mpiImplementation", "OpenMPI")
    assert spec["sshAuthMountPath"] == doc["spec"].get("sshAuthMountPath", "/root/.ssh")
    assert spec["mpiReplicaSpecs"] == doc["spec"]["mpiReplicaSpecs"]


@pytest.mark.usefixtures("crd_installed")
def test_rejects_a_bad_enum(kube_api: object, namespace: str) -> None:
    doc = _example("pi.yaml")
    doc["spec"]["mpiImplementation"] = "Bogus"
    message = _rejection(kube_api, namespace, doc)
    assert 'spec.mpiImplementation: Unsupported value: "Bogus": supported values: ' in message
    assert '"OpenMPI", "Intel", "MPICH"' in message


@pytest.mark.usefixtures("crd_installed")
def test_rejects_a_malformed_pod_template(kube_api: object, namespace: str) -> None:
    """The generated PodTemplateSpec schema types and requires fields like the core API."""
    doc = _example("pi.yaml")
    containers = doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    bad = copy.deepcopy(containers[0])
    del bad["name"]
    bad["ports"] = [{"containerPort": "abc"}]
    containers[0] = bad
    message = _rejection(kube_api, namespace, doc)
    field = "spec.mpiReplicaSpecs.Worker.template.spec.containers[0]"
    assert f"{field}.ports[0].containerPort in body must be of type integer" in message
    assert f"{field}.name: Required value" in message


@pytest.mark.usefixtures("crd_installed")
def test_requires_replica_specs_and_has_printer_columns(kube_api: object, namespace: str) -> None:
    from kubernetes import client

    doc = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "empty"},
        "spec": {},
    }
    assert "spec.mpiReplicaSpecs: Required value" in _rejection(kube_api, namespace, doc)
    crd = client.ApiextensionsV1Api(kube_api).read_custom_resource_definition(
        "mpijobs.kubeflow.org"
    )
    version = crd.spec.versions[0]
    assert version.subresources.status is not None
    assert [(c.name, c.json_path) for c in version.additional_printer_columns] == [
        ("State", ".status.conditions[-1:].type"),
        ("Workers", ".spec.mpiReplicaSpecs.Worker.replicas"),
        ("Age", ".metadata.creationTimestamp"),
    ]


@pytest.mark.usefixtures("crd_installed")
def test_every_served_version_has_the_scale_subresource(kube_api: object) -> None:
    """v1 is the preferred version (GA sorts first): the HPA controller and ``kubectl scale``
    resolve the scale subresource through it, so v1 and v1alpha2 carry it too."""
    from kubernetes import client

    crd = client.ApiextensionsV1Api(kube_api).read_custom_resource_definition(
        "mpijobs.kubeflow.org")
    scales = {v.name: v.subresources.scale for v in crd.spec.versions}
    assert {name: (s.spec_replicas_path, s.status_replicas_path, s.label_selector_path)
            for name, s in scales.items()} == {
        "v2beta1": (".spec.mpiReplicaSpecs.Worker.replicas",
                    ".status.replicaStatuses.Worker.active",
                    ".status.replicaStatuses.Worker.selector"),
        "v1": (".spec.mpiReplicaSpecs.Worker.replicas",
               ".status.replicaStatuses.Worker.active",
               ".status.replicaStatuses.Worker.selector"),
        "v1alpha2": (".spec.mpiReplicaSpecs.Worker.replicas",
                     ".status.replicaStatuses.Worker.active", None),
    }


@pytest.mark.usefixtures("crd_installed")
def test_short_names_of_mpi_operator_v0_2_are_discovered(cluster: Cluster) -> None:
    """mpi-operator v0.2.3's CRD had the short names ``mj`` and ``mpij`` (its
    deploy/v1alpha2/mpi-operator.yaml), which kubectl learns from discovery; ``kubectl get
    mj`` itself reads through the preferred version ``v1``, so through the conversion webhook
    (e2e/test_webhooks.py)."""
    def short_names() -> list[str]:
        out = cluster.kubectl("api-resources", "--api-group", "kubeflow.org", "-o", "wide")
        return [line.split()[1] for line in out.splitlines() if line.split()[:1] == ["mpijobs"]]

    wait_for(lambda: short_names() == ["mj,mpij"], timeout=30,
             what="discovery to list mpijobs with the short names mj and mpij")


def test_the_crd_files_are_what_the_generator_makes(cluster: Cluster) -> None:
    """deploy/crd/ is generated by hack/gen-crd.py from this API server's pod template schema;
    a hand edit, or a generator change not re-run, fails here."""
    if not cluster.local:
        pytest.skip("the generated schema is pinned to the local cluster's Kubernetes version")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(REPO / "hack" / "gen-crd.py"), "--kubeconfig",
                          cluster.kubeconfig, "--check"], capture_output=True, text=True,
                         timeout=120)
    assert (out.returncode, out.stderr) == (0, "")
