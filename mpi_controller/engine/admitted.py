"""Problems of jobs that the Go operators admit and run anyway: told, not refused.

Some inputs pass upstream's schema and webhook although they cannot do what their author
meant (a TFJob replica type ``Boss``, a PyTorchJob ``elasticPolicy`` with ``minReplicas``
above ``maxReplicas``, an MPIJob with ``slotsPerWorker: 0``, ``replicas: -3`` in an XGBoostJob,
PaddleJob or JAXJob). The controller keeps making the objects the Go operator would make for
them; a kind's pure ``admitted``
check names each such problem as a :class:`~mpi_controller.kube.fielderrors.FieldError`, and
the engine records one Warning Event per problem:

* reason ``ValidationError`` (the MPIJob kind's reason for validation problems; a refused
  training-operator job's reason, ``<Kind>FailedValidation``, says the job is not run, which
  is not the case here);
* message ``<field error> (<note>)``, ``note`` saying the job runs as the Go operator runs it;
* once per job (its UID) and message while the controller runs (:class:`ReportedOnce`): a
  resync or a status change does not record it again, a change of the spec that brings a new
  problem does. After a restart each problem is recorded once more.

Pure but for :class:`ReportedOnce`'s memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.fielderrors import FieldError

__all__ = ["ADMITTED_REASON", "ReportedOnce", "admitted_events"]

ADMITTED_REASON = "ValidationError"


def admitted_events(errors: Iterable[FieldError], *, runs_as: str) -> list[Event]:
    """One Warning Event per problem of an admitted job (module doc); ``runs_as`` names the Go
    operator whose objects the job still gets (``training-operator``, ``mpi-operator``)."""
    note = f"admitted: the job runs as {runs_as} runs it"
    return [Event(WARNING, ADMITTED_REASON, f"{error} ({note})") for error in errors]


class ReportedOnce:
    """Which Events were recorded for which job, so each is recorded once (module doc)."""

    def __init__(self) -> None:
        self._seen: dict[str, set[tuple[str, str, str]]] = {}

    def first(self, key: str, job: Mapping[str, Any], events: Sequence[Event]) -> list[Event]:
        """The ``events`` of job ``key`` not recorded before for this job's UID; they are
        remembered as recorded."""
        uid = str((job.get("metadata") or {}).get("uid", ""))
        seen = self._seen.setdefault(key, set())
        fresh = []
        for event in events:
            entry = (uid, event.reason, event.message)
            if entry not in seen:
                seen.add(entry)
                fresh.append(event)
        if not seen:
            del self._seen[key]
        return fresh

    def forget(self, key: str) -> None:
        """Job ``key`` was deleted."""
        self._seen.pop(key, None)
