"""Leader election on a fake in-memory lock and a manual clock.

Behaviours from client-go ``tools/leaderelection/leaderelection.go``: take-over only after the
lease duration of an *unchanged observed* record (local observation time, not the record's
renewTime), renew with RetryPeriod retries bounded by RenewDeadline, a 409 on update is a lost
race, ReleaseOnCancel writes an empty holder with leaseDurationSeconds 1, leaseTransitions++
on take-over; validation from ``NewLeaderElector``.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
import structlog.testing

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.leaderelection import LeaderElectionRecord, LeaderElector
from tests.unit.runtime.fakes import FixedRandom, settle


class Store:
    """The API server side: one record with a version, like a Lease and its resourceVersion."""

    def __init__(self) -> None:
        self.record: LeaderElectionRecord | None = None
        self.version = 0
        self.failing = False
        self.hanging = False
        self.update_gate: asyncio.Event | None = None
        self.lose_update_responses = False  # apply PUTs, then hang as if the answer was lost
        self.writes: list[LeaderElectionRecord] = []


class FakeLock:
    def __init__(self, store: Store, identity: str) -> None:
        self.store = store
        self.identity = identity
        self.seen_version: int | None = None
        self.conflicts = 0

    async def _io(self) -> None:
        if self.store.hanging:
            await asyncio.Event().wait()
        if self.store.failing:
            raise ApiError(503, "ServiceUnavailable", "etcd down")

    async def get(self) -> LeaderElectionRecord:
        await self._io()
        if self.store.record is None:
            raise ApiError(404, "NotFound", "lease not found")
        self.seen_version = self.store.version
        return self.store.record

    async def create(self, record: LeaderElectionRecord) -> None:
        await self._io()
        if self.store.record is not None:
            raise ApiError(409, "AlreadyExists")
        self._write(record)

    async def update(self, record: LeaderElectionRecord) -> None:
        await self._io()
        if self.store.update_gate is not None:
            await self.store.update_gate.wait()
        if self.seen_version != self.store.version:
            self.conflicts += 1
            raise ApiError(409, "Conflict", "the object has been modified")
        seen = self.seen_version
        self._write(record)
        if self.store.lose_update_responses:
            self.seen_version = seen
            await asyncio.Event().wait()

    def _write(self, record: LeaderElectionRecord) -> None:
        self.store.record = record
        self.store.version += 1
        self.seen_version = self.store.version
        self.store.writes.append(record)

    def describe(self) -> str:
        return "fake"


class Candidate:
    """An elector plus its run task and a leader-work coroutine that records its life."""

    def __init__(self, store: Store, clock: ManualClock, identity: str, **kw: object) -> None:
        self.lock = FakeLock(store, identity)
        kw.setdefault("rng", FixedRandom(0.0))
        self.elector = LeaderElector(self.lock, clock=clock, **kw)  # type: ignore[arg-type]
        self.clock = clock
        self.started: float | None = None
        self.work_cancelled = False
        self.task: asyncio.Task[None] | None = None

    async def work(self) -> None:
        self.started = self.clock.now()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.work_cancelled = True
            raise

    def start(self) -> None:
        self.task = asyncio.create_task(self.elector.run(self.work))


async def tick(clock: ManualClock, seconds: float, step: float = 0.5) -> None:
    """Advance in small steps, letting tasks run before and after each."""
    await settle()
    for _ in range(round(seconds / step)):
        clock.advance(step)
        await settle()


@pytest.fixture
def env() -> tuple[Store, ManualClock]:
    return Store(), ManualClock()


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "match"),
    [
        (10, 10, 2, "lease_duration must be greater"),
        (15, 2.4, 2, "renew_deadline must be greater than 1.2"),
        (15, 10, 0, "must be positive"),
    ],
)
def test_configuration_is_validated(lease: float, renew: float, retry: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LeaderElector(FakeLock(Store(), "a"), lease_duration=lease, renew_deadline=renew,
                      retry_period=retry)


async def test_first_candidate_creates_the_lease_and_leads(env: tuple[Store, ManualClock]) -> None:
    store, clock = env
    a = Candidate(store, clock, "a")
    a.start()
    await settle()
    assert a.elector.is_leader()
    assert a.started == 0.0
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_duration_seconds,
            store.record.lease_transitions) == ("a", 15, 0)
    await tick(clock, 4.0)
    assert store.version == 4  # created; renewed at once (wait.Until), at t=2 and at t=4
    assert store.record.acquire_time == store.writes[0].acquire_time  # kept across renewals
    assert a.task is not None
    a.task.cancel()
    await settle()


async def test_takeover_waits_for_lease_duration_of_the_unchanged_observed_record(
    env: tuple[Store, ManualClock],
) -> None:
    """Expiry is judged from when *this* candidate saw the record change; the leader's
    renewTime (here from a wildly skewed wall clock) plays no part."""
    store, clock = env
    skewed = datetime(2001, 1, 1, tzinfo=UTC)  # a's wall clock is 25 years behind

    def wall() -> datetime:
        return skewed + timedelta(seconds=clock.now())

    a = Candidate(store, clock, "a", release_on_cancel=False, wall=wall)
    b = Candidate(store, clock, "b")
    a.start()
    await settle()
    b.start()
    await tick(clock, 5.0)  # a renewed at t=2 and t=4; b observed each change
    assert a.task is not None
    a.task.cancel()  # a dies without releasing: last renewal at t=4
    await settle()
    await tick(clock, 14.0)  # t=19: lease of the record b saw change at t=4 not yet over
    assert not b.elector.is_leader()
    await tick(clock, 1.5)  # b's attempt at t=20 finds it expired
    assert b.elector.is_leader()
    assert b.started == 20.0
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_transitions) == ("b", 1)
    assert b.task is not None
    b.task.cancel()
    await settle()


async def test_renew_failure_past_the_deadline_ends_leadership(
    env: tuple[Store, ManualClock],
) -> None:
    """renew(): retries every RetryPeriod, gives up RenewDeadline after the attempt began;
    the leader's work is cancelled and run() returns."""
    store, clock = env
    a = Candidate(store, clock, "a")
    a.start()
    await tick(clock, 3.0)
    store.failing = True  # renewal due at t=4 fails, retried at 6, 8, 10, 12
    await tick(clock, 10.5)  # t=13.5
    assert a.elector.is_leader()
    await tick(clock, 0.5)  # t=14 = 4 + renew_deadline
    assert not a.elector.is_leader()
    assert a.work_cancelled
    assert a.task is not None
    assert a.task.done()
    assert a.task.exception() is None


