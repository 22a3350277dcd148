"""Drives one training job through the Kubeflow training SDK (``kubeflow-training``, its
``TrainingClient``) and prints, as one JSON document on stdout, what the SDK answered.

It runs on the SDK's own virtualenv (``.venv-sdk``: the SDK needs ``kubernetes<36``, the
project pins 37), so it imports nothing of the project. e2e/test_training_sdk.py runs it:

    .venv-sdk/bin/python e2e/sdk/driver.py < scenario.json

The scenario: ``{"kubeconfig": path, "job": a kubeflow.org/v1 manifest (with its namespace),
"wait_timeout": seconds}``. The driver makes the job the SDK's model object of its kind (the
SDK's own deserialization, as ``get_job`` does), then calls, in order:

1. ``create_job(job=...)``;
2. ``wait_for_job_conditions(name, expected_conditions={"Succeeded"})``;
3. ``get_job_conditions(name)``;
4. ``get_job_pod_names(name)`` and ``get_job_pod_names(name, is_master=True)`` (pods with
   ``training.kubeflow.org/job-role=master``);
5. ``list_jobs()``;
6. ``delete_job(name)``, then ``list_jobs()`` until the job is gone.

Output keys: ``model`` (the model class ``create_job`` was given), ``sent`` (that object as the
SDK serializes it), ``waited`` (the class ``wait_for_job_conditions`` returned and its
conditions), ``conditions`` (``[type, status, reason, message]`` each), ``replica_statuses``,
``pods``, ``master_pods``, ``listed`` (names), ``listed_after_delete``; on an exception,
``error`` (its type and message) and what was gathered so far.
"""

from __future__ import annotations

import sys
from typing import Any

from driving import delete_and_list, run
from kubeflow.training import TrainingClient, constants
from kubeflow.training.api_client import ApiClient
from kubeflow.training.utils import utils


def as_model(job: dict[str, Any]) -> Any:
    """The SDK's model object of the manifest's kind (``KubeflowOrgV1XGBoostJob``, ...)."""
    model = constants.JOB_PARAMETERS[job["kind"]]["model"]
    return ApiClient().deserialize(utils.FakeResponse(job), model)


def conditions(items: Any) -> list[list[str | None]]:
    return [[c.type, c.status, c.reason, c.message] for c in items or []]


def drive(scenario: dict[str, Any], out: dict[str, Any]) -> None:
    manifest = scenario["job"]
    kind, name = manifest["kind"], manifest["metadata"]["name"]
    namespace = manifest["metadata"]["namespace"]
    sdk = TrainingClient(config_file=scenario["kubeconfig"], namespace=namespace,
                         job_kind=kind)
    job = as_model(manifest)
    out["model"] = type(job).__name__
    out["sent"] = sdk.api_client.sanitize_for_serialization(job)
    sdk.create_job(job=job)
    waited = sdk.wait_for_job_conditions(
        name, expected_conditions={constants.JOB_CONDITION_SUCCEEDED},
        wait_timeout=scenario.get("wait_timeout", 120), polling_interval=1)
    out["waited"] = [type(waited).__name__, conditions(waited.status.conditions)]
    out["conditions"] = conditions(sdk.get_job_conditions(name))
    statuses = sdk.get_job(name).status.replica_statuses or {}
    out["replica_statuses"] = sdk.api_client.sanitize_for_serialization(statuses)
    out["pods"] = sdk.get_job_pod_names(name)
    out["master_pods"] = sdk.get_job_pod_names(name, is_master=True)
    out["listed"] = [j.metadata.name for j in sdk.list_jobs()]
    delete_and_list(lambda: sdk.delete_job(name),
                    lambda: [j.metadata.name for j in sdk.list_jobs()], name, out)


if __name__ == "__main__":
    sys.exit(run(drive))
