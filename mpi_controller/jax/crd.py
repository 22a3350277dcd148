"""The JAXJob CRD (``jaxjobs.kubeflow.org``): the ``kubeflow.org/v1`` schema of training-operator
v1.9's JAXJob (required ``jaxReplicaSpecs`` and the shared run policy and status), the status
subresource, the **scale** subresource (the Worker replicas, so ``kubectl scale`` works),
printer columns State and Age."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training.crd import (
    PRINTER_COLUMNS,
    job_schema,
    replica_spec,
    run_policy,
    worker_scale,
)
from mpi_controller.jax.constants import KIND, PLURAL, SPECS_FIELD
from mpi_controller.kube.crd import CRD, Version

__all__ = ["JAXJOB", "SCALE", "jaxjob_schema"]

SCALE = worker_scale(SPECS_FIELD)


def jaxjob_schema(template: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "type": "object",
        "required": [SPECS_FIELD],
        "description": "Desired state of the JAXJob.",
        "properties": {
            "runPolicy": run_policy(),
            SPECS_FIELD: {
                "type": "object",
                "description": "Replica types: Worker (worker 0 hosts the coordinator).",
                "additionalProperties": replica_spec(template, "JAX"),
            },
        },
    }
    return job_schema(KIND, "JAXJob runs a distributed JAX program: one pod and one headless "
                      "Service per worker, COORDINATOR_ADDRESS, COORDINATOR_PORT, "
                      "NUM_PROCESSES and PROCESS_ID in each pod.", spec)


JAXJOB = CRD(
    group="kubeflow.org",
    kind=KIND,
    plural=PLURAL,
    versions=(Version("v1", jaxjob_schema, PRINTER_COLUMNS, storage=True,
                      subresources={"status": {}, "scale": SCALE}),),
)
