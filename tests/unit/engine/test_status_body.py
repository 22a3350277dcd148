"""The body of a job's status write: the cached job with the new status and without
managedFields, built without copying the job (and without changing the cached one)."""

from __future__ import annotations

import copy
from typing import Any

from mpi_controller.engine.context import status_body
from mpi_controller.runtime.codec import dumps, loads


def _cached() -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1", "kind": "TFJob",
        "metadata": {"name": "tf", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
                     "labels": {"a": "b"}, "managedFields": [{"manager": "kubectl"}]},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {}}}}},
        "status": {"conditions": []},
    }


def test_the_body_is_the_cached_job_with_the_new_status_and_no_managed_fields() -> None:
    cached, status = _cached(), {"conditions": [{"type": "Created", "status": "True"}]}
    before = copy.deepcopy(cached)
    body = status_body(cached, status)
    expected = copy.deepcopy(before)
    expected["status"] = status
    del expected["metadata"]["managedFields"]
    assert loads(dumps(body)) == expected
    assert cached == before  # the cached job is left as it was
    assert body["spec"] is cached["spec"]  # shared, not copied


def test_a_job_without_metadata_gets_an_empty_one() -> None:
    assert status_body({"kind": "TFJob"}, {}) == {"kind": "TFJob", "metadata": {}, "status": {}}
