"""`mpi-controller run` startup against the real API server."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from mpi_controller import app
from mpi_controller.kinds import plugins
from mpi_controller.options import ServerOptions
from tests.support import Cluster

pytestmark = pytest.mark.cluster


def _unserved(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kind's resource renamed to one the API server does not serve (its plural
    prefixed ``nosuch``), as if no CRD were installed."""
    real = app.plugin
    monkeypatch.setattr(app, "plugin", lambda scheme: dataclasses.replace(
        real(scheme), plural=f"nosuch{real(scheme).plural}"))


def test_exits_1_when_the_crd_is_not_installed(cluster: Cluster, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Go operator startup step 4: listing MPIJobs answers NotFound -> "CRD doesn't exist.
    Exiting", exit status 1. A resource the API server does not serve gives the same 404.
    Without --enable-scheme, it is so only when no kind's CRD is served (the message names
    every kind's CRD)."""
    _unserved(monkeypatch)
    opts = ServerOptions(kubeconfig=cluster.kubeconfig, health_port=0,
                         enabled_schemes=("mpijob",))
    assert asyncio.run(app.run(opts)) == 1
    captured = capsys.readouterr()
    assert "CRD doesn't exist. Exiting" in captured.out + captured.err
    assert "nosuchmpijobs.kubeflow.org" in captured.out + captured.err
    assert asyncio.run(app.run(ServerOptions(kubeconfig=cluster.kubeconfig, health_port=0))) == 1
    captured = capsys.readouterr()
    assert ", ".join(f"nosuch{p.plural}.kubeflow.org" for p in plugins()
                     if not p.explicit) in (
        captured.out + captured.err)
