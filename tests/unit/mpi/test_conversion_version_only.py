"""Conversion of valid jobs that use fields only their own version has (``v1alpha2``'s
``spec.backoffLimit``, ``v1``'s ``spec.mainContainer``, ``v2beta1``'s ``sshAuthMountPath``,
``runPolicy.managedBy``, a full ``schedulingPolicy``, replica selectors in the status, ...):
across ``v1alpha2 -> v2beta1 -> v1 -> v2beta1`` nothing is lost. Each view holds what its
version can say, the stored (``v2beta1``) object is the same at both visits, the API server's
read-path defaults change nothing, and the job reads back in its own version as written, also
after an edit made through another version. Pure."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_controller.mpi import v1 as mpi_v1
from mpi_controller.mpi import v1alpha2 as mpi_v1alpha2
from mpi_controller.mpi import v2beta1 as mpi_v2beta1
from mpi_controller.mpi.conversion import HUB, convert, generation_of
from mpi_controller.mpi.conversion.shapes import SHAPES, split
from tests.unit.mpi.test_conversion_properties import api_read, settled

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHAIN = ("v1alpha2", "v2beta1", "v1", "v2beta1")
IMAGE = "mpioperator/mpi-pi:openmpi"


def _template(name: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": name, "image": IMAGE}]}}


def _optional(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]]) -> dict[str, Any]:
    return draw(st.fixed_dictionaries({}, optional=fields))


_CLEAN = st.sampled_from(["All", "None", "Running"])
_COUNT = st.integers(0, 600)
_ONLY = {
    "v1alpha2": {"backoffLimit": _COUNT, "activeDeadlineSeconds": _COUNT,
                 "cleanPodPolicy": _CLEAN, "mainContainer": st.just("mpi")},
    "v1": {"cleanPodPolicy": _CLEAN, "mainContainer": st.just("mpi")},
    "v2beta1": {"runLauncherAsWorker": st.booleans(),
                "sshAuthMountPath": st.sampled_from(["/root/.ssh", "/home/mpiuser/.ssh"]),
                "launcherCreationPolicy": st.sampled_from(["AtStartup", "WaitForWorkersReady"]),
                "mpiImplementation": st.sampled_from(["OpenMPI", "Intel", "MPICH"])},
}
"""The spec fields each version alone has (``shapes``), with values its validation accepts."""

_SCHEDULING = {"minAvailable": st.integers(1, 5), "queue": st.sampled_from(["q", "research"]),
               "priorityClass": st.just("high"), "scheduleTimeoutSeconds": st.integers(1, 99),
               "minResources": st.just({"cpu": "2", "memory": "1Gi"})}


@st.composite
def valid_job(draw: st.DrawFn, version: str) -> dict[str, Any]:
    """A job valid in ``version`` (its validation says so), with some of the fields only that
    version has, and maybe a status as the controller writes it."""
    workers = draw(st.integers(1, 4))
    spec: dict[str, Any] = {
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": _template("launcher")},
            "Worker": {"replicas": workers, "template": _template("worker")}},
        **_optional(draw, {"slotsPerWorker": st.integers(1, 8)}),
        **_optional(draw, _ONLY[version])}
    scheduling = _SCHEDULING if version != "v1alpha2" else {"minAvailable": _SCHEDULING[
        "minAvailable"]}
    run = {"ttlSecondsAfterFinished": _COUNT, "schedulingPolicy": st.fixed_dictionaries(
        {}, optional=scheduling)}
    if version != "v1alpha2":
        run |= {"suspend": st.booleans(), "backoffLimit": _COUNT}
    if version == "v2beta1":
        run["managedBy"] = st.just("kubeflow.org/mpi-operator")
    if version == "v1alpha2" and "cleanPodPolicy" not in spec:
        spec["cleanPodPolicy"] = draw(_CLEAN)  # v0.2.3 reads only the spec's own
    run_policy = _optional(draw, run)
    if run_policy:
        spec["runPolicy"] = run_policy
    job = {"apiVersion": f"kubeflow.org/{version}", "kind": "MPIJob",
           "metadata": {"name": draw(st.sampled_from(["pi", "train-1"])), "uid": "u1",
                        **_optional(draw, {"labels": st.just({"team": "ml"}),
                                           "annotations": st.just({"note": "é ✓"})})},
           "spec": spec}
    if draw(st.booleans()):
        replica = {"active": workers}
        if version != "v1alpha2":
            replica["selector"] = "training.kubeflow.org/job-name=pi"
        job["status"] = {"conditions": [{"type": "Created", "status": "True"}],
                         "replicaStatuses": {"Worker": replica}}
    assert _errors(job) == [], (_errors(job), job)
    return job


def _errors(job: dict[str, Any]) -> list[Any]:
    version = job["apiVersion"].split("/")[1]
    if version == "v2beta1":
        return list(mpi_v2beta1.validate(mpi_v2beta1.set_defaults(copy.deepcopy(job))))
    if version == "v1":
        return list(mpi_v1.validate(mpi_v1.set_defaults(copy.deepcopy(job))))
    return list(mpi_v1alpha2.validate(mpi_v1alpha2.set_defaults(copy.deepcopy(job))))


def _outside(view: dict[str, Any], version: str) -> dict[str, Any] | None:
    """The parts of a view's spec and status that its version's schema has no field for."""
    body = {k: view[k] for k in ("spec", "status") if k in view}
    return split(body, SHAPES[version])[1]


def _walk_chain(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``job`` converted along :data:`CHAIN`, each step from the previous view; every view is
    checked to hold only what its version can say. The views by step."""
    views: dict[str, dict[str, Any]] = {}
    current = job
    for i, version in enumerate(CHAIN):
        current = convert(current, version)
        assert current["apiVersion"] == f"kubeflow.org/{version}"
        assert _outside(current, version) is None, (version, current)
        assert generation_of(current) == generation_of(job)
        views[f"{i}:{version}"] = current
    return views


