"""``mpi_controller.startcache``: dataclasses' generated methods compiled once and kept, the
classes unchanged, and nothing lost when the file is missing, damaged or cannot be written."""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mpi_controller import startcache

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def uninstalled() -> Iterator[None]:
    startcache.finish(write=False)  # the command line's own install, when cli was imported
    yield
    startcache.finish(write=False)


def define() -> type[Any]:
    @dataclasses.dataclass(frozen=True)
    class Replica:
        name: str
        count: int = 1
        labels: tuple[str, ...] = dataclasses.field(default_factory=tuple)
    return Replica


def check(cls: Callable[..., Any]) -> None:
    one = cls("worker", 2, ("a",))
    assert (one.name, one.count, one.labels) == ("worker", 2, ("a",))
    assert repr(cls("launcher")).endswith("Replica(name='launcher', count=1, labels=())")
    assert cls("launcher") == cls("launcher")
    assert cls("launcher") != cls("worker")
    assert hash(cls("x", 3)) == hash(cls("x", 3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.count = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        cls()


def test_a_written_table_is_used_by_the_next_start(tmp_path: Path) -> None:
    path = tmp_path / "dc.bin"
    startcache.install(path)
    check(define())
    missed = startcache.finish(write=True)
    assert missed >= 4  # __init__, __repr__, __eq__, __hash__, __setattr__, __delattr__
    assert path.read_bytes().startswith(importlib.util.MAGIC_NUMBER)
    assert "exec" not in vars(dataclasses)

    startcache.install(path)
    check(define())
    assert startcache.finish(write=False) == 0


@pytest.mark.parametrize("content", [
    b"",
    b"not a table at all",
    importlib.util.MAGIC_NUMBER + b"\x00\x01 damaged",
    b"\x00\x00\x0d\x0a" + b"another Python's magic number",
])
def test_a_bad_file_is_an_empty_table(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "dc.bin"
    path.write_bytes(content)
    startcache.install(path)
    check(define())
    assert startcache.finish(write=False) >= 4


def test_written_only_when_something_was_missed_and_bytecode_may_be_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "dc.bin"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    startcache.install(path)
    define()
    startcache.finish()
    assert not path.exists()

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    startcache.install(path)
    define()
    startcache.finish()
    written = path.stat().st_mtime_ns
    path.touch()
    touched = path.stat().st_mtime_ns

    startcache.install(path)
    define()
    assert startcache.finish() == 0
    assert path.stat().st_mtime_ns == touched
    assert touched >= written


def test_a_directory_that_cannot_be_written_loses_only_the_speed(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    path = blocker / "dc.bin"  # its parent is a file: neither mkdir nor write can work
    startcache.install(path)
    check(define())
    assert startcache.finish(write=True) >= 4
    assert not path.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_install_twice_keeps_the_first_table(tmp_path: Path) -> None:
    first, second = tmp_path / "first.bin", tmp_path / "second.bin"
    startcache.install(first)
    startcache.install(second)
    define()
    startcache.finish(write=True)
    assert first.exists()
    assert not second.exists()


def test_the_module_run_writes_a_table_that_a_start_of_run_finds_complete(
        tmp_path: Path) -> None:
    path = tmp_path / "dc.bin"
    subprocess.run([sys.executable, "-m", "mpi_controller.startcache", str(path)],
                   cwd=REPO, check=True)
    out = subprocess.run(
        [sys.executable, "-c",
         "import sys; from mpi_controller import startcache; "
         "startcache.install(__import__('pathlib').Path(sys.argv[1])); "
         "import mpi_controller.cli, mpi_controller.app; "
         "print(startcache.finish(write=False))", str(path)],
        cwd=REPO, check=True, capture_output=True, text=True).stdout
    assert out == "0\n"
