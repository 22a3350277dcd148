"""What the kinds' status rules share (training-operator v1.9's ``UpdateJobStatus`` of each
controller), run after the replicas were reconciled and counted, on the status dict (changed
in place). Messages name the kind and the job as upstream writes them; ``<Kind>`` is the kind
(``PyTorchJob``), ``<name>`` the job's name, ``<ns>`` its namespace.

:class:`StatusRules` is one run of a kind's rules over a job's typed view:

* :meth:`~StatusRules.counts`: a replica type's ``succeeded``, ``active`` and ``failed`` in
  ``replicaStatuses`` (0 when missing or not a number);
* :meth:`~StatusRules.condition`: a ``True`` condition of reason ``<Kind><what>``;
  :meth:`~StatusRules.finish`: ``Succeeded`` or ``Failed``, with a Normal ``<Kind><what>``
  event and ``completionTime`` (unless set);
* :meth:`~StatusRules.set_selectors`: every replica type's ``replicaStatuses[<type>].selector``,
  the job's labels and the type as a label selector string (``metav1.FormatLabelSelector``),
  which a scale subresource publishes (PyTorchJob, PaddleJob, JAXJob);
* :meth:`~StatusRules.master_decides`: the Master's rule: active pods → ``Running``
  (``<Kind> <name> is running.``); none expected (``replicas - succeeded``) → ``Succeeded``
  (``<Kind> <name> is successfully completed.``; XGBoostJob sets ``Running`` again first),
  after which the rules stop;
* :meth:`~StatusRules.workers_decide`: the Worker's rule in a job without a Master: none
  expected (or, for an elastic PyTorchJob, any succeeded) → ``Succeeded`` (``<Kind>
  <ns>/<name> successfully completed.``); else active pods → ``Running`` (``<Kind> <ns>/<name>
  is running.``);
* :meth:`~StatusRules.restart_or_fail`: a type's failed replicas make the job ``Restarting``
  (``<Kind> <name> is restarting because <n> <type> replica(s) failed.``, a Warning
  ``<Kind>Restarting`` event for a failure not yet acted on: a Failed pod of the type that is
  not being deleted, so it is recorded once per failure and not on every sync until the pod
  is gone) or ``Failed`` (``<Kind> <name> is failed because <n> <type> replica(s) failed.``);
* :meth:`~StatusRules.replica_failures`: PyTorchJob's, PaddleJob's and JAXJob's rule for a
  type with failed pods and fewer succeeded and active ones than replicas: restarting unless
  its restart policy is ``Never``.

:func:`master_or_workers` is those three kinds' whole rule set: in the kind's order of
replica types, the Master decides when there is one, else the Worker; every type's failures
count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import (
    CONDITION_FAILED,
    CONDITION_RESTARTING,
    CONDITION_RUNNING,
    CONDITION_SUCCEEDED,
    RESTART_NEVER,
    ReplicaSpec,
    TrainingJob,
)
from mpi_controller.engine.training.conditions import reason, set_condition
from mpi_controller.engine.training.replicas import by_type, replica_selector
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_record
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.timefmt import format_time

__all__ = ["ReplicaCounts", "StatusRules", "master_or_workers"]



@dataclass(frozen=True)
class ReplicaCounts:
    """A replica type's pods as counted in ``replicaStatuses``."""

    succeeded: int = 0
    active: int = 0
    failed: int = 0


