"""engine/batch.py: the pod updates held for the batch window, one timer per job key."""

from __future__ import annotations

from mpi_controller.engine.batch import HeldSyncs
from mpi_controller.runtime.clock import ManualClock


def _held() -> tuple[ManualClock, HeldSyncs, list[str]]:
    clock = ManualClock()
    fired: list[str] = []
    return clock, HeldSyncs(clock, fired.append), fired


def test_a_held_key_fires_once_at_its_earliest_deadline() -> None:
    clock, held, fired = _held()
    held.hold("ns/a", 1.0)
    clock.advance(0.5)
    held.hold("ns/a", 1.0)  # later than the held one: kept as it was
    held.hold("ns/b", 0.25)
    assert ("ns/a" in held, len(held)) == (True, 2)
    clock.advance(0.3)
    assert fired == ["ns/b"]
    clock.advance(0.2)
    assert fired == ["ns/b", "ns/a"]
    assert len(held) == 0
    clock.advance(5)
    assert fired == ["ns/b", "ns/a"]


def test_an_earlier_deadline_replaces_the_held_one() -> None:
    clock, held, fired = _held()
    held.hold("ns/a", 1.0)
    held.hold("ns/a", 0.1)
    clock.advance(0.2)
    assert fired == ["ns/a"]
    clock.advance(1.0)
    assert fired == ["ns/a"]


def test_a_released_key_never_fires_and_can_be_held_again() -> None:
    clock, held, fired = _held()
    held.hold("ns/a", 1.0)
    held.release("ns/a")
    held.release("ns/never-held")
    clock.advance(2.0)
    assert fired == []
    held.hold("ns/a", 1.0)
    clock.advance(1.0)
    assert fired == ["ns/a"]
