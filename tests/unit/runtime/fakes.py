"""Test doubles for the runtime: a scripted ListerWatcher, a recording sink, a fixed RNG."""

from __future__ import annotations

import asyncio
import random
from collections import deque
from typing import Any

import pytest

from mpi_controller.runtime.cache import DeletedFinalStateUnknown, Indexer
from mpi_controller.runtime.clock import ManualClock

Obj = dict[str, Any]


async def settle(rounds: int = 20) -> None:
    """Let every ready task run (no time passes on a manual clock)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


class Running:
    """``async with Running(thing):`` runs ``thing.run()`` as a task (settled on entry) and
    cancels it on exit, asserting that it ends by cancellation."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Running:
        self.task = asyncio.create_task(self.runner.run())
        await settle()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.task is not None
        self.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self.task


class SleepRecorder(ManualClock):
    """A manual clock whose sleeps return at once, advance it, and are recorded in ``slept``
    (so a test asserts exact waits without waiting)."""

    def __init__(self) -> None:
        super().__init__()
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)


class FixedRandom(random.Random):
    """``random()`` always returns ``value`` (jitter becomes exact)."""

    def __init__(self, value: float = 0.0) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


def pod(name: str, rv: str, ns: str = "ns", **labels: str) -> Obj:
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": ns, "resourceVersion": rv, "uid": f"uid-{name}",
                         "labels": dict(labels)}}


def page(items: list[Obj], rv: str, cont: str = "") -> Obj:
    meta = {"resourceVersion": rv}
    if cont:
        meta["continue"] = cont
    return {"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items}


class FakeWatch:
    """An open watch the test feeds: ``send`` events, ``close`` it, or ``fail`` it."""

    _END = object()

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params
        self._q: asyncio.Queue[object] = asyncio.Queue()
        self.closed = False

    def send(self, type_: str, obj: Obj) -> None:
        self._q.put_nowait({"type": type_, "object": obj})

    def close(self) -> None:
        self._q.put_nowait(self._END)

    def fail(self, exc: BaseException) -> None:
        self._q.put_nowait(exc)

    def __aiter__(self) -> FakeWatch:
        return self

    async def __anext__(self) -> Obj:
        item = await self._q.get()
        if item is self._END:
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            raise item
        assert isinstance(item, dict)
        return item

    async def aclose(self) -> None:
        self.closed = True


class FakeListerWatcher:
    """Scripted list results (pages or exceptions) and test-driven watches."""

    def __init__(self, *responses: Obj | BaseException) -> None:
        self.responses: deque[Obj | BaseException] = deque(responses)
        self.list_calls: list[dict[str, Any]] = []
        self.watches: list[FakeWatch] = []
        self._more = asyncio.Event()

    def script(self, *responses: Obj | BaseException) -> None:
        """Add list results; a list call waiting for one proceeds."""
        self.responses.extend(responses)
        self._more.set()

    async def list(self, **params: Any) -> Obj:
        self.list_calls.append(params)
        while not self.responses:  # nothing scripted yet: wait for the test to script more
            self._more.clear()
            await self._more.wait()
        r = self.responses.popleft()
        if isinstance(r, BaseException):
            raise r
        return r

    def watch(self, **params: Any) -> FakeWatch:
        w = FakeWatch(params)
        self.watches.append(w)
        return w

    @property
    def watch_params(self) -> list[dict[str, Any]]:
        return [w.params for w in self.watches]


class RecordingSink:
    """An EventSink that records calls and what the indexer held at that moment."""

    def __init__(self, indexer: Indexer | None = None) -> None:
        self.indexer = indexer
        self.calls: list[tuple[Any, ...]] = []
        self.seen_in_indexer: list[bool] = []

    def _note(self, key: str, present: bool) -> None:
        if self.indexer is not None:
            self.seen_in_indexer.append((key in self.indexer) == present)

    def on_add(self, obj: Obj) -> None:
        self.calls.append(("add", obj["metadata"]["name"], obj["metadata"].get("resourceVersion")))
        self._note(f"{obj['metadata']['namespace']}/{obj['metadata']['name']}", True)

    def on_update(self, old: Obj, new: Obj) -> None:
        self.calls.append(("update", new["metadata"]["name"], old["metadata"]["resourceVersion"],
                           new["metadata"]["resourceVersion"]))

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.calls.append(("tombstone", obj.key))
        else:
            self.calls.append(("delete", obj["metadata"]["name"]))
            self._note(f"{obj['metadata']['namespace']}/{obj['metadata']['name']}", False)


class ReflectorHarness:
    """A Reflector over ``lw`` on a manual clock with a recording sink, run for the length of
    an ``async with`` block; ``options`` go to the Reflector."""

    def __init__(self, lw: FakeListerWatcher, rnd: float = 0.0, **options: Any) -> None:
        from mpi_controller.runtime.clock import ManualClock
        from mpi_controller.runtime.reflector import Reflector

        self.clock = ManualClock()
        self.lw = lw
        self.indexer = Indexer()
        self.sink = RecordingSink(self.indexer)
        self.reflector = Reflector(lw, self.indexer, self.sink, clock=self.clock,
                                   rng=FixedRandom(rnd), **options)
        self._running = Running(self.reflector)

    async def __aenter__(self) -> ReflectorHarness:
        await self._running.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._running.__aexit__(*exc)

    async def advance(self, seconds: float) -> None:
        await settle()
        self.clock.advance(seconds)
        await settle()

    def keys(self) -> list[str]:
        return sorted(self.indexer.list_keys())

    def watch(self, i: int = -1) -> FakeWatch:
        return self.lw.watches[i]
