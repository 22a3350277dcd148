"""The runPolicy fields nothing upstream checks (training-operator's schema types them, its
webhooks look only at ``managedBy``): an unknown ``cleanPodPolicy`` and a negative
``backoffLimit``, ``activeDeadlineSeconds`` or ``ttlSecondsAfterFinished`` are admitted and
run as upstream runs them, and named by one Warning ``ValidationError`` Event each, for every
training kind (their hooks add them after the kind's own admitted problems)."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.engine.training.validation import run_policy_problems
from mpi_controller.kube.resources import PODS
from tests.engine_harness import EngineHarness
from tests.pytorchjobs import pytorchjob
from tests.pytorchjobs import replica as pt_replica
from tests.tfjobs import replica, tfjob

NOTE = " (admitted: the job runs as training-operator runs it)"
CLEAN = ('spec.runPolicy.cleanPodPolicy: Unsupported value: "Everything": supported values: '
         '"All", "Running", "None": every pod is deleted when the job finishes, as with All')
BACKOFF = ("spec.runPolicy.backoffLimit: Invalid value: -1: must be greater than or equal to 0: "
           "the job fails at once, past its backoff limit")
DEADLINE = ("spec.runPolicy.activeDeadlineSeconds: Invalid value: -5: must be greater than or "
            "equal to 0: the job fails as past its deadline as soon as it starts")
TTL = ("spec.runPolicy.ttlSecondsAfterFinished: Invalid value: -2: must be greater than or equal "
       "to 0: the job is deleted as soon as it finishes")


def job(**run_policy: Any) -> dict[str, Any]:
    return tfjob("job", {"Worker": replica(1)}, run_policy=run_policy)


def test_each_unchecked_field_is_named_in_order() -> None:
    bad = job(cleanPodPolicy="Everything", backoffLimit=-1, activeDeadlineSeconds=-5,
              ttlSecondsAfterFinished=-2)
    assert [str(e) for e in run_policy_problems(bad)] == [CLEAN, BACKOFF, DEADLINE, TTL]


@pytest.mark.parametrize("run_policy", [
    {}, {"cleanPodPolicy": "All"}, {"cleanPodPolicy": "Running"}, {"cleanPodPolicy": "None"},
    {"backoffLimit": 0, "activeDeadlineSeconds": 0, "ttlSecondsAfterFinished": 0},
    {"backoffLimit": 3, "activeDeadlineSeconds": 600, "ttlSecondsAfterFinished": 60},
])
def test_what_upstream_would_do_as_meant_is_no_problem(run_policy: dict[str, Any]) -> None:
    assert run_policy_problems(job(**run_policy)) == []


def test_a_job_without_a_run_policy_or_spec_is_no_problem() -> None:
    assert run_policy_problems({"spec": {}}) == []
    assert run_policy_problems({}) == []


async def test_a_tfjob_with_an_unknown_clean_pod_policy_runs_and_is_warned_once() -> None:
    async with EngineHarness(schemes=("tfjob",)) as h:
        h.create(job(cleanPodPolicy="Everything"))
        for _ in range(3):
            await h.sync("job", "TFJob")
        assert [p["metadata"]["name"] for p in h.api.objects(PODS, h.namespace)] == [
            "job-worker-0"]
        assert [e for e in h.events() if e[0] == "Warning"] == [
            ("Warning", "ValidationError", CLEAN + NOTE)]


async def test_a_tfjob_with_a_negative_backoff_limit_fails_at_once_and_is_told_why() -> None:
    """As training-operator's PastBackoffLimit (0 restarts >= -1): Failed before any pod."""
    async with EngineHarness(schemes=("tfjob",)) as h:
        h.create(job(backoffLimit=-1))
        await h.sync("job", "TFJob")
        await h.sync("job", "TFJob")
        assert h.api.objects(PODS, h.namespace) == []
        failed = [c for c in h.job("job", "TFJob")["status"]["conditions"]
                  if c["type"] == "Failed"]
        assert [(c["status"], c["reason"], c["message"]) for c in failed] == [
            ("True", "TFJobFailed", "Job job has failed because it has reached the specified "
             "backoff limit")]
        assert ("Warning", "ValidationError", BACKOFF + NOTE) in h.events()


async def test_a_pytorchjob_gets_them_after_its_own_admitted_problems() -> None:
    async with EngineHarness(schemes=("pytorchjob",)) as h:
        body = pytorchjob("pt", {"Master": pt_replica(1), "Worker": pt_replica(1)},
                          run_policy={"ttlSecondsAfterFinished": -2})
        h.create(body)
        await h.sync("pt", "PyTorchJob")
        assert [e for e in h.events() if e[0] == "Warning"] == [
            ("Warning", "ValidationError", TTL + NOTE)]
