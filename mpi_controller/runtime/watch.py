"""A WATCH over HTTP, as an async iterator of raw event dicts: :class:`WatchStream`.

It meets :class:`~mpi_controller.runtime.kubeclient.WatchEvents`: ``{"type": ..., "object":
{...}}`` dicts (``ERROR`` events are yielded as they come, see
:meth:`~mpi_controller.runtime.errors.ApiError.from_status`). It closes its HTTP response on
end, error, cancellation or :meth:`WatchStream.aclose`; use ``async with`` to be sure. The
response is any :class:`Body` (the lean client's
:class:`~mpi_controller.runtime.http1.BodyStream`, or aiohttp's through
:class:`~mpi_controller.runtime.viaaiohttp.AiohttpBody`), whose ``read`` raises an ``OSError``
when the connection fails or times out: that is an
:class:`~mpi_controller.runtime.errors.ApiError` with ``status == 0``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from types import TracebackType
from typing import Any, Protocol

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.runtime.codec import loads
from mpi_controller.runtime.errors import transport_error

__all__ = ["Body", "WatchStream"]


class Body(Protocol):
    """A response body read as it arrives."""

    async def read(self) -> bytes:
        """The next bytes; ``b""`` at the end. A failed or timed-out connection raises an
        ``OSError`` (``TimeoutError``)."""
        ...

    def close(self) -> None: ...


class WatchStream:
    """An open (or about to open) watch: async iterator of raw event dicts. ``connect`` sends
    the WATCH request (on first iteration) and returns the open response.

    Lines are split by hand from the chunks the connection delivers, so an event of any size
    fits.
    The response is released on end of stream, on any error (including cancellation) and on
    :meth:`aclose`.
    """

    def __init__(
        self, connect: Callable[[], Awaitable[Body]],
        decode: Callable[[bytes], Any] = loads,
    ) -> None:
        self._connect = connect
        self._decode = decode
        self._resp: Body | None = None
        self._events: AsyncGenerator[Obj, None] | None = None
        self._closed = False

    def __aiter__(self) -> WatchStream:
        return self

    async def __anext__(self) -> Obj:
        if self._closed:
            raise StopAsyncIteration
        try:
            if self._events is None:
                self._resp = await self._connect()
                self._events = self._read(self._resp, self._decode)
            return await anext(self._events)
        except StopAsyncIteration:
            await self.aclose()
            raise
        except OSError as exc:  # TimeoutError included
            stopped = self._closed  # aclose() from another task broke the connection
            await self.aclose()
            if stopped:
                raise StopAsyncIteration from exc
            raise transport_error(exc) from exc
        except BaseException:
            await self.aclose()
            raise

    @staticmethod
    async def _read(resp: Body, decode: Callable[[bytes], Any]) -> AsyncGenerator[Obj, None]:
        pending = b""
        while chunk := await resp.read():
            if b"\n" not in chunk:
                pending += chunk
                continue
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if line.strip():
                    yield decode(line)
        if pending.strip():
            yield decode(pending)

    async def aclose(self) -> None:
        """Stop the watch and release its connection (idempotent).

        May be called from another task while one iterates: the connection is closed and
        the iterating task's next (or pending) read ends the iteration.
        """
        self._closed = True
        resp, self._resp = self._resp, None
        if resp is not None:
            resp.close()
        events = self._events
        if events is not None and not events.ag_running:  # type: ignore[attr-defined]
            self._events = None
            await events.aclose()

    async def __aenter__(self) -> WatchStream:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
