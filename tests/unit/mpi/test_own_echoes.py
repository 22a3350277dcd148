"""Syncs the engine leaves out for an MPIJob: the echo of its own ConfigMap update (the sync
that wrote it went on with the answer), and the sync due at the end of a status hold whose
change a later sync already wrote. Someone else's edit of the ConfigMap still starts a sync,
which puts the script back."""

from __future__ import annotations

from mpi_controller.kube.resources import CONFIGMAPS
from mpi_controller.mpi.decisions import LAUNCHER_FINISH_HOLD
from tests.engine_harness import EngineHarness
from tests.unit.mpi.test_counts_hold import STATUS_WRITE, status_writes
from tests.unit.mpi.test_kind import NS, all_running, finish_launcher, set_pod, started

KEY = f"{NS}/pi"
CM_UPDATE = ("update", "configmaps", NS, "pi-config")


async def drain(h: EngineHarness) -> list[str]:
    """Take every key the event handlers queued (as workers would, without syncing)."""
    queue = h.controller.controller.queue
    taken = []
    while len(queue):
        key, _ = await queue.get()
        assert key is not None
        queue.done(key)
        taken.append(key)
    return taken


async def test_the_echo_of_our_configmap_update_starts_no_sync() -> None:
    async with EngineHarness() as h:
        await started(h)
        set_pod(h, "pi-worker-0", "Running", ready=True)
        await h.settle()
        assert await drain(h) == [KEY]  # the pod's update
        await h.controller.sync(KEY)  # discover_hosts.sh lists the running worker
        assert CM_UPDATE in h.writes()
        await h.settle()  # the ConfigMap's echo arrives
        assert await drain(h) == []
        script = h.stored(CONFIGMAPS, "pi-config")["data"]["discover_hosts.sh"]  # type: ignore[index]
        assert "pi-worker-0" in script

        # someone else's edit is a version we did not write: the job is synced, and restored
        def edit(cm: dict[str, object]) -> None:
            cm["data"] = {**cm["data"], "discover_hosts.sh": "#!/bin/sh\n"}  # type: ignore[dict-item]
        h.api.modify(CONFIGMAPS, "pi-config", edit, namespace=NS)
        await h.settle()
        assert await drain(h) == [KEY]
        h.mark()
        await h.sync("pi")
        assert h.writes() == [CM_UPDATE]
        assert h.stored(CONFIGMAPS, "pi-config")["data"]["discover_hosts.sh"] == script  # type: ignore[index]


async def held_at_the_launchers_end(h: EngineHarness) -> None:
    """A running job whose launcher pod just ended, synced as a worker would: its counts
    change is held, and the sync's result asks for another in 2 s (the queue's delayed add)."""
    await started(h)
    await all_running(h)
    set_pod(h, "pi-launcher-x", "Succeeded")
    await h.settle()
    await drain(h)
    h.mark()
    await h.controller.controller._sync_once(KEY)
    assert status_writes(h) == []
    assert KEY in h.controller.controller.queue._waiting


async def test_the_sync_due_at_a_holds_end_is_dropped_once_its_change_is_written() -> None:
    async with EngineHarness() as h:
        await held_at_the_launchers_end(h)
        runtime = h.controller.controller
        finish_launcher(h)
        await h.settle()
        await runtime._sync_once(KEY)  # Succeeded written: the hold ended
        assert status_writes(h) == [STATUS_WRITE]
        assert KEY not in runtime.queue._waiting
        await h.settle()
        await drain(h)
        h.clock.advance(LAUNCHER_FINISH_HOLD)
        await h.settle()
        assert await drain(h) == []  # no sync at the window's end


async def test_a_hold_still_open_keeps_its_sync() -> None:
    async with EngineHarness() as h:
        await held_at_the_launchers_end(h)
        h.clock.advance(LAUNCHER_FINISH_HOLD)
        await h.settle()
        assert await drain(h) == [KEY]  # the held change is written by this sync
