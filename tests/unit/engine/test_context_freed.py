"""A sync's :class:`~mpi_controller.engine.context.SyncContext` (with its private job copy and
its :class:`~mpi_controller.engine.writer.ChildWriter`) holds no reference cycle: it is freed
when the sync returns, without the cyclic garbage collector (which ``mpi-controller run``
runs rarely, see ``GC_THRESHOLDS``)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from mpi_controller.engine.context import SyncContext
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.mpijobs import small_job
from tests.pytorchjobs import CPU_METRIC, pytorchjob, replica
from tests.tfjobs import example

Obj = dict[str, Any]


def elastic() -> Obj:
    return pytorchjob("el", {"Worker": replica(2)},
                      elastic={"minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_METRIC]})


@contextmanager
def collector_off() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def record_contexts(h: EngineHarness, kind: str,
                    refs: list[weakref.ref[SyncContext]]) -> None:
    controller = h.controller_for(kind)
    build: Callable[[Obj, str], SyncContext] = controller.new_context

    def new_context(job: Obj, key: str) -> SyncContext:
        ctx = build(job, key)
        refs.append(weakref.ref(ctx))
        return ctx

    controller.new_context = new_context  # type: ignore[method-assign]


@pytest.mark.parametrize(("kind", "body"), [
    ("TFJob", example),
    ("PyTorchJob", elastic),
    ("MPIJob", lambda: small_job("pi", workers=2)),
])
async def test_every_sync_context_is_freed_without_the_collector(
        kind: str, body: Callable[[], Obj]) -> None:
    steps = KindSteps(kind, container="", framework="")
    refs: list[weakref.ref[SyncContext]] = []
    async with EngineHarness(schemes=(kind.lower(),)) as h:
        record_contexts(h, kind, refs)
        with collector_off():
            job = body()
            h.create(job)
            name = job["metadata"]["name"]
            await h.sync(name, kind)  # creates the children
            for pod in steps.pod_names(h):
                steps.set_pod(h, pod, "Running")
            await h.sync(name, kind)  # writes the Running status
            assert len(refs) == 2
            assert [ref() for ref in refs] == [None, None]
