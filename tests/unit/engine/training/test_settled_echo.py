"""The echo of a settled status write starts no sync (``StatusWriteGuard.quiet_echo``,
``TrainingReconcile.finish``), and skipping it loses nothing.

Every training kind, through a job's life on the engine harness (its pods created, Running,
one failing with a retryable code, then Succeeded one by one): whenever a sync wrote its status
settled, a sync of what the caches then hold, which is what the echo would have started,
writes nothing and records no Event. The echo of a settled write enqueues nothing; the echo of
a suspended job's write does; and a sync turned away while a settled write was on its way
makes the echo enqueue the job after all.
"""

from __future__ import annotations

import pytest

from mpi_controller.engine.plugin import KindPlugin
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.status_spy import Spy, sync_and_check_the_echo
from tests.trainingjobs import default_container, kind_params, small_job


def steps(plugin: KindPlugin) -> KindSteps:
    return KindSteps(plugin.kind, container=default_container(plugin), framework="")


@pytest.mark.parametrize("plugin", kind_params())
async def test_a_settled_write_needs_no_sync_of_its_echo(plugin: KindPlugin) -> None:
    s = steps(plugin)
    async with EngineHarness(schemes=(plugin.kind.lower(),), status_counts_hold=0.0) as h:
        spy = Spy(h.controller_for(plugin.kind))
        job = small_job(plugin, "job", replicas=2)
        for spec in job["spec"][plugin.replica_specs].values():
            spec["restartPolicy"] = "ExitCode"
        h.create(job)
        made = [await sync_and_check_the_echo(h, spy, "job", plugin.kind)]  # Created, pods made
        pods = s.pod_names(h)
        for pod in pods:
            s.set_pod(h, pod, "Running")
        made.append(await sync_and_check_the_echo(h, spy, "job", plugin.kind))  # Running
        s.set_pod(h, pods[-1], "Failed", code=130)  # retryable: the pod is restarted
        made.append(await sync_and_check_the_echo(h, spy, "job", plugin.kind))
        made.append(await sync_and_check_the_echo(h, spy, "job", plugin.kind))  # recreated
        for pod in s.pod_names(h):
            s.set_pod(h, pod, "Running")
        made.append(await sync_and_check_the_echo(h, spy, "job", plugin.kind))
        for pod in s.pod_names(h):
            s.set_pod(h, pod, "Succeeded", code=0)
            made.append(await sync_and_check_the_echo(h, spy, "job", plugin.kind))
        assert s.conditions(h)[-1][:2] == ("Succeeded", "True")
    # every write was settled, the one that finished the job too (its step 2 came right
    # after it)
    assert set(map(tuple, made)) <= {("settled",), ()}
    assert made[:2] == [["settled"], ["settled"]]
    assert spy.echo_syncs >= 2  # the check above ran (e.g. after Running, after a pod ended)


@pytest.mark.parametrize("plugin", kind_params()[:1])
async def test_the_echo_of_a_suspended_jobs_write_starts_its_sync(plugin: KindPlugin) -> None:
    s = steps(plugin)
    async with EngineHarness(schemes=(plugin.kind.lower(),), status_counts_hold=0.0) as h:
        spy = Spy(h.controller_for(plugin.kind))
        await s.started(h, small_job(plugin, "job"))
        s.run_policy(h, "job", suspend=True)
        await h.settle()
        spy.clear()
        await h.sync("job", plugin.kind)
        assert s.conditions(h)[-1][:2] == ("Suspended", "True")
        assert spy.settled == ["not settled"]
        assert spy.quiet == [False]  # the echo enqueues the job


@pytest.mark.parametrize("plugin", kind_params()[:1])
async def test_a_sync_turned_away_meanwhile_makes_the_echo_enqueue(plugin: KindPlugin) -> None:
    s = steps(plugin)
    async with EngineHarness(schemes=(plugin.kind.lower(),), status_counts_hold=0.0) as h:
        controller = h.controller_for(plugin.kind)
        spy = Spy(controller)
        h.create(small_job(plugin, "job"))
        await h.sync("job", plugin.kind)
        for pod in s.pod_names(h):
            s.set_pod(h, pod, "Running")
        await h.settle()
        await h.pause(controller.jobs)  # the echo of the next write waits
        spy.clear()
        await h.sync("job", plugin.kind)
        assert spy.settled == ["settled"]
        h.mark()
        await h.sync("job", plugin.kind)  # turned away: the cache has the replaced version
        assert h.writes() == []
        spy.clear()
        await h.resume(controller.jobs)
        assert spy.quiet == [False]  # the echo enqueues the job
