"""The runtime knows nothing of MPI; api/ and reconcile/ do no I/O."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "mpi_controller"


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


def test_runtime_imports_nothing_mpi_specific() -> None:
    allowed = "mpi_controller.runtime"
    for module, names in _imports(PKG / "runtime").items():
        ours = {n for n in names if n.startswith("mpi_controller")}
        assert all(n.startswith(allowed) for n in ours), (module, ours)


def test_api_and_reconcile_do_no_io() -> None:
    io_modules = ("mpi_controller.runtime", "kubernetes_asyncio", "aiohttp", "kubernetes",
                  "asyncio", "socket", "subprocess")
    for directory in ("api", "reconcile"):
        for module, names in _imports(PKG / directory).items():
            bad = {n for n in names if n.startswith(io_modules)}
            assert not bad, (module, bad)


def test_runtime_public_api_is_importable() -> None:
    import mpi_controller.runtime as runtime

    for name in runtime.__all__:
        assert getattr(runtime, name) is not None
