"""Problems the Go operators admit and run: the pure checks of each kind, their Warning Events,
and the engine recording each once per job while the job is still reconciled."""

from __future__ import annotations

import copy
from typing import Any

from mpi_controller.engine.admitted import ReportedOnce, admitted_events
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import invalid
from mpi_controller.kube.resources import PODS, SERVICES
from mpi_controller.mpi import v2beta1
from mpi_controller.pytorch import v1 as pytorch_v1
from mpi_controller.tensorflow import v1 as tf_v1
from tests.engine_harness import EngineHarness
from tests.mpijobs import small_job
from tests.pytorchjobs import pytorchjob
from tests.pytorchjobs import replica as pt_replica
from tests.tfjobs import replica, tfjob

TF_TYPES = '"PS", "Worker", "Chief", "Master", "Evaluator"'
NOTE_TO = " (admitted: the job runs as training-operator runs it)"
NOTE_MPI = " (admitted: the job runs as mpi-operator runs it)"
BOSS = (f'spec.tfReplicaSpecs[Boss]: Unsupported value: "Boss": supported values: {TF_TYPES}')
NEGATIVE = ("spec.tfReplicaSpecs[Worker].replicas: Invalid value: -3: "
            "must be greater than or equal to 0")
ELASTIC = ("spec.elasticPolicy.minReplicas: Invalid value: 5: "
           "must be less than or equal to spec.elasticPolicy.maxReplicas (2)")
SLOTS = ("spec.slotsPerWorker: Invalid value: 0: "
         "must be greater than 0: mpirun has no slot to start a process in")


def boss_job() -> dict[str, Any]:
    return tfjob("job", {"Worker": replica(1), "Boss": replica(1)})


def tf_problems(body: dict[str, Any]) -> list[str]:
    job = tf_v1.set_defaults(body)
    assert tf_v1.validate(job) == []
    return [str(e) for e in tf_v1.admitted_problems(job)]


def pytorch_problems(body: dict[str, Any]) -> list[str]:
    job = pytorch_v1.set_defaults(body)
    assert pytorch_v1.validate(job) == []
    return [str(e) for e in pytorch_v1.admitted_problems(job)]


def mpi_problems(body: dict[str, Any]) -> list[str]:
    job = v2beta1.set_defaults(body)
    assert v2beta1.validate(job) == []
    return [str(e) for e in v2beta1.admitted_problems(job)]


# -- the pure checks --------------------------------------------------------------------------


def test_a_tfjob_replica_type_boss_is_named_with_the_supported_types() -> None:
    assert tf_problems(boss_job()) == [BOSS]


def test_a_tfjob_replica_type_in_any_case_is_not_a_problem() -> None:
    """``ps`` and ``WORKER`` are camel-cased by the defaults, as upstream's are."""
    assert tf_problems(tfjob("job", {"ps": replica(1), "WORKER": replica(2)})) == []


def test_negative_tfjob_replicas_are_admitted_but_not_run() -> None:
    """Upstream's webhook admits them and its reconcile panics building TF_CONFIG (nothing is
    made): the webhook's checks pass, the controller's name the field."""
    job = tf_v1.set_defaults(tfjob("job", {"Chief": replica(1), "Worker": replica(-3)}))
    assert tf_v1.validate(job) == []
    assert tf_v1.admitted_problems(job) == []
    assert [str(e) for e in tf_v1.validate_sync(job)] == [NEGATIVE]


def test_zero_tfjob_replicas_are_not_a_problem() -> None:
    job = tf_v1.set_defaults(tfjob("job", {"Worker": replica(0), "PS": replica(1)}))
    assert tf_v1.validate_sync(job) == []
    assert tf_v1.admitted_problems(job) == []


def test_every_unknown_tfjob_replica_type_is_named_in_order() -> None:
    body = tfjob("job", {"Boss": replica(1), "Worker": replica(1), "Intern": replica(2)})
    assert tf_problems(body) == [BOSS, BOSS.replace("Boss", "Intern")]


def test_an_elastic_policy_with_min_above_max_is_named() -> None:
    body = pytorchjob("el", {"Worker": pt_replica(2)},
                      elastic={"minReplicas": 5, "maxReplicas": 2})
    assert pytorch_problems(body) == [ELASTIC]


