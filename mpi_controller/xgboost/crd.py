"""The XGBoostJob CRD (``xgboostjobs.kubeflow.org``): the ``kubeflow.org/v1`` schema of
training-operator v1.9's XGBoostJob (required ``xgbReplicaSpecs``, the shared run policy and
status), the status subresource, printer columns State and Age."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training.crd import PRINTER_COLUMNS, job_schema, replica_spec, run_policy
from mpi_controller.kube.crd import CRD, Version
from mpi_controller.xgboost import constants

__all__ = ["XGBOOSTJOB", "xgboostjob_schema"]


def xgboostjob_schema(template: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "type": "object",
        "required": [constants.SPECS_FIELD],
        "description": "Desired state of the XGBoostJob.",
        "properties": {
            "runPolicy": run_policy(),
            constants.SPECS_FIELD: {
                "type": "object",
                "description": "Replica types: Master (one, the tracker; it decides success) "
                               "and Worker.",
                "additionalProperties": replica_spec(template, "XGBoost"),
            },
        },
    }
    return job_schema(constants.KIND, "XGBoostJob runs distributed XGBoost (or LightGBM): one "
                      "pod and one headless Service per replica, MASTER_ADDR, MASTER_PORT, "
                      "WORLD_SIZE, RANK (and WORKER_ADDRS, WORKER_PORT) in each pod.", spec)


XGBOOSTJOB = CRD(
    group="kubeflow.org",
    kind=constants.KIND,
    plural=constants.PLURAL,
    versions=(Version("v1", xgboostjob_schema, PRINTER_COLUMNS, storage=True),),
)
