"""Expected sync failures are logged without a traceback; unexpected ones with it."""

from __future__ import annotations

import asyncio

import structlog

from mpi_controller.runtime.controller import Controller, ExpectedError, Result
from mpi_controller.runtime.errors import ApiError
from tests.support import async_wait_for


async def _fail_once_with(exc: Exception, name: str) -> list[dict[str, object]]:
    calls = 0

    async def sync(key: str) -> Result | None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise exc
        return None

    controller = Controller(name, sync)
    with structlog.testing.capture_logs() as logs:
        controller.enqueue("ns/a")
        task = asyncio.create_task(controller.run(1))
        await async_wait_for(lambda: calls >= 2, timeout=5, what="the retried sync")
        await controller.shutdown(drain=True)
        await task
    return [e for e in logs if e["event"] == "reconcile failed"]


async def test_expected_error_has_message_but_no_traceback() -> None:
    [entry] = await _fail_once_with(ExpectedError("Resource x exists"), "log-expected")
    assert entry["error"] == "Resource x exists"
    assert entry["error_type"] == "ExpectedError"
    assert "exc_info" not in entry


async def test_api_error_has_message_but_no_traceback() -> None:
    [entry] = await _fail_once_with(ApiError(409, "Conflict", "modified"), "log-api")
    assert entry["error_type"] == "ApiError"
    assert "exc_info" not in entry


async def test_unexpected_error_keeps_the_traceback() -> None:
    exc = KeyError("spec")
    [entry] = await _fail_once_with(exc, "log-unexpected")
    assert entry["exc_info"] is exc
