"""The layers: ``kube/`` is pure and generic; ``runtime/`` knows no job kind; ``engine/``
knows no job kind; a kind's API and builders do no I/O (only its ``kind``, ``reconcile``,
``plugin`` and ``metrics`` modules meet the engine and Prometheus, and the ``reconcile`` module
of an API version with a launch mode of its own: MPIJob ``v1`` and ``v1alpha2``)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

from mpi_controller.kinds import PLUGIN_MODULES

PKG = Path(__file__).resolve().parents[2] / "mpi_controller"
IO_MODULES = ("mpi_controller.runtime", "mpi_controller.engine", "kubernetes_asyncio", "aiohttp",
              "kubernetes", "asyncio", "socket", "subprocess", "prometheus_client")
KIND_PACKAGES = tuple(m.split(".")[1] for m in PLUGIN_MODULES)
"""Every kind's package (the registry's)."""
KIND_IO_MODULES = {"kind.py", "metrics.py", "plugin.py", "reconcile.py"}
VERSION_IO_MODULE = "reconcile.py"


def _imports(directory: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in directory.rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        found[str(path.relative_to(PKG))] = names
    return found


def _ours(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith("mpi_controller")}


def test_kube_helpers_are_pure_and_import_only_each_other() -> None:
    for module, names in _imports(PKG / "kube").items():
        assert all(n.startswith("mpi_controller.kube") for n in _ours(names)), (module, names)
        assert not {n for n in names if n.startswith(IO_MODULES)}, (module, names)


def test_runtime_imports_only_runtime_and_kube() -> None:
    allowed = ("mpi_controller.runtime", "mpi_controller.kube")
    for module, names in _imports(PKG / "runtime").items():
        assert all(n.startswith(allowed) for n in _ours(names)), (module, _ours(names))


def test_the_fake_api_is_built_on_the_runtime_alone() -> None:
    """``mpi_controller.testing`` serves any controller on the runtime: it knows no engine and
    no job kind."""
    allowed = ("mpi_controller.runtime", "mpi_controller.kube", "mpi_controller.testing")
    for module, names in _imports(PKG / "testing").items():
        assert all(n.startswith(allowed) for n in _ours(names)), (module, _ours(names))


def test_engine_knows_no_job_kind() -> None:
    allowed = ("mpi_controller.runtime", "mpi_controller.kube", "mpi_controller.engine")
    for module, names in _imports(PKG / "engine").items():
        assert all(n.startswith(allowed) for n in _ours(names)), (module, _ours(names))


def test_the_engines_training_decisions_do_no_io() -> None:
    """engine/training: only its kind, its reconcile and metrics meet I/O; the rest is pure."""
    io = ("mpi_controller.runtime.informer", "mpi_controller.runtime.controller",
          "mpi_controller.engine.context", "mpi_controller.engine.writer", "kubernetes_asyncio",
          "aiohttp", "asyncio", "socket", "subprocess", "prometheus_client")
    for module, names in _imports(PKG / "engine" / "training").items():
        if Path(module).name in KIND_IO_MODULES:
            continue
        bad = {n for n in names if n.startswith(io)}
        assert not bad, (module, bad)


def test_kinds_do_not_import_each_other() -> None:
    for kind in KIND_PACKAGES:
        others = tuple(f"mpi_controller.{k}" for k in KIND_PACKAGES if k != kind)
        for module, names in _imports(PKG / kind).items():
            assert not {n for n in names if n.startswith(others)}, (kind, module)


PURE_ENGINE = ("mpi_controller.engine.training", *(
    f"mpi_controller.engine.training.{m}" for m in
    ("api", "children", "conditions", "crd", "decisions", "defaults", "env", "framework", "gang",
     "hooks", "names", "replicas", "status", "validation")))
"""The engine's pure training-operator modules (and their package, whose ``__init__`` imports
nothing), which a kind's API and builders may use."""


def test_a_kinds_api_and_builders_do_no_io() -> None:
    for kind in KIND_PACKAGES:
        for module, names in _imports(PKG / kind).items():
            if Path(module).name in KIND_IO_MODULES and Path(module).parent == Path(kind):
                continue
            if Path(module).name == VERSION_IO_MODULE and Path(module).parent.parent == Path(kind):
                continue
            bad = {n for n in names if n.startswith(IO_MODULES) and n not in PURE_ENGINE}
            assert not bad, (module, bad)


def test_public_apis_are_importable() -> None:
    packages = [importlib.import_module(f"mpi_controller.{p}")
                for p in ("runtime", *KIND_PACKAGES)]
    assert len(packages) >= 4
    for package in packages:
        for name in package.__all__:
            assert getattr(package, name) is not None, (package.__name__, name)


PUBLIC_APIS = (*(f"mpi_controller.{k}" for k in KIND_PACKAGES), "mpi_controller.engine.training")
"""Each kind's public API, and the engine's training-operator part the kinds build on."""
HEAVY: tuple[str, ...] = ("aiohttp", "prometheus_client", "mpi_controller.runtime")
MAX_MODULE_LINES = 500


def test_importing_a_kinds_public_api_loads_no_io_library_and_no_runtime() -> None:
    """What ``import mpi_controller.<kind>`` loads in a fresh interpreter, not what it names."""
    script = ("import importlib, json, sys\n"
              "importlib.import_module(sys.argv[1])\n"
              "print(json.dumps(sorted(sys.modules)))\n")
    for module in PUBLIC_APIS:
        done = subprocess.run([sys.executable, "-c", script, module], check=True,
                              capture_output=True, text=True, cwd=PKG.parent)
        loaded = json.loads(done.stdout)
        assert module in loaded
        heavy = [m for m in loaded if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
        assert not heavy, (module, heavy)


def test_no_module_is_over_500_lines() -> None:
    long = {str(p.relative_to(PKG)): n for p in PKG.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, long
