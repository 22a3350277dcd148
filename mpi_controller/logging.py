"""structlog configuration for the controller process, and the stream its lines go to.

Contract:

* ``configure(fmt, level)`` sets up structlog once: ``json`` renders one JSON object per line
  (for log collectors in a cluster), ``console`` a human-readable line. Context bound with
  ``structlog.contextvars`` (the job key during a sync) appears in every line. Messages are
  written to stderr through a :class:`LogStream`.
* :class:`LogStream` never hands a write error to the code that logged: a controller's sync,
  watch or signal handler must not fail because its log line could not be written. When the
  reader has gone (``EPIPE``: ``mpi-controller run 2>&1 | head`` after ``head`` exits, a log
  collector's pipe closed), the stream's file descriptor is pointed at ``/dev/null`` (so no
  later write, ours or a library's, fails again) and every callback given to
  :func:`on_reader_gone` runs once: ``mpi-controller run`` stops as on SIGTERM, as a Go
  operator ends when its stderr's reader goes (Go's runtime exits on ``SIGPIPE`` for fd 2).
  Any other write error (a full disk under a redirected log) drops that line and keeps going,
  counted in :attr:`LogStream.dropped`.
* :func:`on_reader_gone` registers a callback and returns its removal; registered after the
  reader has gone, the callback runs at once.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from collections.abc import Callable
from typing import TextIO, cast

import structlog

__all__ = ["LogStream", "configure", "on_reader_gone"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}

_callbacks: list[Callable[[], object]] = []
_gone = False


class LogStream:
    """A text stream's ``write`` and ``flush``, never raising (see the module doc)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.dropped = 0
        """Lines (or parts of lines) that could not be written."""
        self.reader_gone = False

    def write(self, text: str) -> int:
        if self.reader_gone:
            return len(text)
        try:
            return self.stream.write(text)
        except OSError as err:
            self._failed(err)
            return len(text)

    def flush(self) -> None:
        if self.reader_gone:
            return
        try:
            self.stream.flush()
        except OSError as err:
            self._failed(err)

    def _failed(self, err: OSError) -> None:
        self.dropped += 1
        if err.errno != errno.EPIPE:
            return
        self.reader_gone = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass  # a stream without a descriptor of its own: our writes are dropped anyway
        _reader_gone()


def _reader_gone() -> None:
    global _gone
    _gone = True
    for callback in list(_callbacks):
        callback()


def on_reader_gone(callback: Callable[[], object]) -> Callable[[], None]:
    """Run ``callback`` once the log's reader has gone (at once if it has); returns the undo."""
    if _gone:
        callback()
        return lambda: None
    _callbacks.append(callback)

    def remove() -> None:
        if callback in _callbacks:
            _callbacks.remove(callback)
    return remove


def configure(fmt: str = "console", level: str = "info") -> None:
    renderer: structlog.typing.Processor
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=cast(TextIO, LogStream(sys.stderr))),
        cache_logger_on_first_use=True,
    )
