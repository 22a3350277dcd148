"""An MPIJob sync reads its job through one typed view: the helpers of a sync (status, children,
decisions) ask for ``parse_mpi_job(job)`` many times, and each would otherwise build the view
again (it was ~10% of the controller's CPU in a burst of MPIJobs)."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.engine.context import SyncContext
from mpi_controller.mpi import reconcile
from mpi_controller.mpi.v2beta1 import types
from tests.engine_harness import EngineHarness
from tests.mpijobs import small_job


def _job() -> dict[str, Any]:
    body = small_job("pi", workers=2)
    body["metadata"]["namespace"] = "ns"
    return body


async def test_a_sync_parses_its_job_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[object] = []
    real_parse, real_sync = types._parse, reconcile.MPIJobV2Beta1Mode.sync
    in_sync: list[tuple[object, list[object]]] = []

    def counting_parse(job: object) -> types.MPIJob:
        parsed.append(job)
        return real_parse(job)

    async def recording_sync(self: reconcile.MPIJobV2Beta1Mode, ctx: SyncContext) -> None:
        start = len(parsed)
        await real_sync(self, ctx)
        in_sync.append((ctx.job, parsed[start:]))

    monkeypatch.setattr(types, "_parse", counting_parse)
    monkeypatch.setattr(reconcile.MPIJobV2Beta1Mode, "sync", recording_sync)
    async with EngineHarness() as h:
        h.create(_job())
        await h.sync("pi")  # creates every child and writes the status: the busiest sync
        assert len(h.writes()) == 7
    (job, during), = in_sync
    assert [p is job for p in during] == [True]


def test_outside_the_block_and_for_other_objects_the_job_is_parsed_afresh() -> None:
    job, other = _job(), _job()
    with types.parsed_once(job) as view:
        assert types.parse_mpi_job(job) is view
        assert types.parse_mpi_job(other) is not view
        assert types.parse_mpi_job(other) == view
    assert types.parse_mpi_job(job) is not view
    assert types.parse_mpi_job(job) == view
