"""EventRecorder against a fake client: event shape, truncation, aggregation, queueing.

client-go ``tools/record``: events name ``<obj>.<hex nanos>``, live in the object's namespace
(``default`` when cluster-scoped); the EventCorrelator's logger turns a repeat of an identical
event into a patch of ``count`` and ``lastTimestamp``, falling back to a create when the old
event is gone; the broadcaster drops events when its queue is full instead of blocking.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio

from mpi_controller.kube.resources import EVENTS, Resource
from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.throttle import REQUEST_PRIORITY, URGENT
from tests.unit.runtime.fakes import settle

Obj = dict[str, Any]

JOB = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
       "metadata": {"name": "pi", "namespace": "ns", "uid": "u1", "resourceVersion": "42"}}


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, ...]] = []
        self.errors: list[ApiError] = []

    def _maybe_fail(self) -> None:
        if self.errors:
            raise self.errors.pop(0)

    async def create(self, resource: Resource, body: Obj, *, namespace: str | None = None,
                     result: bool = True) -> Obj:
        assert resource is EVENTS
        self.calls.append(("create", namespace, body))
        self._maybe_fail()
        return body if result else {}  # as RestClient: an unread answer is not decoded

    async def patch(self, resource: Resource, name: str, body: Obj, *,
                    namespace: str | None = None) -> Obj:
        self.calls.append(("patch", namespace, name, body))
        self._maybe_fail()
        return body


class Wall:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest_asyncio.fixture(loop_scope="function")
async def rec() -> AsyncIterator[tuple[EventRecorder, FakeClient, Wall, ManualClock]]:
    client, wall, clock = FakeClient(), Wall(), ManualClock()
    recorder = EventRecorder(client, "mpi-job-controller", clock=clock, wall=wall,  # type: ignore[arg-type]
                             host="node-1")
    task = asyncio.create_task(recorder.run())
    yield recorder, client, wall, clock
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_event_shape(rec: tuple[EventRecorder, FakeClient, Wall, ManualClock]) -> None:
    recorder, client, _, _ = rec
    recorder.event(JOB, "Normal", "MPIJobCreated", "MPIJob ns/pi is created.")
    await recorder.flush()
    (verb, namespace, body), = client.calls
    assert (verb, namespace) == ("create", "ns")
    assert body["metadata"]["namespace"] == "ns"
    assert body["metadata"]["name"].startswith("pi.")
    assert body["involvedObject"] == {"kind": "MPIJob", "apiVersion": "kubeflow.org/v2beta1",
                                      "name": "pi", "namespace": "ns", "uid": "u1",
                                      "resourceVersion": "42"}
    assert {k: body[k] for k in ("type", "reason", "message", "count", "firstTimestamp",
                                 "lastTimestamp", "source", "reportingComponent")} == {
        "type": "Normal", "reason": "MPIJobCreated", "message": "MPIJob ns/pi is created.",
        "count": 1,
        "firstTimestamp": "2026-01-02T03:04:05Z",
        "lastTimestamp": "2026-01-02T03:04:05Z",
        "source": {"component": "mpi-job-controller", "host": "node-1"},
        "reportingComponent": "mpi-job-controller",
    }


async def test_an_event_can_name_another_component(
    rec: tuple[EventRecorder, FakeClient, Wall, ManualClock],
) -> None:
    recorder, client, _, _ = rec
    recorder.event(JOB, "Normal", "MPIJobRunning", "running", component="mpijob-controller")
    recorder.event(JOB, "Normal", "MPIJobRunning", "running")
    await recorder.flush()
    # Events of two sources are two Events (the source is part of the aggregation key).
    assert [(verb, body["source"], body["reportingComponent"])
            for verb, _ns, body in client.calls] == [
        ("create", {"component": "mpijob-controller", "host": "node-1"}, "mpijob-controller"),
        ("create", {"component": "mpi-job-controller", "host": "node-1"}, "mpi-job-controller"),
    ]


async def test_cluster_scoped_objects_get_events_in_default(
    rec: tuple[EventRecorder, FakeClient, Wall, ManualClock],
) -> None:
    recorder, client, _, _ = rec
    recorder.event({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"}},
                   "Warning", "Gone", "x")
    await recorder.flush()
    assert client.calls[0][1] == "default"
    assert "namespace" not in client.calls[0][2]["involvedObject"]


async def test_long_messages_are_truncated(
    rec: tuple[EventRecorder, FakeClient, Wall, ManualClock],
) -> None:
    recorder, client, _, _ = rec
    recorder.event(JOB, "Warning", "Invalid", "x" * 5000)
    await recorder.flush()
    assert client.calls[0][2]["message"] == "x" * 1021 + "..."


async def test_identical_events_are_counted_by_patching(
    rec: tuple[EventRecorder, FakeClient, Wall, ManualClock],
) -> None:
    recorder, client, wall, _ = rec
    recorder.event(JOB, "Warning", "Failed", "boom")
    await recorder.flush()
    name = client.calls[0][2]["metadata"]["name"]
    for _i in range(2):
        wall.now += timedelta(seconds=10)
        recorder.event(JOB, "Warning", "Failed", "boom")
        await recorder.flush()
    assert client.calls[1:] == [
        ("patch", "ns", name, {"count": 2, "lastTimestamp": "2026-01-02T03:04:15Z"}),
        ("patch", "ns", name, {"count": 3, "lastTimestamp": "2026-01-02T03:04:25Z"}),
    ]
    recorder.event(JOB, "Warning", "Failed", "another message")
    await recorder.flush()
    assert client.calls[-1][0] == "create"


async def test_aggregated_event_that_vanished_is_created_again(
    rec: tuple[EventRecorder, FakeClient, Wall, ManualClock],
) -> None:
    recorder, client, _, _ = rec
    recorder.event(JOB, "Normal", "R", "m")
    await recorder.flush()
    client.errors.append(ApiError(404, "NotFound"))
    recorder.event(JOB, "Normal", "R", "m")
    await recorder.flush()
    assert [c[0] for c in client.calls] == ["create", "patch", "create"]
    assert client.calls[-1][2]["count"] == 1


async def test_retriable_errors_are_retried_then_dropped(
    rec: tuple[EventRecorder, FakeClient, Wall, ManualClock],
) -> None:
    recorder, client, _, clock = rec
    client.errors = [ApiError(503, "ServiceUnavailable"), ApiError(0, "ConnectionError")]
    recorder.event(JOB, "Normal", "R", "m")
    await settle()
    clock.advance(1.0)
    await settle()
    clock.advance(2.0)
    await recorder.flush()
    assert [c[0] for c in client.calls] == ["create", "create", "create"]
    client.errors = [ApiError(422, "Invalid")]
    recorder.event(JOB, "Normal", "R2", "m")
    await recorder.flush()
    assert len(client.calls) == 4  # not retried


async def test_invalid_type_is_dropped(
    rec: tuple[EventRecorder, FakeClient, Wall, ManualClock],
) -> None:
    recorder, client, _, _ = rec
    recorder.event(JOB, "Error", "R", "m")
    await recorder.flush()
    assert client.calls == []


def test_full_queue_drops_instead_of_blocking() -> None:
    recorder = EventRecorder(FakeClient(), "c", queue_size=2)  # type: ignore[arg-type]
    for i in range(5):
        recorder.event(JOB, "Normal", "R", str(i))
    assert recorder.dropped == 3


async def test_identical_pending_events_coalesce_before_taking_queue_space() -> None:
    """A repeat of an event still queued raises its count (and lastTimestamp) instead of
    taking a place: five identical warnings and one other event fit a queue of two."""
    client, wall = FakeClient(), Wall()
    recorder = EventRecorder(client, "c", wall=wall, queue_size=2)  # type: ignore[arg-type]
    for _ in range(5):
        recorder.event(JOB, "Warning", "ErrResourceExists", "exists")
        wall.now += timedelta(seconds=1)
    recorder.event(JOB, "Normal", "Other", "m")
    recorder.event(JOB, "Normal", "Third", "m")  # the queue holds two distinct events
    assert (recorder.coalesced, recorder.dropped) == (4, 1)
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(recorder.run())
        await recorder.flush()
        task.cancel()
    assert [(verb, body["reason"], body["count"], body["firstTimestamp"], body["lastTimestamp"])
            for verb, _ns, body in client.calls] == [
        ("create", "ErrResourceExists", 5, "2026-01-02T03:04:05Z", "2026-01-02T03:04:09Z"),
        ("create", "Other", 1, "2026-01-02T03:04:10Z", "2026-01-02T03:04:10Z")]


async def test_a_pending_repeat_of_a_written_event_patches_the_sum(
    rec: tuple[EventRecorder, FakeClient, Wall, ManualClock],
) -> None:
    recorder, client, wall, _ = rec
    recorder.event(JOB, "Warning", "FailedCreatePod", "exists")
    await recorder.flush()
    name = client.calls[0][2]["metadata"]["name"]
    for _ in range(3):  # queued together while the writer waits
        wall.now += timedelta(seconds=1)
        recorder.event(JOB, "Warning", "FailedCreatePod", "exists")
    await recorder.flush()
    assert client.calls[1:] == [
        ("patch", "ns", name, {"count": 4, "lastTimestamp": "2026-01-02T03:04:08Z"})]


async def test_terminal_events_are_kept_when_the_queue_is_full() -> None:
    """A job's end (``keep=True``) is queued past the bound, and written, while ordinary
    events beyond it are dropped."""
    client = FakeClient()
    recorder = EventRecorder(client, "c", queue_size=1)  # type: ignore[arg-type]
    recorder.event(JOB, "Normal", "SuccessfulCreatePod", "a")
    recorder.event(JOB, "Normal", "SuccessfulCreatePod", "b")
    recorder.event(JOB, "Normal", "TFJobSucceeded", "done", keep=True)
    recorder.event(JOB, "Warning", "TFJobFailed", "failed", keep=True)
    assert recorder.dropped == 1
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(recorder.run())
        await recorder.flush()
        task.cancel()
    assert [(body["reason"], body["message"]) for _v, _ns, body in client.calls] == [
        ("SuccessfulCreatePod", "a"), ("TFJobSucceeded", "done"), ("TFJobFailed", "failed")]


class GatedClient(FakeClient):
    """Creates wait until ``gate`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def create(self, resource: Resource, body: Obj, *, namespace: str | None = None,
                     result: bool = True) -> Obj:
        self.calls.append(("create", namespace, body))
        await self.gate.wait()
        return body


async def test_writers_work_at_once_but_never_on_the_same_event() -> None:
    """While the first write of an event waits on the API server, another writer writes a
    different event; a repeat of the first waits for it and is then counted by a patch."""
    client = GatedClient()
    recorder = EventRecorder(client, "c", writers=2)  # type: ignore[arg-type]
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(recorder.run())
        recorder.event(JOB, "Warning", "FailedCreatePod", "exists")
        await settle()
        recorder.event(JOB, "Warning", "FailedCreatePod", "exists")
        recorder.event(JOB, "Normal", "Other", "m")
        await settle()
        assert [(c[0], c[2]["reason"]) for c in client.calls] == [
            ("create", "FailedCreatePod"), ("create", "Other")]
        client.gate.set()
        await recorder.flush()
        task.cancel()
    assert [c[0] for c in client.calls] == ["create", "create", "patch"]
    assert client.calls[2][3]["count"] == 2


async def test_an_event_is_written_with_the_request_priority_it_was_recorded_with() -> None:
    seen: list[tuple[str, int]] = []

    class Client(FakeClient):
        async def create(self, resource: Resource, body: Obj, *,
                         namespace: str | None = None, result: bool = True) -> Obj:
            seen.append((body["reason"], REQUEST_PRIORITY.get()))
            return body

    recorder = EventRecorder(Client(), "c", clock=ManualClock(), wall=Wall())  # type: ignore[arg-type]
    recorder.event(JOB, "Normal", "Outside", "no sync")
    token = REQUEST_PRIORITY.set(7)
    recorder.event(JOB, "Normal", "InSync", "job 7's sync")
    REQUEST_PRIORITY.reset(token)
    task = asyncio.create_task(recorder.run())
    await recorder.flush()
    assert sorted(seen) == [("InSync", 7), ("Outside", URGENT)]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
