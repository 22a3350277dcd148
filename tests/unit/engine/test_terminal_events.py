"""A job's story in Events survives a burst: issue 29's TFJob, created again under the same
name while the garbage collector still held the old job's pods and Services, on the engine and
the in-memory API with the event writer stalled behind a small queue.

Its retries repeat the same warnings (``ErrResourceExists`` for each child): they raise the
count of the Event already queued instead of taking places; the job's ``TFJobSucceeded`` is
recorded even though the queue was full when it came (training-operator's broadcaster, and
client-go's spam filter, lost it)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mpi_controller.engine.writer import ResourceNotControlled
from mpi_controller.kube.resources import EVENTS, PODS, SERVICES
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.tfjobs import replica, tfjob
from tests.unit.mpi.test_kind import finish_launcher, job

STEPS = KindSteps("TFJob", container="tensorflow", framework="tensorflow", job="story")
CHILDREN = ("story-worker-0", "story-worker-1")


def _old_child(name: str) -> dict[str, Any]:
    """A child of the deleted TFJob of the same name (another uid), not yet collected."""
    return {"metadata": {"name": name, "namespace": "ns", "labels": {"app": "old"},
                         "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
                                              "name": "story", "uid": "old-uid",
                                              "controller": True}]},
            "spec": {"containers": [{"name": "tensorflow", "image": "x"}]}}


async def story(queue_size: int) -> tuple[tuple[int, int], list[tuple[str, int]]]:
    """The story with the writer stalled behind a queue of ``queue_size``: (events coalesced,
    dropped) and the ``(reason, count)`` of every Event written once the writer runs."""
    async with STEPS.harness() as h:
        recorder = h.built.recorders[0]
        recorder.queue_size = queue_size
        for task in h._tasks:  # the writer is stalled: everything below waits in the queue
            task.cancel()
        await asyncio.gather(*h._tasks, return_exceptions=True)
        for name in CHILDREN:
            h.api.add(PODS, _old_child(name))
            h.api.add(SERVICES, {**_old_child(name), "spec": {"clusterIP": "None"}})
        h.create(tfjob("story", {"Worker": replica(2, restart="Never")}))
        for _ in range(3):  # three syncs find the old children (and fail, to be retried)
            with pytest.raises(ResourceNotControlled):
                await h.sync("story", "TFJob")
        for name in CHILDREN:  # the garbage collector catches up
            h.api.remove(PODS, name, namespace="ns")
            h.api.remove(SERVICES, name, namespace="ns")
        await h.sync("story", "TFJob")
        for name in CHILDREN:
            STEPS.set_pod(h, name, "Succeeded", code=0)
        await h.sync("story", "TFJob")
        assert STEPS.conditions(h, "story")[-1] == ("Succeeded", "True", "TFJobSucceeded")
        pending = (recorder.coalesced, recorder.dropped)
        h._tasks = [asyncio.create_task(recorder.run())]
        await recorder.flush()
    events = sorted(h.api.objects(EVENTS, "ns"),
                    key=lambda e: int(e["metadata"]["resourceVersion"]))
    return pending, [(e["reason"], e["count"]) for e in events]


async def test_with_room_for_the_whole_story_each_repeated_warning_is_one_event() -> None:
    """Each retry stops at worker 0 (the master role, created first, as upstream stops at its
    first failed create): its two warnings, three times, are two Events of count 3."""
    pending, written = await story(queue_size=100)
    assert written == [("ErrResourceExists", 3), ("FailedCreatePod", 3)] + [
        ("SuccessfulCreatePod", 1)] * 2 + [("SuccessfulCreateService", 1)] * 2 + [
        ("ExitedWithCode", 1)] * 2 + [("TFJobSucceeded", 1)]
    assert pending == (4, 0)


async def test_the_success_event_is_kept_when_the_warnings_fill_the_queue() -> None:
    pending, written = await story(queue_size=2)
    assert written == [("ErrResourceExists", 3), ("FailedCreatePod", 3), ("TFJobSucceeded", 1)]
    assert pending == (4, 6)


async def _only_kept_events(h: EngineHarness, sync: Callable[[], Awaitable[None]],
                            ) -> list[tuple[str, str]]:
    """Run ``sync`` with a queue of no room at all: only the kept events are written."""
    recorder = h.built.recorders[0]
    recorder.queue_size = 0
    await sync()
    await recorder.flush()
    return [(e[0], e[1]) for e in h.events()]


async def test_an_mpijobs_success_is_a_kept_event() -> None:
    async with EngineHarness() as h:
        h.create(job())

        async def life() -> None:
            await h.sync("pi")
            finish_launcher(h)
            await h.sync("pi")

        assert await _only_kept_events(h, life) == [("Normal", "MPIJobSucceeded")]


async def test_a_tfjobs_failure_is_a_kept_event() -> None:
    async with STEPS.harness() as h:
        h.create(tfjob("story", {"Worker": replica(2, restart="Never")}))

        async def life() -> None:
            await h.sync("story", "TFJob")
            STEPS.set_pod(h, "story-worker-1", "Failed", code=1)
            await h.sync("story", "TFJob")

        # Normal, as training-operator records it
        assert await _only_kept_events(h, life) == [("Normal", "TFJobFailed")]
