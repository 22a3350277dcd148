"""The compiled methods of the command line's dataclasses, kept between starts like bytecode.

Defining a dataclass compiles the source of the methods it generates: Python 3.11's
``dataclasses`` hands each ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``... to ``exec`` as text. ``mpi-controller run`` defines ~70 dataclasses, ~380
such functions: ~85 ms of a ~340 ms import on the 2-core machine here (docs/performance.md,
"A faster start"). What ``compile`` makes of a text depends on nothing else, so its result can
be kept as a ``.pyc`` keeps a module's.

Contract:

* :func:`install` (idempotent): from then on until :func:`finish`, ``dataclasses`` compiles
  through a table loaded from ``path`` (default :func:`default_path`: the package's
  ``__pycache__/dataclasses.<cache tag>.bin``). A file that is missing, unreadable, damaged
  or of another Python (its header is ``importlib.util.MAGIC_NUMBER``) is an empty table: the
  methods are compiled as without it. Each text is compiled exactly as ``dataclasses`` would
  (``"<string>"``, no inherited ``__future__`` flags), once per text, and the class behaves
  the same.
* :func:`finish` puts ``dataclasses`` back as it was and returns how many texts the table
  missed. It writes the file (the entries this process used, written to a temporary file
  and renamed) when ``write`` is True, or when it is None, some text was missed and writing
  bytecode is allowed (``sys.dont_write_bytecode`` False). A directory that cannot be written
  loses only the speed.
* ``python -m mpi_controller.startcache [PATH]`` imports what ``mpi-controller run`` imports
  and writes the file: the image's build and the tests' compile step run it after installing,
  as ``compileall`` writes the bytecode.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["default_path", "finish", "install"]

class _Compiler:
    """``exec`` for ``dataclasses``: texts compiled through ``table`` (each compiled once)."""

    def __init__(self, path: Path, table: dict[str, CodeType]) -> None:
        self.path = path
        self.table = table
        self.used: dict[str, CodeType] = {}
        self.missed = 0

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if type(source) is str:
            code = self.table.get(source)
            if code is None:
                self.missed += 1
                code = self.table[source] = compile(source, "<string>", "exec",
                                                    dont_inherit=True)
            self.used[source] = code
            source = code
        exec(source, globals, locals)


_active: list[_Compiler] = []


def default_path() -> Path:
    """``mpi_controller/__pycache__/dataclasses.<cache tag>.bin``."""
    tag = sys.implementation.cache_tag or "python"
    return Path(__file__).resolve().parent / "__pycache__" / f"dataclasses.{tag}.bin"


def _load(path: Path) -> dict[str, CodeType]:
    try:
        data = path.read_bytes()
        magic = importlib.util.MAGIC_NUMBER
        if not data.startswith(magic):
            return {}
        table = marshal.loads(data[len(magic):])
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: v for k, v in table.items() if type(k) is str and type(v) is CodeType}


def install(path: Path | None = None) -> None:
    """Compile dataclasses' methods through the table at ``path`` (see the module doc)."""
    if _active:
        return
    path = path or default_path()
    compiler = _Compiler(path, _load(path))
    _active.append(compiler)
    dataclasses.exec = compiler.exec  # type: ignore[attr-defined]


def finish(*, write: bool | None = None) -> int:
    """Put ``dataclasses`` back; write the table when asked or needed (see the module doc).
    Returns the texts missed (0 when :func:`install` was not called)."""
    if not _active:
        return 0
    compiler = _active.pop()
    if "exec" in vars(dataclasses):
        del dataclasses.exec  # type: ignore[attr-defined]
    if write is None:
        write = bool(compiler.missed) and not sys.dont_write_bytecode
    if write:
        _write(compiler.path, compiler.used)
    return compiler.missed


def _write(path: Path, table: dict[str, CodeType]) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps(table))
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    """``python -m mpi_controller.startcache [PATH]``: import what ``run`` does, write PATH."""
    args = sys.argv[1:] if argv is None else argv
    install(Path(args[0]) if args else None)
    importlib.import_module("mpi_controller.cli")
    importlib.import_module("mpi_controller.app")
    finish(write=True)
    return 0


if __name__ == "__main__":
    # Run as a script this file is a module of its own, apart from the one ``cli`` imports.
    from mpi_controller.startcache import main as _main

    raise SystemExit(_main())
