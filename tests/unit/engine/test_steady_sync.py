"""A sync that finds a job's children in place and writes nothing runs to its end without
waiting on the event loop (no task made for writes that are not needed): an MPIJob's Service,
ConfigMap and Secret, a TFJob's missing pods and Services."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.engine_harness import EngineHarness
from tests.mpijobs import small_job
from tests.tfjobs import replica, tfjob


def _tfjob(name: str) -> dict[str, Any]:
    return tfjob(name, {"PS": replica(2, port=2222), "Worker": replica(4, port=2222)})


@pytest.mark.parametrize(("scheme", "kind", "make"), [
    ("mpijob", "MPIJob", lambda name: small_job(name, workers=4)),
    ("tfjob", "TFJob", _tfjob),
])
async def test_a_steady_sync_never_waits(scheme: str, kind: str,
                                         make: Callable[[str], dict[str, Any]]) -> None:
    async with EngineHarness(schemes=(scheme,)) as h:
        h.create(make("job"))
        await h.sync("job", kind)  # creates the children, writes the status
        await h.sync("job", kind)  # the status write's echo
        h.mark()
        sync = h.controller_for(kind).sync("ns/job")
        try:
            sync.send(None)
        except StopIteration:
            waited = False
        else:
            waited = True
            sync.close()
        assert not waited
        await h.settle()
        assert h.writes() == []
