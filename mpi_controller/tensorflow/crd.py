"""The TFJob CRD (``tfjobs.kubeflow.org``): the ``kubeflow.org/v1`` schema of training-operator
v1.9's TFJob (required ``tfReplicaSpecs``, ``successPolicy``, ``enableDynamicWorker`` and the
shared run policy and status), the status subresource, printer columns State and Age."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training.crd import PRINTER_COLUMNS, job_schema, replica_spec, run_policy
from mpi_controller.kube.crd import CRD, Version
from mpi_controller.kube.openapi import string


def tfjob_schema(template: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "type": "object",
        "required": ["tfReplicaSpecs"],
        "description": "Desired state of the TFJob.",
        "properties": {
            "runPolicy": run_policy(),
            "successPolicy": string('"" (the chief, else worker 0, decides) or AllWorkers.'),
            "tfReplicaSpecs": {
                "type": "object",
                "description": "Replica types: Chief (or Master), PS, Worker, Evaluator.",
                "additionalProperties": replica_spec(template, "TensorFlow"),
            },
            "enableDynamicWorker": {
                "type": "boolean",
                "description": "Sparse TF_CONFIG (each worker sees itself and the PS); worker "
                               "failures do not fail the job.",
            },
        },
    }
    return job_schema("TFJob", "TFJob runs a distributed TensorFlow program: one pod and one "
                      "headless Service per replica, TF_CONFIG in each pod.", spec)


TFJOB = CRD(
    group="kubeflow.org",
    kind="TFJob",
    plural="tfjobs",
    versions=(Version("v1", tfjob_schema, PRINTER_COLUMNS, storage=True),),
)