async def test_hung_renewal_is_bounded_by_the_renew_deadline(
    env: tuple[Store, ManualClock],
) -> None:
    store, clock = env
    a = Candidate(store, clock, "a")
    a.start()
    await tick(clock, 3.0)
    store.hanging = True
    await tick(clock, 10.5)
    assert a.elector.is_leader()
    await tick(clock, 0.5)
    assert not a.elector.is_leader()
    assert a.work_cancelled


async def test_update_conflict_is_a_lost_race(env: tuple[Store, ManualClock]) -> None:
    """Both candidates read the free lease; the first PUT wins, the second gets 409."""
    store, clock = env
    store.record = LeaderElectionRecord(holder_identity="", lease_duration_seconds=1)
    store.version = 1
    gate = store.update_gate = asyncio.Event()
    a, b = Candidate(store, clock, "a"), Candidate(store, clock, "b")
    a.start()
    b.start()
    await settle()
    store.update_gate = None
    gate.set()
    await settle()
    assert [a.elector.is_leader(), b.elector.is_leader()] == [True, False]
    assert b.lock.conflicts == 1
    for c in (a, b):
        assert c.task is not None
        c.task.cancel()
    await settle()


async def test_release_on_cancel_hands_over_at_once(env: tuple[Store, ManualClock]) -> None:
    store, clock = env
    a, b = Candidate(store, clock, "a"), Candidate(store, clock, "b")
    a.start()
    await settle()
    b.start()
    await tick(clock, 3.0)
    assert a.task is not None
    a.task.cancel()
    await settle()
    assert a.work_cancelled
    released = store.writes[-1]
    assert (released.holder_identity, released.lease_duration_seconds) == ("", 1)
    await tick(clock, 2.0)  # b's next attempt (t=4) takes the empty lease
    assert b.elector.is_leader()
    assert b.started == 4.0
    assert store.record is not None
    assert store.record.lease_transitions == 1
    assert b.task is not None
    b.task.cancel()
    await settle()


async def test_release_after_a_renewal_cut_off_in_flight(env: tuple[Store, ManualClock]) -> None:
    """The cancelled renewal's PUT was applied but its answer lost: release re-reads, still
    holds the lease, and writes the empty holder over the fresh version."""
    store, clock = env
    a = Candidate(store, clock, "a")
    a.start()
    await settle()
    assert a.elector.is_leader()
    store.lose_update_responses = True
    await tick(clock, 2.0)  # the renewal at t=2 is applied, then hangs
    renewed = store.writes[-1]
    assert renewed.holder_identity == "a"
    store.lose_update_responses = False
    assert a.task is not None
    a.task.cancel()
    await settle()
    assert a.lock.conflicts == 1
    assert store.writes[-2] is renewed
    released = store.writes[-1]
    assert (released.holder_identity, released.lease_duration_seconds) == ("", 1)


