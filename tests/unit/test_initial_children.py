"""Every kind's public ``initial_children``: what ``mpi-controller render`` prints for the kind's
examples (the same function builds both), with the shared keywords; and a refusal, naming the
field, of a job without ``metadata.namespace`` or ``metadata.uid``."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.engine.plugin import KindPlugin, RenderOptions
from mpi_controller.engine.training.children import InitialChildren
from mpi_controller.kinds import PLUGIN_MODULES, plugins

REPO = Path(__file__).resolve().parents[2]
OPTIONS = RenderOptions(cluster_domain="cluster.local", gang_scheduling="volcano",
                        namespace="team", priority_classes={"high": 1000})


def _public(described: KindPlugin) -> InitialChildren:
    module = PLUGIN_MODULES[plugins().index(described)]
    package = importlib.import_module(module.removesuffix(".plugin"))
    assert "initial_children" in package.__all__
    built: InitialChildren = package.initial_children
    return built


def _example(described: KindPlugin) -> dict[str, Any]:
    assert described.renderer is not None
    doc = yaml.safe_load((REPO / described.examples[0]).read_text())
    doc["metadata"].update(namespace="team", uid="u-1")
    return described.renderer.prepare(doc, OPTIONS)


def _without_keys(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects, an SSH Secret's freshly generated key pair left out."""
    return [{**o, "data": None} if o["kind"] == "Secret" else o for o in objects]


RENDERED = [p for p in plugins() if p.renderer is not None]
"""The kinds ``render`` shows (TrainJob needs its runtime: not rendered yet)."""


@pytest.mark.parametrize("described", RENDERED, ids=lambda p: p.kind)
def test_render_prints_the_kinds_initial_children(described: KindPlugin) -> None:
    assert described.renderer is not None
    job = _example(described)
    built = _public(described)(job, cluster_domain=OPTIONS.cluster_domain,
                               gang_scheduling=OPTIONS.gang_scheduling,
                               priority_classes=OPTIONS.priority_classes)
    assert built
    assert _without_keys(built) == _without_keys(described.renderer.objects(job, OPTIONS))
    assert {o["metadata"]["ownerReferences"][0]["uid"] for o in built} == {"u-1"}


@pytest.mark.parametrize("field", ["namespace", "uid"])
@pytest.mark.parametrize("described", RENDERED, ids=lambda p: p.kind)
def test_a_job_without_namespace_or_uid_is_refused(described: KindPlugin, field: str) -> None:
    job = _example(described)
    del job["metadata"][field]
    with pytest.raises(ValueError, match=rf"^metadata\.{field} is required$"):
        _public(described)(job)
