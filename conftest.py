"""Pytest fixtures shared by tests/ and e2e/.

* ``cluster`` (session): the cluster under test. Uses ``$KUBECONFIG`` when it is set and the
  API server answers; otherwise starts the local control plane with ``hack/local-cluster.sh up``
  (built on first use) and leaves it running for the next run.
* ``kube_api`` (session): an official, synchronous ``kubernetes.client.ApiClient`` for that
  cluster, used by tests as an independent observer.
* ``namespace`` (function): a fresh namespace, deleted after the test.

Tests in ``tests/unit`` never touch these fixtures and need no cluster.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import HACK, Cluster, WaitTimeout, unique_name, wait_for


def _reachable(kubeconfig: str) -> bool:
    from kubernetes import client, config

    try:
        api = config.new_client_from_config(config_file=kubeconfig)
        client.VersionApi(api).get_code(_request_timeout=5)
        api.close()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def cluster() -> Cluster:
    env = os.environ.get("KUBECONFIG")
    if env and _reachable(env):
        # The local control plane's kubeconfig sits in its state directory (as `make test`
        # exports it); then the tests may also restart and compact parts of it.
        state = Path(env).resolve().parent
        local = (state / "ports.env").exists() and (state / "run" / "kube-apiserver.sh").exists()
        return Cluster(kubeconfig=env, local=local)
    out = subprocess.run(
        ["bash", str(HACK), "up"], check=True, capture_output=True, text=True, timeout=3600
    )
    kubeconfig = out.stdout.strip().splitlines()[-1]
    return Cluster(kubeconfig=kubeconfig, local=True)


@pytest.fixture(scope="session")
def kube_api(cluster: Cluster) -> Iterator[object]:
    from kubernetes import config

    api = config.new_client_from_config(config_file=cluster.kubeconfig)
    yield api
    api.close()


@pytest.fixture
def namespace(kube_api: object) -> Iterator[str]:
    from kubernetes import client

    core = client.CoreV1Api(kube_api)
    name = unique_name("t")
    core.create_namespace({"metadata": {"name": name, "labels": {"mpi-controller-test": "true"}}})

    def default_account() -> bool:
        return bool(core.list_namespaced_service_account(
            name, field_selector="metadata.name=default").items)

    try:
        wait_for(default_account, timeout=10, what=f"the default ServiceAccount in {name}")
    except WaitTimeout:
        # After a test restarts the API server, kube-controller-manager's ServiceAccounts
        # controller can take over a minute to see new namespaces (its watch backs off), and
        # pods cannot be created without the account: create what it would (an empty
        # ServiceAccount named default); it leaves an existing one alone.
        with contextlib.suppress(client.ApiException):
            core.create_namespaced_service_account(name, {"metadata": {"name": "default"}})
        wait_for(default_account, timeout=30, what=f"the default ServiceAccount in {name}")
    yield name
    delete_mpijobs(kube_api, name)
    core.delete_namespace(name, propagation_policy="Background")


def delete_mpijobs(api: object, namespace: str) -> None:
    """Delete the MPIJobs of ``namespace`` through the stored version, v2beta1. Deleting the
    namespace alone would wait for a conversion webhook: the namespace controller lists them
    through the group's preferred version, v1."""
    from kubernetes import client

    from tests.mpijobs import GROUP, PLURAL, VERSION

    with contextlib.suppress(client.ApiException):
        client.CustomObjectsApi(api).delete_collection_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL)


CRD_PATH = "deploy/crd/kubeflow.org_mpijobs.yaml"
TFJOB_CRD_PATH = "deploy/crd/kubeflow.org_tfjobs.yaml"


def install_crd(cluster: Cluster, kube_api: object, path: str, name: str) -> str:
    """Install (server-side apply) the CRD file ``path`` and wait until ``name`` is
    Established."""
    from kubernetes import client

    from tests.support import REPO

    cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(REPO / path))
    ext = client.ApiextensionsV1Api(kube_api)

    def established() -> bool:
        crd = ext.read_custom_resource_definition(name)
        return any(c.type == "Established" and c.status == "True"
                   for c in (crd.status.conditions or []))

    wait_for(established, timeout=60, what=f"the CRD {name} to be Established")
    return name


def restore_conversion_service(cluster: Cluster) -> None:
    """A controller run with ``--webhook-url`` points the CRD's conversion webhook at a URL;
    the manifest names the Service, and a CRD with both is invalid: go back to the Service
    form before applying (the apply then sets the manifest's values)."""
    url = cluster.kubectl("get", "crd", "mpijobs.kubeflow.org", "-o",
                          "jsonpath={.spec.conversion.webhook.clientConfig.url}", check=False)
    if url:
        cluster.kubectl("patch", "crd", "mpijobs.kubeflow.org", "--type", "merge", "-p",
                        '{"spec":{"conversion":{"webhook":{"clientConfig":{"url":null,'
                        '"service":{"name":"mpi-operator-webhook","namespace":"mpi-operator"}}}}}}')


@pytest.fixture(scope="session")
def mpijob_crd(cluster: Cluster, kube_api: object) -> str:
    """Installs (server-side apply) the MPIJob CRD and waits until it is Established."""
    restore_conversion_service(cluster)
    return install_crd(cluster, kube_api, CRD_PATH, "mpijobs.kubeflow.org")


@pytest.fixture(scope="session")
def tfjob_crd(cluster: Cluster, kube_api: object) -> str:
    """Installs (server-side apply) the TFJob CRD and waits until it is Established."""
    return install_crd(cluster, kube_api, TFJOB_CRD_PATH, "tfjobs.kubeflow.org")


PYTORCHJOB_CRD_PATH = "deploy/crd/kubeflow.org_pytorchjobs.yaml"


@pytest.fixture(scope="session")
def pytorchjob_crd(cluster: Cluster, kube_api: object) -> str:
    """Installs (server-side apply) the PyTorchJob CRD and waits until it is Established."""
    return install_crd(cluster, kube_api, PYTORCHJOB_CRD_PATH, "pytorchjobs.kubeflow.org")


@pytest.fixture(scope="session")
def job_crds(cluster: Cluster, kube_api: object, mpijob_crd: str) -> dict[str, str]:
    """Installs the CRD of every kind the controller serves (:mod:`mpi_controller.kinds`) and
    waits until each is Established: ``{scheme: CRD name}``."""
    from mpi_controller.kinds import plugins

    return {p.scheme: mpijob_crd if p.scheme == "mpijob" else install_crd(
        cluster, kube_api, f"deploy/{p.crd_dir}/{p.crd.file_name}", p.crd_name) for p in plugins()}
