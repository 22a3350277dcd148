"""What a training kind keeps of a job between syncs (``TrainingJobKind.prepare`` and
:class:`~mpi_controller.engine.training.kind.Prepared`): the defaulted copy and what is read from
it are made once per cached object, and kept across a status write's echo; the sync never
changes them; every kind's defaults stay inside ``spec``."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from mpi_controller.engine.training.hooks import PerJob
from mpi_controller.jax.v1.defaults import set_defaults as jax_defaults
from mpi_controller.kube.changes import KeptJobs, renew, same_but_status
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import PODS
from mpi_controller.paddle.v1.defaults import set_defaults as paddle_defaults
from mpi_controller.pytorch.v1.defaults import set_defaults as pytorch_defaults
from mpi_controller.tensorflow.v1.defaults import set_defaults as tf_defaults
from mpi_controller.xgboost.v1.defaults import set_defaults as xgboost_defaults
from tests.engine_harness import EngineHarness
from tests.kind_steps import KindSteps
from tests.tfjobs import replica, tfjob

STEPS = KindSteps("TFJob", container="tensorflow", framework="tensorflow", job="job")

JOB: Obj = {
    "apiVersion": "kubeflow.org/v1", "kind": "TFJob",
    "metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "1",
                 "generation": 1, "labels": {"team": "x"},
                 "managedFields": [{"manager": "kubectl"}]},
    "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2}}},
}


def changed(change: Callable[[Obj], object]) -> Obj:
    new = copy.deepcopy(JOB)
    change(new)
    return new


@pytest.mark.parametrize("change", [
    lambda j: j.update(status={"conditions": []}),
    lambda j: j["metadata"].update(resourceVersion="2"),
    lambda j: j["metadata"].update(managedFields=[{"manager": "mpi-controller"}]),
    lambda j: j["metadata"].pop("managedFields"),
])
def test_a_status_write_changes_nothing_else(change: Callable[[Obj], object]) -> None:
    assert same_but_status(JOB, changed(change))
    assert same_but_status(changed(change), JOB)


@pytest.mark.parametrize("change", [
    lambda j: j["spec"]["tfReplicaSpecs"]["Worker"].update(replicas=3),
    lambda j: j["metadata"]["labels"].update(team="y"),
    lambda j: j["metadata"].update(generation=2),
    lambda j: j["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z"),
    lambda j: j.pop("spec"),
    lambda j: j.update(extra={}),
    lambda j: j.update(metadata="not an object"),
])
def test_any_other_change_counts(change: Callable[[Obj], object]) -> None:
    assert not same_but_status(JOB, changed(change))
    assert not same_but_status(changed(change), JOB)


def test_kept_jobs_derive_once_per_version_and_keep_across_a_status_write() -> None:
    derived: list[Obj] = []

    def derive(job: Any) -> Obj:
        out = {**copy.deepcopy(job), "spec": {"defaulted": len(derived)}}
        derived.append(out)
        return out

    kept = KeptJobs(derive)
    first = kept.prepare(JOB)
    assert kept.prepare(JOB) is first
    assert kept.read(first, "r", lambda: 1) == 1
    assert kept.read(first, "r", lambda: 2) == 1
    assert kept.read(copy.deepcopy(first), "r", lambda: 3) == 3  # not what prepare gave
    spec = first["spec"]
    newer = changed(lambda j: j.update(status={"startTime": "t"}))
    renewed = kept.prepare(newer)
    assert renewed is first
    assert renewed == {**newer, "spec": {"defaulted": 0}}
    assert renewed["spec"] is spec
    assert renewed["status"] is not newer["status"]
    assert kept.read(renewed, "r", lambda: 4) == 1
    scaled = changed(lambda j: j["spec"]["tfReplicaSpecs"]["Worker"].update(replicas=3))
    assert kept.prepare(scaled)["spec"] == {"defaulted": 1}
    assert kept.read(kept.prepare(scaled), "r", lambda: 5) == 5
    assert ("ns", "a") in kept
    kept.drop("ns", "a")
    assert ("ns", "a") not in kept


def test_shallow_kept_jobs_hand_each_caller_its_own_top_level() -> None:
    kept = KeptJobs(lambda job: copy.deepcopy(dict(job)), shallow=True)
    one = kept.prepare(JOB)
    assert kept.read(one, "r", lambda: 1) == 1
    one["status"] = {"set": True}
    two = kept.prepare(JOB)
    assert two is not one
    assert "status" not in two
    assert two["spec"] is one["spec"]
    assert kept.read(two, "r", lambda: 2) == 1  # the reads belong to the version
    assert kept.read(one, "r", lambda: 3) == 3  # no longer the copy handed out


def test_per_job_keeps_each_jobs_value() -> None:
    calls: list[str] = []

    def compute(job: Any) -> str:
        calls.append(job["metadata"]["name"])
        return str(job["metadata"]["name"])

    per_job = PerJob(compute)
    a, b = {"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}
    assert [per_job(a), per_job(b), per_job(a), per_job(b)] == ["a", "b", "a", "b"]
    assert calls == ["a", "b"]
    per_job.forget("", "a")
    assert per_job(a) == "a"
    assert calls == ["a", "b", "a"]


@pytest.mark.parametrize(("defaults", "field"), [
    (tf_defaults, "tfReplicaSpecs"), (pytorch_defaults, "pytorchReplicaSpecs"),
    (xgboost_defaults, "xgbReplicaSpecs"), (paddle_defaults, "paddleReplicaSpecs"),
    (jax_defaults, "jaxReplicaSpecs"),
])
def test_every_kinds_defaults_stay_inside_spec(defaults: Callable[[Any], Obj],
                                               field: str) -> None:
    """The contract ``Prepared.renewed`` rests on (``TrainingFramework.set_defaults``)."""
    job = {**copy.deepcopy(JOB), "status": {"conditions": [{"type": "Created"}]},
           "spec": {field: {"Worker": {"template": {"spec": {"containers": [{"name": "c"}]}}},
                            "Master": {"replicas": 1}}}}
    out = defaults(job)
    assert out["spec"] != job["spec"]
    assert {k: v for k, v in out.items() if k != "spec"} == \
        {k: v for k, v in job.items() if k != "spec"}


def counting(h: EngineHarness) -> dict[str, int]:
    """Count the TFJob hooks' set_defaults and validate calls."""
    kind: Any = h.controller_for("TFJob").kind
    fw = kind.framework
    calls = {"set_defaults": 0, "validate": 0}
    for name in calls:
        original = getattr(fw, name)

        def wrapped(job: Any, _name: str = name, _original: Any = original) -> Any:
            calls[_name] += 1
            return _original(job)
        setattr(fw, name, wrapped)
    return calls


