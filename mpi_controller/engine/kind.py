"""What a job kind gives the engine (the training operators' "controller interface").

A kind (MPIJob, TFJob, PyTorchJob, ...) is a small plug-in: its resource, the informers
of the child objects it owns, how to default, skip and validate a job, and one ``sync`` that
turns a defaulted, valid job into child writes and a status through a
:class:`~mpi_controller.engine.context.SyncContext`.
The engine (:class:`~mpi_controller.engine.controller.JobController`) owns everything around
it: the job informer and work queue, the event handlers that map children to their job,
expectations, the deleted-owner guard, the status-write guard, conflicts and requeues.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mpi_controller.engine.context import SyncContext
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.informer import SharedIndexInformer

__all__ = ["JobKind", "KindInformers", "distinct"]



@dataclass(frozen=True)
class KindInformers:
    """The informers a kind reads, by role.

    * ``jobs``: the kind's own objects;
    * ``children``: objects the job controls (their add/update/delete enqueue the job; deletes
      are counted by the expectations); the shared pod informer is one of them;
    * ``intermediates``: children that own other children (a launcher batch Job owns its
      pods): a pod controlled by one of them belongs to that object's controlling job;
    * ``others``: read only (PriorityClasses), no handlers.
    """

    jobs: SharedIndexInformer
    children: Sequence[SharedIndexInformer]
    intermediates: Sequence[SharedIndexInformer] = ()
    others: Sequence[SharedIndexInformer] = field(default_factory=tuple)

    def all(self) -> list[SharedIndexInformer]:
        """Every informer, each once, jobs first."""
        return distinct([self.jobs, *self.children, *self.intermediates, *self.others])

    def merge(self, *more: KindInformers) -> KindInformers:
        """These informers and ``more``'s by role, each once, in order (the jobs informer is
        this one's: the parts read the same jobs)."""
        parts = (self, *more)
        return KindInformers(
            jobs=self.jobs, children=distinct([i for p in parts for i in p.children]),
            intermediates=distinct([i for p in parts for i in p.intermediates]),
            others=distinct([i for p in parts for i in p.others]))


def distinct(informers: Iterable[SharedIndexInformer]) -> list[SharedIndexInformer]:
    """``informers`` without repeats (the same object twice), in order."""
    out: list[SharedIndexInformer] = []
    for informer in informers:
        if all(informer is not seen for seen in out):
            out.append(informer)
    return out


class JobKind(Protocol):
    """A job kind on the engine (see the module doc)."""

    resource: Resource
    """The job resource the controller reads and writes (its stored version)."""

    def informers(self) -> KindInformers: ...

    def prepare(self, cached: Mapping[str, Any]) -> Obj:
        """A defaulted deep copy of the cached job (the cached object is never changed)."""

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        """Another controller reconciles this job (``runPolicy.managedBy``): leave it alone."""

    def event_component(self, job: Mapping[str, Any]) -> str:
        """The component the job's Events name as their source (``""``: the kind's own)."""

    def validate(self, job: Mapping[str, Any]) -> Event | None:
        """The Warning event for an invalid job, or ``None`` when it is valid."""

    def admitted_problems(self, job: Mapping[str, Any]) -> Sequence[Event]:
        """Warning Events for problems of a valid job that the Go operator admits and runs
        anyway (:mod:`mpi_controller.engine.admitted`); the job is still synced."""

    def child_update_matters(self, job: Mapping[str, Any], child_kind: str,
                             old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        """Whether the update ``old`` -> ``new`` of a child of ``job`` (of ``child_kind``, not
        a pod: the engine compares pods slim) may change what a sync of ``job`` does; False
        starts no sync."""

    async def sync(self, ctx: SyncContext) -> None:
        """Reconcile one job; errors are retried with backoff by the engine."""

    def forget(self, key: str) -> None:
        """The job ``key`` is gone: drop what the kind remembers of it (metric series...)."""