def test_an_elastic_policy_with_min_equal_to_max_or_one_bound_is_fine() -> None:
    for policy in ({"minReplicas": 2, "maxReplicas": 2}, {"minReplicas": 5}, {"maxReplicas": 1},
                   {}):
        body = pytorchjob("el", {"Worker": pt_replica(2)}, elastic=policy)
        assert pytorch_problems(body) == [], policy


def test_slots_per_worker_zero_is_named() -> None:
    body = small_job("pi")
    body["spec"]["slotsPerWorker"] = 0
    assert mpi_problems(body) == [SLOTS]


def test_slots_per_worker_defaulted_or_positive_is_fine() -> None:
    body = small_job("pi")
    body["spec"].pop("slotsPerWorker", None)
    assert mpi_problems(copy.deepcopy(body)) == []
    body["spec"]["slotsPerWorker"] = 4
    assert mpi_problems(body) == []


def test_each_problem_is_one_warning_event() -> None:
    errors = [invalid("spec.a", -1, "bad"), invalid("spec.b", 0, "worse")]
    assert admitted_events(errors, runs_as="x-operator") == [
        Event("Warning", "ValidationError",
              "spec.a: Invalid value: -1: bad (admitted: the job runs as x-operator runs it)"),
        Event("Warning", "ValidationError",
              "spec.b: Invalid value: 0: worse (admitted: the job runs as x-operator runs it)")]


# -- once per job ------------------------------------------------------------------------------


def meta(uid: str) -> dict[str, Any]:
    return {"metadata": {"uid": uid}}


def test_an_event_is_first_once_per_job_uid() -> None:
    once = ReportedOnce()
    a, b = Event("Warning", "ValidationError", "a"), Event("Warning", "ValidationError", "b")
    assert once.first("ns/j", meta("1"), [a]) == [a]
    assert once.first("ns/j", meta("1"), [a]) == []
    assert once.first("ns/j", meta("1"), [a, b]) == [b]
    assert once.first("ns/j", meta("2"), [a]) == [a]  # the job was deleted and created again
    assert once.first("ns/k", meta("3"), []) == []
    once.forget("ns/j")
    assert once.first("ns/j", meta("1"), [a]) == [a]


# -- the engine --------------------------------------------------------------------------------


async def test_a_boss_tfjob_gets_its_pods_and_one_warning_over_several_syncs() -> None:
    """Upstream makes the Boss pod and Service (and names them in TF_CONFIG): so do we, and the
    user is told once."""
    async with EngineHarness(schemes=("tfjob",)) as h:
        h.create(boss_job())
        await h.sync("job", "TFJob")
        await h.sync("job", "TFJob")
        await h.sync("job", "TFJob")
        pods = sorted(p["metadata"]["name"] for p in h.api.objects(PODS, h.namespace))
        assert pods == ["job-boss-0", "job-worker-0"]
        services = sorted(s["metadata"]["name"] for s in h.api.objects(SERVICES, h.namespace))
        assert services == ["job-boss-0", "job-worker-0"]
        assert [e for e in h.events() if e[0] == "Warning"] == [
            ("Warning", "ValidationError", BOSS + NOTE_TO)]


async def test_a_tfjob_with_negative_replicas_gets_nothing_but_its_validation_event() -> None:
    async with EngineHarness(schemes=("tfjob",)) as h:
        h.create(tfjob("job", {"Chief": replica(1), "Worker": replica(-3)}))
        h.mark()
        await h.sync("job", "TFJob")
        assert h.writes() == []
        assert h.events() == [("Warning", "TFJobFailedValidation",
                               f"TFJob failed validation because {NEGATIVE}")]


async def test_an_mpijob_with_zero_slots_runs_and_is_warned_once() -> None:
    async with EngineHarness() as h:
        body = small_job("pi")
        body["spec"]["slotsPerWorker"] = 0
        h.create(body)
        await h.sync("pi")
        await h.sync("pi")
        assert h.job("pi")["status"]["conditions"][0]["type"] == "Created"
        assert [e for e in h.events() if e[0] == "Warning"] == [
            ("Warning", "ValidationError", SLOTS + NOTE_MPI)]
