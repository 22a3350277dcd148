"""``tests.processes.compile_package``: a controller started by the tests and benchmarks from
the source tree finds its modules compiled, as in an installed package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.processes import compile_package


def _package(root: Path, modules: dict[str, str]) -> Path:
    for name, text in modules.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_every_module_gets_its_bytecode_even_when_imports_write_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pkg = _package(tmp_path / "pkg", {"__init__.py": "", "a.py": "X = 1\n",
                                      "sub/__init__.py": "", "sub/b.py": "Y = 2\n"})
    compile_package(pkg)
    for name in ("__init__.py", "a.py", "sub/__init__.py", "sub/b.py"):
        assert Path(importlib.util.cache_from_source(str(pkg / name))).is_file(), name


def test_a_directory_is_compiled_once_per_process(tmp_path: Path) -> None:
    pkg = _package(tmp_path / "once", {"__init__.py": "", "a.py": "X = 1\n"})
    compile_package(pkg)
    (pkg / "later.py").write_text("Z = 3\n")
    compile_package(pkg)
    assert not Path(importlib.util.cache_from_source(str(pkg / "later.py"))).exists()


def test_a_module_that_does_not_compile_is_an_error(tmp_path: Path) -> None:
    pkg = _package(tmp_path / "broken", {"__init__.py": "", "bad.py": "def (:\n"})
    with pytest.raises(RuntimeError, match=r"compiling the modules under .*broken"):
        compile_package(pkg)
