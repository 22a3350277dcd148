"""The typed view every kind's job view extends (``engine/training/api.py``): name, namespace,
replica specs and run policy read leniently; the kind's own fields as given."""

from __future__ import annotations

from dataclasses import dataclass

from mpi_controller.engine.training.api import ReplicaSpec, RunPolicy, TrainingJob, parse_job


@dataclass(frozen=True)
class SomeJob(TrainingJob):
    extra: str = ""


def test_a_kinds_view_gets_the_shared_parts_and_its_own_fields() -> None:
    job = {"metadata": {"name": "j", "namespace": "ns"},
           "spec": {"someReplicaSpecs": {"Worker": {"replicas": 3, "restartPolicy": "Never"},
                                         "Bad": "not an object"},
                    "runPolicy": {"backoffLimit": 2}}}
    view = parse_job(SomeJob, job, "someReplicaSpecs", extra="x")
    assert view == SomeJob(name="j", namespace="ns",
                           replica_specs={"Worker": ReplicaSpec("Worker", 3, "Never")},
                           run_policy=RunPolicy(backoff_limit=2), extra="x")
    assert view.total_replicas == 3


def test_a_malformed_job_reads_as_unset() -> None:
    view = parse_job(SomeJob, {"metadata": [], "spec": {"someReplicaSpecs": []}}, "x")
    assert view == SomeJob()
    assert view.total_replicas == 0
