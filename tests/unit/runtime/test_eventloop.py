"""``runtime.eventloop``: idle, the first message is handled at once; busy, the selector sleeps
up to its window first and returns everything that arrived meanwhile in one turn."""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from mpi_controller.runtime.eventloop import GatheringSelector, new_event_loop


class Pairs:
    """Socket pairs whose reading ends are registered for reading with ``selector``."""

    def __init__(self, selector: selectors.BaseSelector, count: int) -> None:
        self.pairs = [socket.socketpair() for _ in range(count)]
        for i, (reader, _) in enumerate(self.pairs):
            reader.setblocking(False)
            selector.register(reader, selectors.EVENT_READ, data=i)

    def send(self, i: int) -> None:
        self.pairs[i][1].send(b"x")

    def drain(self) -> None:
        for reader, _ in self.pairs:
            with contextlib.suppress(BlockingIOError):
                reader.recv(1024)

    def close(self) -> None:
        for a, b in self.pairs:
            a.close()
            b.close()


class Recorder:
    """A ``sleep`` that records its pauses and runs ``during`` instead of sleeping."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self.during: list[int] = []  # pairs that get a message while "asleep"
        self.pairs: Pairs | None = None

    def __call__(self, seconds: float) -> None:
        self.pauses.append(seconds)
        assert self.pairs is not None
        for i in self.during:
            self.pairs.send(i)
        self.during = []


@pytest.fixture
def gathering() -> Iterator[tuple[GatheringSelector, Pairs, Recorder]]:
    sleep = Recorder()
    selector = GatheringSelector(0.01, sleep=sleep)
    pairs = Pairs(selector, 3)
    sleep.pairs = pairs
    yield selector, pairs, sleep
    pairs.close()
    selector.close()


@pytest.fixture
def busy(gathering: tuple[GatheringSelector, Pairs, Recorder]
         ) -> tuple[GatheringSelector, Pairs, Recorder]:
    """The selector after a turn that found a message (read since): busy, nothing waiting."""
    selector, pairs, sleep = gathering
    pairs.send(0)
    assert _ready(selector.select(None)) == [0]
    pairs.drain()
    assert selector.busy
    assert sleep.pauses == []
    return gathering


def _ready(events: list[tuple[selectors.SelectorKey, int]]) -> list[int]:
    return sorted(key.data for key, _ in events)


def test_idle_the_first_message_comes_back_at_once_and_makes_it_busy(
        gathering: tuple[GatheringSelector, Pairs, Recorder]) -> None:
    selector, pairs, sleep = gathering
    pairs.send(1)
    assert _ready(selector.select(5)) == [1]
    assert sleep.pauses == []
    assert selector.busy


def test_busy_it_sleeps_its_window_then_returns_all_that_arrived_in_one_turn(
        busy: tuple[GatheringSelector, Pairs, Recorder]) -> None:
    selector, _pairs, sleep = busy
    sleep.during = [0, 2]  # two connections answer while it sleeps
    assert _ready(selector.select(5)) == [0, 2]
    assert sleep.pauses == [0.01]
    assert selector.busy


def test_busy_what_is_already_waiting_comes_back_without_a_sleep(
        busy: tuple[GatheringSelector, Pairs, Recorder]) -> None:
    selector, pairs, sleep = busy
    pairs.send(1)  # came while the turn ran: the loop is not keeping up, it must not wait
    assert _ready(selector.select(5)) == [1]
    assert sleep.pauses == []
    assert selector.busy


def test_a_timer_due_before_the_window_ends_is_waited_for_not_the_window(
        busy: tuple[GatheringSelector, Pairs, Recorder]) -> None:
    selector, _pairs, sleep = busy
    assert selector.select(0.004) == []  # the timer's turn: nothing arrived
    assert sleep.pauses == [0.004]
    assert not selector.busy


def test_busy_and_nothing_came_it_goes_idle_and_waits_for_the_next_message(
        busy: tuple[GatheringSelector, Pairs, Recorder]) -> None:
    selector, pairs, sleep = busy
    sender = threading.Timer(0.05, pairs.send, args=(1,))
    sender.start()
    try:
        assert _ready(selector.select(None)) == [1]  # a real wait, after the window
    finally:
        sender.join()
    assert sleep.pauses == [0.01]
    assert selector.busy
    pairs.drain()
    # With a timeout, the wait after an empty window is the timeout's rest.
    sleep.pauses.clear()
    started = time.monotonic()
    assert selector.select(0.06) == []
    assert time.monotonic() - started >= 0.045
    assert sleep.pauses == [0.01]
    assert not selector.busy


def test_a_poll_never_sleeps_even_busy(
        gathering: tuple[GatheringSelector, Pairs, Recorder]) -> None:
    selector, pairs, sleep = gathering
    pairs.send(2)
    selector.select(None)
    assert _ready(selector.select(0)) == [2]  # not drained: still readable
    assert selector.select(-1) != []
    assert sleep.pauses == []


def test_a_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="window must be positive, got 0"):
        GatheringSelector(0)


def test_new_event_loop_gathers_only_with_a_window() -> None:
    plain = new_event_loop(0)
    try:
        assert not isinstance(plain._selector, GatheringSelector)  # type: ignore[attr-defined]
    finally:
        plain.close()
    loop = new_event_loop(0.005)
    try:
        selector = loop._selector  # type: ignore[attr-defined]
        assert isinstance(selector, GatheringSelector)
        assert selector.window == 0.005

        async def echo() -> bytes:
            a, b = socket.socketpair()
            reader, writer = await asyncio.open_connection(sock=a)
            b.sendall(b"one")
            first = await reader.readexactly(3)
            b.sendall(b"two")  # the loop is busy now: gathered, still delivered
            second = await reader.readexactly(3)
            await asyncio.sleep(0.02)  # a timer while busy
            writer.close()
            b.close()
            return first + second

        assert loop.run_until_complete(echo()) == b"onetwo"
    finally:
        loop.close()
