"""A TrainJob's conditions and jobsStatus (Trainer v2.3.0 ``pkg/controller/
trainjob_controller.go``, ``plugins/jobset/jobset.go`` ``Status``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mpi_controller.trainjob.status import (
    deadline,
    from_jobset,
    jobset_changes_expected,
    remove_failed,
    set_condition,
    set_failed,
    set_suspended,
)

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"


def test_suspend_then_resume() -> None:
    conditions: list[dict[str, object]] = []
    set_suspended(conditions, False, T0)
    assert conditions == []  # never suspended: no condition
    set_suspended(conditions, True, T0)
    set_suspended(conditions, True, T1)  # same status: the time stays
    assert conditions == [{"type": "Suspended", "status": "True", "reason": "Suspended",
                           "message": "TrainJob is suspended", "lastTransitionTime": T0}]
    set_suspended(conditions, False, T1)
    assert conditions == [{"type": "Suspended", "status": "False", "reason": "Resumed",
                           "message": "TrainJob is resumed", "lastTransitionTime": T1}]


def test_the_jobsets_completed_condition_becomes_complete_with_its_time() -> None:
    jobset = {"status": {"conditions": [
        {"type": "Completed", "status": "True", "reason": "AllJobsCompleted",
         "message": "jobset completed successfully", "lastTransitionTime": T0}],
        "replicatedJobsStatus": [{"name": "node", "active": 0, "failed": 0, "ready": 0,
                                  "succeeded": 1, "suspended": 0}]}}
    status = from_jobset({}, jobset, T1)
    assert status == {
        "conditions": [{"type": "Complete", "status": "True", "reason": "AllJobsCompleted",
                        "message": "jobset completed successfully", "lastTransitionTime": T0}],
        "jobsStatus": [{"name": "node", "ready": 0, "succeeded": 1, "failed": 0, "active": 0,
                        "suspended": 0}]}


def test_a_jobset_failed_condition_false_is_not_copied() -> None:
    jobset = {"status": {"conditions": [{"type": "Failed", "status": "False", "reason": "x",
                                         "message": "", "lastTransitionTime": T0}]}}
    assert from_jobset({"conditions": []}, jobset, T1) == {}


def test_failed_is_dropped_each_sync_unless_the_deadline_set_it() -> None:
    conditions: list[dict[str, object]] = []
    set_failed(conditions, "boom", "TrainingRuntimeNotSupported", T0)
    remove_failed(conditions)
    assert conditions == []
    set_failed(conditions, "TrainJob exceeded its active deadline", "DeadlineExceeded", T0)
    remove_failed(conditions)
    assert [c["reason"] for c in conditions] == ["DeadlineExceeded"]


def test_set_condition_keeps_the_time_when_the_status_stays() -> None:
    conditions = [{"type": "Complete", "status": "True", "reason": "a", "message": "m",
                   "lastTransitionTime": T0}]
    set_condition(conditions, {"type": "Complete", "status": "True", "reason": "b",
                               "message": "n"}, T1)
    assert conditions == [{"type": "Complete", "status": "True", "reason": "b", "message": "n",
                           "lastTransitionTime": T0}]


def test_the_deadline_counts_from_creation_or_the_last_resume() -> None:
    job = {"metadata": {"creationTimestamp": T0},
           "spec": {"activeDeadlineSeconds": 120, "suspend": False}}
    assert deadline(job, [], datetime(2026, 1, 1, 0, 1, tzinfo=UTC)) == (False, 60.0)
    assert deadline(job, [], datetime(2026, 1, 1, 0, 3, tzinfo=UTC)) == (True, None)
    resumed = [{"type": "Suspended", "status": "False", "lastTransitionTime": T1}]
    assert deadline(job, resumed, datetime(2026, 1, 1, 0, 2, tzinfo=UTC)) == (False, 60.0)
    suspended = {**job, "spec": {**job["spec"], "suspend": True}}
    assert deadline(suspended, [], datetime(2026, 1, 1, 0, 9, tzinfo=UTC)) == (False, None)


def jobset(*counted: dict[str, int], suspend: bool = False, finished: str = "",
           replicas: tuple[int, ...] = (1, 1)) -> dict[str, Any]:
    """A JobSet of the replicated Jobs ``init`` and ``node`` (``replicas`` each); ``counted``
    their ``replicatedJobsStatus`` counts, in that order."""
    names = ("init", "node")
    conditions = [{"type": finished, "status": "True"}] if finished else []
    return {"spec": {"suspend": suspend,
                     "replicatedJobs": [{"name": n, "replicas": r}
                                        for n, r in zip(names, replicas, strict=True)]},
            "status": {"conditions": conditions, "replicatedJobsStatus": [
                {"name": n, "ready": 0, "succeeded": 0, "failed": 0, "active": 0,
                 "suspended": 0, **c} for n, c in zip(names, counted, strict=False)]}}


RUNNING = {"active": 1, "ready": 1}
DONE = {"succeeded": 1}


@pytest.mark.parametrize(("obj", "expected"), [
    (jobset(RUNNING, RUNNING), False),                    # at rest: running
    (jobset(DONE, RUNNING), False),                       # an initializer done, the rest running
    (jobset(DONE, DONE), False),                          # all done (Completed comes with it)
    (jobset({}, {}), True),                               # just made: the Jobs are coming
    (jobset(DONE, {"active": 1}), True),                  # pods starting: ready comes
    (jobset(DONE, {"ready": 1}), True),                   # pods ended: the Job's end comes
    (jobset(DONE, {"failed": 1}), True),                  # a restart or Failed comes
    (jobset(DONE, {"active": 1, "ready": 1}, replicas=(1, 2)), True),  # one of 2 Jobs
    (jobset(DONE, {"active": 2, "ready": 2}, replicas=(1, 2)), False),
    (jobset({}, {}, suspend=True), False),                # suspended: nothing due
    (jobset(DONE, {"ready": 1}, finished="Completed"), False),
    (jobset(DONE, {"failed": 1}, finished="Failed"), False),
    ({"spec": {"replicatedJobs": [{"name": "node"}]}, "status": {}}, False),  # no counts yet
    ({"spec": {"replicatedJobs": [{"name": "node"}]},                # replicas default to 1
      "status": {"replicatedJobsStatus": [{"name": "node", **RUNNING}]}}, False),
])
def test_jobset_changes_expected(obj: dict[str, Any], expected: bool) -> None:
    assert jobset_changes_expected(obj) is expected
