"""A kind's hooks made of its functions and names (``engine/training/hooks.py``): the names of
its constants module, the functions called as given, the environment in every container, the
typed view computed once per job object."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, TrainingJob, parse_job
from mpi_controller.engine.training.env import env_var
from mpi_controller.engine.training.hooks import PerJob, TrainingHooks
from mpi_controller.kube.events import NORMAL, Event
from mpi_controller.kube.fielderrors import FieldError
from tests.unit.engine.training import somejob

NOW = datetime(2026, 1, 1, tzinfo=UTC)
parsed: list[Mapping[str, Any]] = []


def parse(job: Mapping[str, Any]) -> TrainingJob:
    parsed.append(job)
    return parse_job(TrainingJob, job, somejob.SPECS_FIELD)


def pod_env(view: TrainingJob, rtype: str, index: int) -> list[dict[str, str]]:
    return [env_var("JOB", view.name), env_var("RANK", f"{rtype}-{index}")]


def update_status(view: TrainingJob, status: dict[str, Any], *, pods: list[Any],
                  now: datetime) -> list[Event]:
    status["seen"] = [view.name, len(pods), now]
    return [Event(NORMAL, "Updated", view.name)]


def hooks(**kw: Any) -> TrainingHooks[TrainingJob]:
    def validate(job: Mapping[str, Any]) -> list[FieldError]:
        return []

    return TrainingHooks(somejob, parse=parse, set_defaults=lambda job: {**job, "defaulted": 1},
                         validate=validate, is_master_role=lambda specs, rtype, i: i == 1,
                         update_status=update_status, **{"pod_env": pod_env, **kw})


def test_the_names_come_from_the_constants() -> None:
    h = hooks()
    assert (h.kind, h.plural, h.controller_name, h.framework_name, h.replica_specs_field,
            h.default_container_name, h.delete_job_reasons, h.companions) == (
        "SomeJob", "somejobs", "somejob-controller", "some", "someReplicaSpecs", "some",
        ("SuccessfulDeleteJob", "FailedDeleteJob"), ())


def test_the_functions_are_the_kinds() -> None:
    h = hooks()
    job = {"metadata": {"name": "j"}}
    assert h.set_defaults(job) == {"metadata": {"name": "j"}, "defaulted": 1}
    assert h.validate(job) == []
    specs = {"Worker": ReplicaSpec("Worker", 2, "Never")}
    assert [h.is_master_role(specs, "Worker", i) for i in (0, 1)] == [False, True]
    status: dict[str, Any] = {}
    assert h.update_job_status(job, specs, status, pods=[{}], now=NOW) == [
        Event(NORMAL, "Updated", "j")]
    assert status == {"seen": ["j", 1, NOW]}


def test_the_environment_goes_to_every_container_and_the_view_is_parsed_once() -> None:
    h = hooks()
    job = {"metadata": {"name": "j"}}
    parsed.clear()
    templates: list[dict[str, Any]] = [
        {"spec": {"containers": [{"name": "some"}, {"name": "side"}]}} for _ in range(2)]
    for index, template in enumerate(templates):
        h.set_cluster_spec(job, template, "Worker", index)
    assert templates[1]["spec"]["containers"] == [
        {"name": name, "env": [env_var("JOB", "j"), env_var("RANK", "Worker-1")]}
        for name in ("some", "side")]
    h.update_job_status(job, {}, {}, pods=[], now=NOW)
    assert parsed == [job]
    h.set_cluster_spec(dict(job), templates[0], "Worker", 0)
    assert len(parsed) == 2


def test_without_an_environment_the_template_is_unchanged() -> None:
    template: dict[str, Any] = {"spec": {"containers": [{"name": "some"}]}}
    hooks(pod_env=None).set_cluster_spec({}, template, "Worker", 0)
    assert template == {"spec": {"containers": [{"name": "some"}]}}


def test_per_job_keeps_the_last_jobs_value() -> None:
    calls: list[object] = []

    def compute(job: Mapping[str, Any]) -> int:
        calls.append(job)
        return len(calls)

    per_job = PerJob(compute)
    first, second = {"a": 1}, {"a": 1}
    assert [per_job(first), per_job(first), per_job(second), per_job(first)] == [1, 1, 2, 3]
