"""Deadline: an ``asyncio.timeout``-like inactivity timer on the injected clock."""

from __future__ import annotations

import asyncio

import pytest

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.deadline import Deadline, DeadlineExceeded
from tests.unit.runtime.fakes import settle


async def test_expires_when_not_touched() -> None:
    clock = ManualClock()

    async def body() -> None:
        async with Deadline(clock, 5.0):
            await asyncio.Event().wait()

    task = asyncio.create_task(body())
    await settle()
    clock.advance(4.9)
    await settle()
    assert not task.done()
    clock.advance(0.1)
    await settle()
    with pytest.raises(DeadlineExceeded):
        await task


async def test_touch_pushes_the_deadline() -> None:
    clock = ManualClock()
    ticks = asyncio.Queue[None]()

    async def body() -> None:
        async with Deadline(clock, 5.0) as d:
            while True:
                await ticks.get()
                d.touch()

    task = asyncio.create_task(body())
    await settle()
    clock.advance(4.0)
    ticks.put_nowait(None)
    await settle()
    clock.advance(4.0)  # t=8 < 4 + 5
    await settle()
    assert not task.done()
    clock.advance(1.0)
    await settle()
    assert isinstance(task.exception(), DeadlineExceeded)


async def test_outside_cancellation_is_not_converted() -> None:
    clock = ManualClock()

    async def body() -> None:
        async with Deadline(clock, 5.0):
            await asyncio.Event().wait()

    task = asyncio.create_task(body())
    await settle()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert clock.pending() == 0


async def test_finishing_in_time_leaves_no_timer() -> None:
    clock = ManualClock()
    async with Deadline(clock, 5.0) as d:
        await asyncio.sleep(0)
    assert not d.expired
    assert clock.pending() == 0
