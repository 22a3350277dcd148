"""docs/metrics.md's table is what the controller registers: every family, its type and
labels, and nothing else."""

from __future__ import annotations

import importlib
import pkgutil
import re

import mpi_controller
from mpi_controller.runtime.metrics import REGISTRY
from tests.support import REPO

_ROW = re.compile(r"^\| `(?P<name>[a-z_:]+)` \| (?P<type>\w+) \|(?P<labels>[^|]*)\| [^|]+ \|$")


def registered() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Exposed family name -> (type, label names) of every metric in the project registry,
    after importing every module (a metric registers when its module loads)."""
    for module in pkgutil.walk_packages(mpi_controller.__path__, "mpi_controller."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for collector in list(REGISTRY._collector_to_names):
        kind = getattr(collector, "_type", "")
        name = str(getattr(collector, "_name", ""))
        out[f"{name}_total" if kind == "counter" else name] = (
            kind, tuple(getattr(collector, "_labelnames", ())))
    return out


def documented() -> dict[str, tuple[str, tuple[str, ...]]]:
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for line in (REPO / "docs" / "metrics.md").read_text().splitlines():
        match = _ROW.match(line)
        if match:
            labels = tuple(re.findall(r"`(\w+)`", match["labels"]))
            out[match["name"]] = (match["type"], labels)
    return out


def test_the_metrics_table_is_what_the_controller_registers() -> None:
    assert documented() == registered()