async def test_release_leaves_a_lease_taken_by_another(env: tuple[Store, ManualClock]) -> None:
    """On a 409 at release the holder is re-read; someone else's lease is left as it is."""
    store, clock = env
    a = Candidate(store, clock, "a")
    a.start()
    await settle()
    store.record = LeaderElectionRecord(holder_identity="b", lease_duration_seconds=15)
    store.version += 1
    writes = len(store.writes)
    assert a.task is not None
    a.task.cancel()
    await settle()
    assert a.lock.conflicts == 1
    assert store.record.holder_identity == "b"
    assert len(store.writes) == writes


async def test_acquire_retries_with_jitter(env: tuple[Store, ManualClock]) -> None:
    """wait.JitterUntil(retryPeriod, 1.2): period + rand * 1.2 * period between attempts."""
    store, clock = env
    a = Candidate(store, clock, "a", release_on_cancel=False)
    a.start()
    await settle()
    b = Candidate(store, clock, "b", rng=FixedRandom(0.5))  # 2 + 0.5 * 1.2 * 2 = 3.2 s
    gets: list[float] = []
    original = b.lock.get

    async def counting_get() -> LeaderElectionRecord:
        gets.append(clock.now())
        return await original()

    b.lock.get = counting_get  # type: ignore[method-assign]
    b.start()
    await settle()
    while clock.now() < 10.0:  # jump from timer to timer, exactly
        due = min(when for when, _, timer in clock._timers if not timer.cancelled)
        clock.advance(due - clock.now())
        await settle()
    assert [round(t, 6) for t in gets] == [0.0, 3.2, 6.4, 9.6]
    for c in (a, b):
        assert c.task is not None
        c.task.cancel()
    await settle()


async def test_leader_work_failure_releases_and_raises(env: tuple[Store, ManualClock]) -> None:
    store, clock = env
    elector = LeaderElector(FakeLock(store, "a"), clock=clock)

    async def work() -> None:
        raise RuntimeError("controller crashed")

    with pytest.raises(RuntimeError, match="controller crashed"):
        await elector.run(work)
    assert store.record is not None
    assert store.record.holder_identity == ""
    assert not elector.is_leader()


async def test_healthy_turns_false_when_renewals_stall(env: tuple[Store, ManualClock]) -> None:
    """HealthzAdaptor: leading and last renewal older than RenewDeadline + tolerance."""
    store, clock = env
    a = Candidate(store, clock, "a", health_tolerance=2.0)
    a.start()
    await tick(clock, 2.0)  # renewed at t=2
    assert a.elector.healthy()
    clock.advance(12.0)  # the loop is stalled: no task runs while time passes
    assert a.elector.healthy()
    clock.advance(0.5)
    assert not a.elector.healthy()
    assert a.task is not None
    a.task.cancel()
    await settle()


class MissingNamespaceLock(FakeLock):
    """The Lease's namespace does not exist: every create is a 404 naming the namespace."""

    async def create(self, record: LeaderElectionRecord) -> None:
        raise ApiError(404, "NotFound", 'namespaces "does-not-exist" not found')


async def test_a_missing_lock_namespace_is_a_warning_a_passing_failure_is_not(
        env: tuple[Store, ManualClock]) -> None:
    store, clock = env
    with structlog.testing.capture_logs() as logs:
        missing = Candidate(store, clock, "a")
        missing.lock = MissingNamespaceLock(store, "a")
        missing.elector = LeaderElector(missing.lock, clock=clock, rng=FixedRandom(0.0))
        missing.start()
        await tick(clock, 3.5)
        store.failing = True
        other = Candidate(store, clock, "b")
        other.start()
        await tick(clock, 0.5)
    assert missing.started is None
    assert other.started is None
    failed = [(e["log_level"], e["event"], e["error"]) for e in logs
              if str(e["event"]).startswith("lease attempt failed")]
    assert ("warning", "lease attempt failed: check --lock-namespace and RBAC",
            '404 NotFound: namespaces "does-not-exist" not found') in failed
    assert all(level == "info" for level, _, error in failed if "etcd down" in error)
    assert any("etcd down" in error for _, _, error in failed)
    for candidate in (missing, other):
        assert candidate.task is not None
        candidate.task.cancel()
    await asyncio.gather(missing.task, other.task, return_exceptions=True)
