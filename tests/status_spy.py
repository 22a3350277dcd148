"""A spy on the engine's status-write guard, for the tests of settled writes and their
echoes (``StatusWriteGuard.quiet_echo``)."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.context import StatusWriteGuard
from mpi_controller.engine.controller import JobController
from tests.engine_harness import EngineHarness


class Spy:
    """Records the engine's status writes (settled or not) and, for each job update event,
    whether the guard found it a quiet echo (which the job handler does not enqueue)."""

    def __init__(self, controller: JobController) -> None:
        self.settled: list[str] = []
        self.quiet: list[bool] = []
        self.echo_syncs = 0  # syncs run in place of a quiet echo's, and found to write nothing
        guard: StatusWriteGuard = controller._guard
        settling, written, quiet_echo = guard.settling, guard.written, guard.quiet_echo
        announced: list[str] = []

        def spy_settling(key: str, replaced: str, status: Any) -> None:
            announced.append(replaced)
            settling(key, replaced, status)

        def spy_written(key: str, replaced: str) -> None:
            self.settled.append("settled" if replaced in announced else "not settled")
            written(key, replaced)

        def spy_quiet_echo(key: str, old: Any, new: Any) -> bool:
            self.quiet.append(quiet_echo(key, old, new))
            return self.quiet[-1]

        guard.settling = spy_settling  # type: ignore[method-assign]
        guard.written = spy_written  # type: ignore[method-assign]
        guard.quiet_echo = spy_quiet_echo  # type: ignore[method-assign]

    def clear(self) -> None:
        self.settled.clear()
        self.quiet.clear()


async def sync_and_check_the_echo(h: EngineHarness, spy: Spy, name: str,
                                  kind: str | None = None) -> list[str]:
    """One sync; each of its status writes' echo is quiet when the write was settled; when
    it only updated objects (the status, say a ConfigMap), a sync of what the caches hold now
    (what the echo would have started) writes nothing. The kinds of status writes it made.
    (A sync that also created or deleted a child is followed by the sync the cache's seeing
    it starts.)"""
    spy.clear()
    h.mark()
    await h.sync(name, kind)
    made = list(spy.settled)
    assert spy.quiet == [made == ["settled"]] * len(made)
    if made == ["settled"] and all(w[0] == "update" for w in h.writes()):
        h.mark()
        events = len(h.events())
        await h.sync(name, kind)
        assert h.writes() == []
        assert len(h.events()) == events
        spy.echo_syncs += 1
    return made
