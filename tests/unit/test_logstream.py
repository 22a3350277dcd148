"""The controller's log stream never fails the code that logs; its reader gone, it stops the run.

A Go operator whose stderr reader goes away ends (Go's runtime exits on SIGPIPE for fd 2);
Python raises ``BrokenPipeError`` from the write instead, which had left ``mpi-controller run
2>&1 | head`` unable to stop: the SIGTERM handler's own log line raised before it set the stop
event.
"""

from __future__ import annotations

import errno
import io
import json
import os
from collections.abc import Iterator

import pytest
import structlog

from mpi_controller import logging as logs


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(logs, "_callbacks", [])
    monkeypatch.setattr(logs, "_gone", False)
    yield
    structlog.reset_defaults()


class Failing(io.StringIO):
    """A stream whose writes fail with ``error`` once ``fail`` is set."""

    def __init__(self, error: int) -> None:
        super().__init__()
        self.error = error
        self.fail = False

    def write(self, text: str) -> int:
        if self.fail:
            raise OSError(self.error, os.strerror(self.error))
        return super().write(text)


def test_lines_pass_through() -> None:
    target = io.StringIO()
    stream = logs.LogStream(target)
    assert stream.write("one\n") == 4
    stream.flush()
    assert target.getvalue() == "one\n"
    assert (stream.dropped, stream.reader_gone) == (0, False)


def test_a_full_disk_drops_the_line_and_goes_on() -> None:
    target = Failing(errno.ENOSPC)
    stream = logs.LogStream(target)
    called: list[str] = []
    logs.on_reader_gone(lambda: called.append("gone"))
    target.fail = True
    assert stream.write("lost\n") == 5
    target.fail = False
    stream.write("kept\n")
    assert target.getvalue() == "kept\n"
    assert (stream.dropped, stream.reader_gone, called) == (1, False, [])


def test_a_closed_pipe_points_the_descriptor_at_dev_null_and_calls_back_once() -> None:
    read_end, write_end = os.pipe()
    target = os.fdopen(write_end, "w", buffering=1)
    stream = logs.LogStream(target)
    called: list[str] = []
    remove_other = logs.on_reader_gone(lambda: called.append("removed"))
    logs.on_reader_gone(lambda: called.append("gone"))
    remove_other()
    try:
        stream.write("read\n")
        assert os.read(read_end, 100) == b"read\n"
        os.close(read_end)
        assert stream.write("nobody reads this\n") == 18  # BrokenPipeError caught
        stream.flush()
        stream.write("nor this\n")
        assert (stream.dropped, stream.reader_gone, called) == (1, True, ["gone"])
        # The descriptor is /dev/null now: a library writing to it directly does not fail.
        assert os.path.samefile(f"/proc/self/fd/{target.fileno()}", os.devnull)
        target.write("straight to the descriptor\n")
        target.flush()
        # Registered after the reader went: called at once.
        logs.on_reader_gone(lambda: called.append("late"))
        assert called == ["gone", "late"]
    finally:
        target.close()


def test_a_logger_configured_by_configure_survives_its_reader_going(
        monkeypatch: pytest.MonkeyPatch) -> None:
    target = Failing(errno.EPIPE)
    monkeypatch.setattr("sys.stderr", target)
    called: list[str] = []
    logs.on_reader_gone(lambda: called.append("gone"))
    logs.configure("json", "info")
    log = structlog.get_logger("t")
    log.info("hello", key="value")
    log.debug("hidden")
    line = json.loads(target.getvalue())
    assert line.pop("timestamp").endswith("Z")
    assert line == {"key": "value", "event": "hello", "level": "info"}
    target.fail = True
    log.info("signal received: shutting down")  # raised BrokenPipeError before
    assert called == ["gone"]
