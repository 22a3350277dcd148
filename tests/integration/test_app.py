"""`mpi-controller run` startup against the real API server."""

from __future__ import annotations

import asyncio

import pytest

from mpi_controller import app
from mpi_controller.options import ServerOptions
from mpi_controller.runtime.client import Resource
from tests.support import Cluster

pytestmark = pytest.mark.cluster


def test_exits_1_when_the_crd_is_not_installed(cluster: Cluster, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Go operator startup step 4: listing MPIJobs answers NotFound -> "CRD doesn't exist.
    Exiting", exit status 1. A resource the API server does not serve gives the same 404.
    Without --enable-scheme, it is so only when no kind's CRD is served."""
    monkeypatch.setattr(app, "MPIJOBS", Resource("kubeflow.org", "v2beta1", "nosuchjobs",
                                                 kind="NoSuchJob"))
    opts = ServerOptions(kubeconfig=cluster.kubeconfig, health_port=0,
                         enabled_schemes=("mpijob",))
    assert asyncio.run(app.run(opts)) == 1
    captured = capsys.readouterr()
    assert "CRD doesn't exist. Exiting" in captured.out + captured.err
    monkeypatch.setattr(app, "TFJOBS", Resource("kubeflow.org", "v1", "nosuchtfjobs",
                                                kind="NoSuchTFJob"))
    monkeypatch.setattr(app, "PYTORCHJOBS", Resource("kubeflow.org", "v1", "nosuchpytorchjobs",
                                                     kind="NoSuchPyTorchJob"))
    assert asyncio.run(app.run(ServerOptions(kubeconfig=cluster.kubeconfig, health_port=0))) == 1
    captured = capsys.readouterr()
    assert "mpijobs.kubeflow.org, tfjobs.kubeflow.org, pytorchjobs.kubeflow.org" in (
        captured.out + captured.err)
