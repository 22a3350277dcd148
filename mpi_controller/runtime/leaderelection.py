"""Leader election over a ``coordination.k8s.io/v1`` Lease (client-go ``tools/leaderelection``).

Contract:

* Configuration must satisfy ``lease_duration > renew_deadline > 1.2 * retry_period > 0``
  (defaults 15 s / 10 s / 2 s).
* **Acquire**: try every ``retry_period`` plus up to 120 % jitter. The lease is free when it
  does not exist (create it), has an empty holder, or its holder has not changed the record
  for ``leaseDurationSeconds`` **as observed on the local monotonic clock** (the time at which
  this process last saw the record change, never the record's own timestamps, so clock skew
  between hosts does not matter). Taking over from another holder increments
  ``leaseTransitions``.
* **Writes** are PUTs of the last object read (its ``resourceVersion`` guards them): a 409
  means another candidate won the race, and the attempt simply fails.
* **Renew**: every ``retry_period`` the leader renews; each renewal may retry every
  ``retry_period`` but must succeed within ``renew_deadline``, else leadership is lost.
* :meth:`LeaderElector.run` acquires, then runs ``on_started_leading()`` while renewing. It
  returns when leadership is lost (after cancelling and awaiting the leader's work), raises
  what the work raised, or re-raises ``CancelledError`` when cancelled. If the work returns
  normally, the lease is still held until loss or cancellation (as in client-go). On the way
  out, with ``release_on_cancel``, a lease still held is released (holder ``""``,
  ``leaseDurationSeconds`` 1) so a successor need not wait; a 409 on release (a renewal cut
  off in flight was applied) is answered by re-reading and writing again while still held.
* :meth:`is_leader` is True while the leader's work runs; :meth:`healthy` is False when leading
  but the last successful renewal is older than ``renew_deadline + health_tolerance``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import structlog

from mpi_controller.kube.resources import LEASES
from mpi_controller.kube.timefmt import format_micro_time, utcnow
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.deadline import Deadline, DeadlineExceeded
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.kubeclient import KubeClient

__all__ = [
    "JITTER_FACTOR",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "Lock",
]

log = structlog.get_logger(__name__)

JITTER_FACTOR = 1.2
Wall = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """The lock's content (a Lease ``spec``)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: int = 0

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> LeaderElectionRecord:
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        return {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.lease_transitions,
        }


class Lock(Protocol):
    """A resource lock: read, create, and guarded update of one record."""

    identity: str

    async def get(self) -> LeaderElectionRecord:
        """The current record; raises a 404 :class:`ApiError` when there is none."""
        ...

    async def create(self, record: LeaderElectionRecord) -> None: ...

    async def update(self, record: LeaderElectionRecord) -> None:
        """Write over the last record read or written; 409 :class:`ApiError` if it changed."""
        ...

    def describe(self) -> str: ...


class LeaseLock:
    """:class:`Lock` over ``coordination.k8s.io/v1`` Lease ``namespace/name``."""

    def __init__(self, client: KubeClient, namespace: str, name: str, identity: str) -> None:
        if not identity:
            raise ValueError("leader election identity must not be empty")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self._lease: dict[str, Any] | None = None

    async def get(self) -> LeaderElectionRecord:
        self._lease = await self.client.get(LEASES, self.name, namespace=self.namespace)
        return LeaderElectionRecord.from_spec(self._lease.get("spec") or {})

    async def create(self, record: LeaderElectionRecord) -> None:
        body = {
            "apiVersion": LEASES.api_version,
            "kind": LEASES.kind,
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }
        self._lease = await self.client.create(LEASES, body, namespace=self.namespace)

    async def update(self, record: LeaderElectionRecord) -> None:
        if self._lease is None:
            raise RuntimeError("lease not initialized: call get or create first")
        body = copy.copy(self._lease)
        body["spec"] = record.to_spec()
        self._lease = await self.client.update(LEASES, body, namespace=self.namespace)

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"