def _origin(job: dict[str, Any]) -> str:
    return str(job["apiVersion"].split("/")[1])


@SETTINGS
@given(st.sampled_from(list(SHAPES)).flatmap(valid_job))
def test_nothing_is_lost_along_the_chain(job: dict[str, Any]) -> None:
    views = _walk_chain(job)
    first, second = views["1:v2beta1"], views["3:v2beta1"]
    assert second == first
    assert convert(second, _origin(job)) == job
    for view in views.values():  # and from any view back to the origin
        assert convert(view, _origin(job)) == job


@SETTINGS
@given(st.sampled_from(["v1alpha2", "v1"]).flatmap(valid_job))
def test_the_stored_object_read_with_the_api_servers_defaults_loses_nothing(
        job: dict[str, Any]) -> None:
    """The chain again, each ``v2beta1`` view as the API server serves it from storage."""
    stored = api_read(convert(job, HUB))
    v1_view = convert(stored, "v1")
    assert _outside(v1_view, "v1") is None
    again = api_read(convert(v1_view, HUB))
    assert convert(again, _origin(job)) == job
    assert convert(again, "v1alpha2") == convert(stored, "v1alpha2")


_EDITS = {
    "v2beta1": {"sshAuthMountPath": "/home/user/.ssh", "mpiImplementation": "Intel",
                "runPolicy": {"suspend": True, "managedBy": "kubeflow.org/mpi-operator"}},
    "v1": {"mainContainer": "main", "runPolicy": {"schedulingPolicy": {"queue": "batch"}}},
    "v1alpha2": {"backoffLimit": 2, "activeDeadlineSeconds": 60},
}


@SETTINGS
@given(st.sampled_from(list(SHAPES)).flatmap(valid_job), st.sampled_from(list(_EDITS)))
def test_an_edit_through_another_version_survives_the_chain(job: dict[str, Any],
                                                           through: str) -> None:
    """A user changes fields of the version they read the job through (only that version has
    some of them); the chain then neither loses the edit nor the origin's own fields."""
    view = convert(job, through)
    edited = copy.deepcopy(view)
    for key, value in _EDITS[through].items():
        if isinstance(value, dict):
            run = edited["spec"].setdefault(key, {})
            for sub, item in value.items():
                run[sub] = {**run.get(sub, {}), **item} if isinstance(item, dict) else item
        else:
            edited["spec"][key] = value
    views = _walk_chain(edited)
    assert views["3:v2beta1"] == views["1:v2beta1"]
    # the one rewrite allowed: a stored job's record of its unset defaults (``settled``)
    assert convert(views["3:v2beta1"], through) == (settled(edited) if through == HUB
                                                    else edited)
    back = convert(views["3:v2beta1"], _origin(job))
    kept = {k: v for k, v in job["spec"].items() if k not in _EDITS[through]}
    for key, value in kept.items():
        if key != "runPolicy":
            assert back["spec"][key] == value, key


def test_a_v1alpha2_job_keeps_its_own_fields_through_views_without_them() -> None:
    """``spec.backoffLimit`` and ``spec.activeDeadlineSeconds`` exist only in ``v1alpha2``
    (later versions have them under ``runPolicy``, a different field): set aside in the other
    views, back in place at the end."""
    job = {"apiVersion": "kubeflow.org/v1alpha2", "kind": "MPIJob",
           "metadata": {"name": "pi"},
           "spec": {"backoffLimit": 3, "activeDeadlineSeconds": 100, "cleanPodPolicy": "All",
                    "mpiReplicaSpecs": {
                        "Launcher": {"replicas": 1, "template": _template("launcher")},
                        "Worker": {"replicas": 2, "template": _template("worker")}}}}
    assert _errors(job) == []
    views = _walk_chain(job)
    for name, view in list(views.items())[1:]:
        assert "backoffLimit" not in view["spec"], name
        assert "activeDeadlineSeconds" not in view["spec"], name
        assert "runPolicy" not in view["spec"], name  # nothing invented in its place
    assert views["2:v1"]["spec"]["cleanPodPolicy"] == "All"  # v1 has the field
    assert convert(views["3:v2beta1"], "v1alpha2") == job
