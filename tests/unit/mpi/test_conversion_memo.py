"""The ``v1`` and ``v1alpha2`` modes read a stored job through ConvertedJobs: converted and
defaulted once per stored version (uid and resourceVersion), a fresh copy on every read."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.mpi.conversion import convert
from mpi_controller.mpi.conversion.memo import ConvertedJobs
from tests.unit.mpi.conftest import PI_JOB


@pytest.mark.parametrize("version", ["v1", "v1alpha2"])
def test_a_stored_version_is_converted_once(version: str) -> None:
    made: list[Obj] = []

    def defaults(job: Obj) -> Obj:
        made.append(job)
        return job

    jobs = ConvertedJobs(version, defaults)
    stored: dict[str, Any] = copy.deepcopy(PI_JOB)
    stored["metadata"]["resourceVersion"] = "7"
    first = jobs.get(stored)
    assert first == convert(stored, version)
    assert first["apiVersion"] == f"kubeflow.org/{version}"
    first["spec"]["changed"] = True
    assert jobs.get(stored) == convert(stored, version)  # a fresh copy, not the one changed
    assert len(made) == 1
    stored["metadata"]["resourceVersion"] = "8"
    jobs.get(stored)
    assert len(made) == 2
    jobs.forget("default/pi")
    jobs.get(stored)
    assert len(made) == 3


def test_a_job_without_resource_version_is_not_kept() -> None:
    made: list[Obj] = []
    jobs = ConvertedJobs("v1", lambda job: made.append(job) or job)
    jobs.get(PI_JOB)
    jobs.get(PI_JOB)
    assert len(made) == 2