async def test_a_job_is_defaulted_and_validated_once_while_only_its_status_changes() -> None:
    async with STEPS.harness() as h:
        h.create(tfjob("job", {"PS": replica(1, port=2222), "Worker": replica(2, port=2222)}))
        calls = counting(h)
        await h.sync("job", "TFJob")  # creates the pods and writes the status
        await h.sync("job", "TFJob")  # the status write's echo
        STEPS.set_pod(h, "job-worker-0", "Running")
        await h.sync("job", "TFJob")  # the same cached job: writes Running
        await h.sync("job", "TFJob")
        assert calls == {"set_defaults": 1, "validate": 1}
        assert STEPS.conditions(h, "job")[-1] == ("Running", "True", "TFJobRunning")
        kind: Any = h.controller_for("TFJob").kind
        assert kind.kept.kept("ns", "job")["status"] == STEPS.status(h, "job")

        def scale(job: Obj) -> None:
            job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 3
        h.api.modify(kind.resource, "job", scale, namespace="ns")
        h.mark()
        await h.sync("job", "TFJob")
        assert calls == {"set_defaults": 2, "validate": 2}
        assert ("create", "pods", "ns", "job-worker-2") in h.writes()


async def test_a_sync_never_changes_the_kept_job_and_a_finished_job_is_not_kept() -> None:
    async with STEPS.harness() as h:
        h.create(tfjob("job", {"PS": replica(1, port=2222),
                               "Worker": replica(2, restart="ExitCode", port=2222)}))
        kind: Any = h.controller_for("TFJob").kind
        await h.sync("job", "TFJob")
        steps: list[tuple[str, str, int | None]] = [
            ("job-ps-0", "Running", None), ("job-worker-0", "Running", None),
            ("job-worker-1", "Running", None), ("job-worker-1", "Failed", 137),
            ("job-worker-1", "Pending", None), ("job-worker-1", "Running", None),
            ("job-worker-0", "Succeeded", 0)]
        for pod, phase, code in steps:
            kept = kind.kept.kept("ns", "job")
            spec = kept["spec"]
            before = copy.deepcopy(spec)
            if h.stored(PODS, pod) is not None:
                STEPS.set_pod(h, pod, phase, code=code)
            await h.sync("job", "TFJob")
            # a status write's echo renews the kept job's status and metadata, never its spec
            current = kind.kept.kept("ns", "job")
            assert current is kept or current is None  # None: finished, not kept
            assert spec == before
            assert kept["spec"] is spec
            await h.sync("job", "TFJob")  # the status write's echo, or nothing new
        assert "TFJobRestarting" in [reason for _, reason, _ in h.events()]
        assert STEPS.conditions(h, "job")[-1] == ("Succeeded", "True", "TFJobSucceeded")
        assert ("ns", "job") not in kind.kept
        assert kind.framework.view._kept == {}


def test_renew_copies_all_but_the_derived_spec_in_place() -> None:
    derived: Obj = {"kind": "TFJob", "metadata": {"name": "old"}, "spec": {"defaulted": True},
                    "status": {"old": 1}}
    spec = derived["spec"]
    new = {"kind": "TFJob", "metadata": {"name": "new"}, "spec": {"raw": 1}, "extra": {"a": 1}}
    renew(derived, new)
    assert derived == {"kind": "TFJob", "metadata": {"name": "new"}, "spec": {"defaulted": True},
                       "extra": {"a": 1}}
    assert derived["spec"] is spec
    assert derived["extra"] is not new["extra"]