def _count(replica: Mapping[str, Any], key: str) -> int:
    value = replica.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class StatusRules:
    """One run of ``kind``'s status rules for ``job`` (module doc): ``status`` is changed in
    place, :attr:`events` collects the Events to record; ``pods`` are the job's pods as cached
    when the sync began."""

    def __init__(self, kind: str, job: TrainingJob, status: Obj, *, pods: list[Obj],
                 now: datetime) -> None:
        self.kind = kind
        self.job = job
        self.status = status
        self.pods = pods
        self.now = now
        self.events: list[Event] = []

    def counts(self, rtype: str) -> ReplicaCounts:
        replica = as_dict(as_record(self.status.get("replicaStatuses")).get(rtype))
        return ReplicaCounts(succeeded=_count(replica, "succeeded"),
                             active=_count(replica, "active"), failed=_count(replica, "failed"))

    def condition(self, condition_type: str, what: str, message: str) -> None:
        set_condition(self.status, condition_type, "True", reason(self.kind, what), message,
                      now=self.now)

    def finish(self, condition_type: str, what: str, message: str) -> None:
        self.events.append(Event(NORMAL, reason(self.kind, what), message, terminal=True))
        self.status.setdefault("completionTime", format_time(self.now))
        self.condition(condition_type, what, message)

    def set_selectors(self, controller_name: str) -> None:
        replicas: dict[str, Any] = as_dict(self.status.get("replicaStatuses"))
        self.status["replicaStatuses"] = replicas
        for rtype in self.job.replica_specs:
            entry = replicas.get(rtype)
            if not isinstance(entry, dict):
                entry = replicas[rtype] = {}
            entry["selector"] = replica_selector(self.job.name, controller_name, rtype)

    def master_decides(self, spec: ReplicaSpec, counts: ReplicaCounts, *,
                       running_when_done: bool = False) -> bool:
        """The Master's rule; True when the job succeeded (the rules stop)."""
        running = f"{self.kind} {self.job.name} is running."
        if counts.active > 0:
            self.condition(CONDITION_RUNNING, "Running", running)
        if spec.replicas - counts.succeeded != 0:
            return False
        if running_when_done:
            self.condition(CONDITION_RUNNING, "Running", running)
        self.finish(CONDITION_SUCCEEDED, "Succeeded",
                    f"{self.kind} {self.job.name} is successfully completed.")
        return True

    def workers_decide(self, spec: ReplicaSpec, counts: ReplicaCounts, *,
                       done: bool = False) -> None:
        """The Worker's rule without a Master; ``done``: succeeded even with workers expected."""
        ref = f"{self.job.namespace}/{self.job.name}"
        if spec.replicas - counts.succeeded == 0 or done:
            self.finish(CONDITION_SUCCEEDED, "Succeeded", f"{self.kind} {ref} successfully "
                                                          "completed.")
        elif counts.active > 0:
            self.condition(CONDITION_RUNNING, "Running", f"{self.kind} {ref} is running.")

    def restart_or_fail(self, rtype: str, failed: int, *, restart: bool) -> None:
        name = self.job.name
        if restart:
            message = (f"{self.kind} {name} is restarting because {failed} {rtype} "
                       "replica(s) failed.")
            if self._new_failure(rtype):
                self.events.append(Event(WARNING, reason(self.kind, "Restarting"), message))
            self.condition(CONDITION_RESTARTING, "Restarting", message)
        else:
            self.finish(CONDITION_FAILED, "Failed", f"{self.kind} {name} is failed because "
                                                    f"{failed} {rtype} replica(s) failed.")

    def replica_failures(self, spec: ReplicaSpec, counts: ReplicaCounts) -> None:
        if counts.failed <= 0 or spec.replicas <= counts.succeeded + counts.active:
            return
        self.restart_or_fail(spec.rtype, counts.failed,
                             restart=spec.restart_policy != RESTART_NEVER)

    def _new_failure(self, rtype: str) -> bool:
        return any(pod_phase(p) == "Failed" and not as_record(p.get("metadata")).get(
            "deletionTimestamp") for p in by_type(self.pods, rtype))


def master_or_workers(rules: StatusRules, order: Iterable[str], *, master_type: str | None,
                      worker_type: str, any_worker_done: bool = False) -> list[Event]:
    """PyTorchJob's, PaddleJob's and JAXJob's rules (module doc) over the replica types of
    ``order`` (each one of the job's): ``master_type`` decides when the job has it (``None``:
    the kind has none), else ``worker_type``; ``any_worker_done``: one succeeded worker
    succeeds the job (an elastic PyTorchJob). The Events to record."""
    specs = rules.job.replica_specs
    has_master = master_type is not None and master_type in specs
    for rtype in order:
        spec = specs[rtype]
        counts = rules.counts(rtype)
        if has_master and rtype == master_type:
            if rules.master_decides(spec, counts):
                return rules.events
        elif not has_master and rtype == worker_type:
            rules.workers_decide(spec, counts, done=any_worker_done and counts.succeeded > 0)
        rules.replica_failures(spec, counts)
    return rules.events
