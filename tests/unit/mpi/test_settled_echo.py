"""The MPIJob ``v2beta1`` reconcile writes its status *settled* (its echo starts no sync) except
when the write finishes the job or the job is suspended, and skipping the echo loses nothing:
through a job's life on the engine harness (children created, workers Running one by one, the
launcher's pod Running then Succeeded, the launcher Job Complete), after every settled write
that was the sync's only write, a sync of what the caches then hold (what the echo would have
started) writes nothing and records no Event."""

from __future__ import annotations

from tests.engine_harness import EngineHarness
from tests.status_spy import Spy, sync_and_check_the_echo
from tests.unit.mpi.test_kind import NS, add_launcher_pod, conditions, finish_launcher, job, set_pod


async def test_a_jobs_writes_are_settled_until_the_one_that_finishes_it() -> None:
    # Counts alone written at once (no hold): every write of the life, each checked.
    async with EngineHarness(status_counts_hold=0.0) as h:
        spy = Spy(h.controller_for("MPIJob"))
        h.create(job(workers=2))
        made = [await sync_and_check_the_echo(h, spy, "pi")]  # children, Created
        set_pod(h, "pi-worker-0", "Running", ready=True)
        made.append(await sync_and_check_the_echo(h, spy, "pi"))  # a worker's count alone
        set_pod(h, "pi-worker-1", "Running", ready=True)
        add_launcher_pod(h, "Running")
        made.append(await sync_and_check_the_echo(h, spy, "pi"))  # Running
        assert conditions(h)[-1] == ("Running", "True", "MPIJobRunning")
        set_pod(h, "pi-launcher-x", "Succeeded")
        made.append(await sync_and_check_the_echo(h, spy, "pi"))  # the launcher's pod ended
        finish_launcher(h)
        made.append(await sync_and_check_the_echo(h, spy, "pi"))  # Succeeded
        assert conditions(h)[-1] == ("Succeeded", "True", "MPIJobSucceeded")
        h.mark()
        await h.sync("pi")  # the echo of the finishing write: the workers go
        assert sorted(h.writes()) == [("delete", "pods", NS, "pi-worker-0"),
                                      ("delete", "pods", NS, "pi-worker-1")]
    assert made == [["settled"], ["settled"], ["settled"], ["settled"], ["not settled"]]
    assert spy.echo_syncs == 3  # the check ran after each write but the first and the last
    assert spy.quiet[-1:] == [False]


async def test_a_suspended_jobs_write_is_not_settled() -> None:
    async with EngineHarness() as h:
        spy = Spy(h.controller_for("MPIJob"))
        h.create(job(runPolicy={"suspend": True}))
        await h.sync("pi")
        assert ("Suspended", "True", "MPIJobSuspended") in conditions(h)
        assert spy.settled == ["not settled"]
        assert spy.quiet == [False]  # the echo enqueues the job