class LeaderElector:
    """client-go's leader election algorithm on an injected monotonic clock."""

    def __init__(
        self,
        lock: Lock,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        wall: Wall = utcnow,
        health_tolerance: float = 2.0,
        on_new_leader: Callable[[str], object] | None = None,
    ) -> None:
        _validate(lease_duration, renew_deadline, retry_period)
        self.lock = lock
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self.health_tolerance = health_tolerance
        self.on_new_leader = on_new_leader
        self._clock: Clock = clock or LoopClock()
        self._rng = rng or random.Random()
        self._wall = wall
        self._observed = LeaderElectionRecord()
        self._observed_time = 0.0
        self._reported_leader = ""
        self._leading = False
        self._log = log.bind(lock=lock.describe(), identity=lock.identity)

    # -- public -----------------------------------------------------------------------------

    def is_leader(self) -> bool:
        """True while this process leads (its leader work is running)."""
        return self._leading

    def healthy(self) -> bool:
        """False when leading but the last renewal is older than the deadline + tolerance."""
        if not self._leading:
            return True
        age = self._clock.now() - self._observed_time
        return age <= self.renew_deadline + self.health_tolerance

    def get_leader(self) -> str:
        """The holder last observed (may be stale, may be ``""``)."""
        return self._observed.holder_identity

    async def run(self, on_started_leading: Callable[[], Awaitable[None]]) -> None:
        """Acquire, lead while renewing, and return once leadership ends (see module doc)."""
        await self._acquire()
        self._leading = True
        work = asyncio.create_task(_call(on_started_leading), name="leader work")
        renew = asyncio.create_task(self._renew_until_lost(), name="lease renewal")
        try:
            await asyncio.wait({work, renew}, return_when=asyncio.FIRST_COMPLETED)
            if not renew.done() and not work.cancelled() and work.exception() is None:
                await renew  # the work finished normally: keep the lease until lost
        finally:
            self._leading = False
            await _cancel_and_wait(work, renew)
            if self.release_on_cancel:
                await self._release()
        error = None if work.cancelled() else work.exception()
        if error is not None:
            raise error

    # -- acquire and renew ------------------------------------------------------------------

    async def _acquire(self) -> None:
        self._log.info("attempting to acquire leader lease")
        while True:
            if await self._attempt(self.renew_deadline):
                self._log.info("successfully acquired lease")
                return
            jitter = self._rng.random() * JITTER_FACTOR * self.retry_period
            await self._clock.sleep(self.retry_period + jitter)

    async def _renew_until_lost(self) -> None:
        while await self._renew_within_deadline():
            await self._clock.sleep(self.retry_period)
        self._log.warning("failed to renew lease: leadership lost", deadline=self.renew_deadline)

    async def _renew_within_deadline(self) -> bool:
        deadline = self._clock.now() + self.renew_deadline
        while (remaining := deadline - self._clock.now()) > 0:
            if await self._attempt(remaining):
                return True
            await self._clock.sleep(min(self.retry_period, deadline - self._clock.now()))
        return False

    async def _attempt(self, budget: float) -> bool:
        """One ``tryAcquireOrRenew`` bounded by ``budget`` seconds; failures are False."""
        try:
            async with Deadline(self._clock, budget):
                return await self._try_acquire_or_renew()
        except ApiError as exc:
            if exc.is_not_found() or exc.is_forbidden():
                # Not a passing failure: the lock's namespace is missing or the Lease is not
                # allowed (client-go logs every failed attempt as an error).
                self._log.warning("lease attempt failed: check --lock-namespace and RBAC",
                                  error=str(exc))
            else:
                self._log.info("lease attempt failed", error=str(exc))
        except DeadlineExceeded as exc:
            self._log.info("lease attempt failed", error=str(exc))
        except Exception:  # a broken lock must not end the loop
            self._log.exception("lease attempt crashed")
        finally:
            self._report_transition()
        return False

    async def _try_acquire_or_renew(self) -> bool:
        now_text = format_micro_time(self._wall())
        desired = LeaderElectionRecord(
            holder_identity=self.lock.identity,
            lease_duration_seconds=int(self.lease_duration),
            acquire_time=now_text,
            renew_time=now_text,
        )
        if self._holds_lease() and self._lease_valid():  # fast path: renew what we wrote
            kept = self._keep_acquisition(desired, self._observed)
            try:
                await self.lock.update(kept)
                self._observe(kept)
                return True
            except ApiError as exc:
                self._log.info("optimistic renew failed; re-reading", error=str(exc))
        return await self._slow_path(desired)

    async def _slow_path(self, desired: LeaderElectionRecord) -> bool:
        try:
            current = await self.lock.get()
        except ApiError as exc:
            if not exc.is_not_found():
                raise
            await self.lock.create(desired)
            self._observe(desired)
            return True
        if current != self._observed:
            self._observe(current)
        if current.holder_identity and self._lease_valid() and not self._holds_lease():
            return False  # held by someone else and not expired
        if self._holds_lease():
            record = self._keep_acquisition(desired, current)
        else:
            record = dataclasses.replace(desired, lease_transitions=current.lease_transitions + 1)
        await self.lock.update(record)
        self._observe(record)
        return True

    async def _release(self) -> None:
        if not self._holds_lease():
            return
        now_text = format_micro_time(self._wall())
        record = LeaderElectionRecord(
            lease_duration_seconds=1, acquire_time=now_text, renew_time=now_text,
            lease_transitions=self._observed.lease_transitions,
        )
        try:
            async with Deadline(self._clock, self.renew_deadline):
                released = await self._update_if_still_held(record)
        except (ApiError, DeadlineExceeded) as exc:
            self._log.warning("failed to release lease", error=str(exc))
            return
        if released:
            self._observe(record)
            self._log.info("released leader lease")

    async def _update_if_still_held(self, record: LeaderElectionRecord) -> bool:
        """Write ``record`` over a lease this process holds; False if another holds it now.

        A renewal cancelled while its PUT was in flight may have been applied without this
        process seeing the new resourceVersion, so a 409 is answered by re-reading: if the
        holder is still this identity, nobody else can have written since, and the write is
        repeated over the fresh object.
        """
        try:
            await self.lock.update(record)
            return True
        except ApiError as exc:
            if not exc.is_conflict():
                raise
        current = await self.lock.get()
        if current.holder_identity != self.lock.identity:
            self._observe(current)
            return False
        await self.lock.update(record)
        return True

    # -- observed state -----------------------------------------------------------------------

    def _observe(self, record: LeaderElectionRecord) -> None:
        self._observed = record
        self._observed_time = self._clock.now()

    def _holds_lease(self) -> bool:
        return self._observed.holder_identity == self.lock.identity

    def _lease_valid(self) -> bool:
        expiry = self._observed_time + self._observed.lease_duration_seconds
        return expiry > self._clock.now()

    @staticmethod
    def _keep_acquisition(
        desired: LeaderElectionRecord, old: LeaderElectionRecord
    ) -> LeaderElectionRecord:
        return dataclasses.replace(
            desired, acquire_time=old.acquire_time, lease_transitions=old.lease_transitions
        )

    def _report_transition(self) -> None:
        holder = self._observed.holder_identity
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        self._log.info("new leader observed", leader=holder or "<none>")
        if self.on_new_leader is not None and holder:
            self.on_new_leader(holder)


def _validate(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    if min(lease_duration, renew_deadline, retry_period) <= 0:
        raise ValueError("lease_duration, renew_deadline and retry_period must be positive")
    if lease_duration <= renew_deadline:
        raise ValueError("lease_duration must be greater than renew_deadline")
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError(f"renew_deadline must be greater than {JITTER_FACTOR} * retry_period")


async def _call(fn: Callable[[], Awaitable[None]]) -> None:
    await fn()


async def _cancel_and_wait(*tasks: asyncio.Task[None]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
