"""A TrainJob's status (Trainer v2.3.0 ``pkg/controller/trainjob_controller.go`` and the JobSet
plugin's ``Status``): conditions of type ``Suspended``, ``Complete`` and ``Failed`` with
``metav1.Condition`` semantics, and ``jobsStatus`` from the JobSet.

* :func:`set_condition` is ``meta.SetStatusCondition``: a new condition gets the given
  ``lastTransitionTime`` (else now); an existing one keeps its time unless its status changes;
  reason, message and observedGeneration are always replaced.
* :func:`remove_failed` drops ``Failed`` at the start of a sync, unless it is
  ``DeadlineExceeded`` (which stays for good).
* :func:`set_suspended`: ``Suspended`` True (reason ``Suspended``) while ``spec.suspend``;
  once resumed, ``Suspended`` False (reason ``Resumed``); nothing for a job never suspended.
* :func:`from_jobset`: the JobSet's ``Completed`` and ``Failed`` conditions, when True, become
  the TrainJob's ``Complete`` and ``Failed`` (the JobSet's reason, message and time); each
  replicated Job's counts become ``jobsStatus`` (dropped when the JobSet has none).
* :func:`jobset_changes_expected`: the JobSet's status is about to change again (its counts
  are in between): it is neither finished nor suspended, it has counts, and one of its
  replicated Jobs is not at rest: at rest, every one of its ``replicas`` (default 1) is
  counted both ``active`` and ``ready`` (running), or every one ``succeeded`` (an initializer
  done). Between creation and the pods all ready, and between the pods ending and the
  JobSet's ``Completed`` or ``Failed`` (or its restart), the JobSet controller writes its
  counts one step at a time; the kind holds a counts-only write meanwhile
  (:mod:`mpi_controller.engine.hold`), and writes at once when the JobSet is at rest.
* :func:`deadline`: with ``activeDeadlineSeconds``, not finished and not suspended, the
  deadline counts from the creation or from the last resume; past it, ``Failed`` with
  ``DeadlineExceeded``.

Pure: conditions are plain dicts; ``now`` is an RFC 3339 string given by the caller.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from mpi_controller.kube.timefmt import parse_time
from mpi_controller.trainjob import constants

__all__ = ["deadline", "find", "from_jobset", "is_finished", "jobset_changes_expected",
           "remove_failed", "set_condition", "set_failed", "set_suspended"]

Obj = dict[str, Any]


def find(conditions: list[Obj], kind: str) -> Obj | None:
    return next((c for c in conditions if c.get("type") == kind), None)


def set_condition(conditions: list[Obj], new: Mapping[str, Any], now: str) -> None:
    existing = find(conditions, new["type"])
    if existing is None:
        added = dict(new)
        added["lastTransitionTime"] = new.get("lastTransitionTime") or now
        conditions.append(added)
        return
    if existing.get("status") != new.get("status"):
        existing["status"] = new["status"]
        existing["lastTransitionTime"] = new.get("lastTransitionTime") or now
    existing["reason"] = new.get("reason", "")
    existing["message"] = new.get("message", "")
    if new.get("observedGeneration"):
        existing["observedGeneration"] = new["observedGeneration"]
    else:
        existing.pop("observedGeneration", None)


def is_true(conditions: list[Obj], kind: str) -> bool:
    found = find(conditions, kind)
    return found is not None and found.get("status") == "True"


def is_finished(status: Mapping[str, Any]) -> bool:
    """``trainjob.IsTrainJobFinished``: Complete or Failed is True."""
    conditions = list(status.get("conditions") or [])
    return is_true(conditions, constants.COND_COMPLETE) or \
        is_true(conditions, constants.COND_FAILED)


def set_failed(conditions: list[Obj], message: str, reason: str, now: str) -> None:
    set_condition(conditions, {"type": constants.COND_FAILED, "status": "True",
                               "reason": reason, "message": message}, now)


def remove_failed(conditions: list[Obj]) -> None:
    failed = find(conditions, constants.COND_FAILED)
    if failed is not None and failed.get("reason") != constants.REASON_DEADLINE_EXCEEDED:
        conditions.remove(failed)


def set_suspended(conditions: list[Obj], suspend: bool, now: str) -> None:
    if suspend:
        new = {"type": constants.COND_SUSPENDED, "status": "True",
               "reason": constants.REASON_SUSPENDED, "message": constants.MESSAGE_SUSPENDED}
    elif is_true(conditions, constants.COND_SUSPENDED):
        new = {"type": constants.COND_SUSPENDED, "status": "False",
               "reason": constants.REASON_RESUMED, "message": constants.MESSAGE_RESUMED}
    else:
        return
    set_condition(conditions, new, now)


def from_jobset(status: Obj, jobset: Mapping[str, Any], now: str) -> Obj:
    """``status`` (a copy) with the JobSet's outcome and counts (module doc)."""
    out = copy.deepcopy(status)
    conditions: list[Obj] = out.setdefault("conditions", [])
    jobset_status = jobset.get("status") or {}
    for theirs, ours in (("Completed", constants.COND_COMPLETE),
                         ("Failed", constants.COND_FAILED)):
        found = find(list(jobset_status.get("conditions") or []), theirs)
        if found is not None and found.get("status") == "True":
            set_condition(conditions, {**found, "type": ours}, now)
    counts = [{"name": s.get("name", ""), "ready": s.get("ready", 0),
               "succeeded": s.get("succeeded", 0), "failed": s.get("failed", 0),
               "active": s.get("active", 0), "suspended": s.get("suspended", 0)}
              for s in jobset_status.get("replicatedJobsStatus") or []]
    if counts:
        out["jobsStatus"] = counts
    else:
        out.pop("jobsStatus", None)
    if not conditions:
        del out["conditions"]
    return out


def jobset_changes_expected(jobset: Mapping[str, Any]) -> bool:
    """Whether the JobSet's counts are in between (module doc)."""
    spec = jobset.get("spec") or {}
    status = jobset.get("status") or {}
    conditions = list(status.get("conditions") or [])
    if spec.get("suspend") or is_true(conditions, "Completed") or is_true(conditions, "Failed"):
        return False
    replicas = {str(r.get("name", "")): r.get("replicas", 1)
                for r in spec.get("replicatedJobs") or []}
    counted = status.get("replicatedJobsStatus") or []
    if not counted:
        return False
    for c in counted:
        want = replicas.get(str(c.get("name", "")), 1)
        if c.get("active", 0) == c.get("ready", 0) == want or c.get("succeeded", 0) == want:
            continue
        return True
    return False


def deadline(trainjob: Mapping[str, Any], conditions: list[Obj], now: datetime) -> \
        tuple[bool, float | None]:
    """``(exceeded, seconds left)`` of ``activeDeadlineSeconds`` (``(False, None)`` when it
    does not apply: unset, finished, suspended, no start time)."""
    spec = trainjob.get("spec") or {}
    seconds = spec.get("activeDeadlineSeconds") or 0
    finished = is_true(conditions, constants.COND_COMPLETE) or \
        is_true(conditions, constants.COND_FAILED)
    if not seconds or finished or spec.get("suspend"):
        return False, None
    start = parse_time((trainjob.get("metadata") or {}).get("creationTimestamp"))
    suspended = find(conditions, constants.COND_SUSPENDED)
    if suspended is not None and suspended.get("status") == "False":
        start = parse_time(suspended.get("lastTransitionTime"))
    if start is None:
        return False, None
    end = start + timedelta(seconds=int(seconds))
    if now > end:
        return True, None
    return False, max((end - now).total_seconds(), 1.0)
