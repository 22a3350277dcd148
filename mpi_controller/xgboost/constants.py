"""Names of the XGBoostJob kind (training-operator v1.9 ``xgboost_types.go`` and the
``xgboostjob-controller``)."""

from __future__ import annotations

__all__ = [
    "CONTROLLER_NAME",
    "CRD_NAME",
    "DEFAULT_CONTAINER_NAME",
    "DEFAULT_PORT",
    "DEFAULT_PORT_NAME",
    "DEFAULT_RESTART_POLICY",
    "DELETE_JOB_REASONS",
    "FRAMEWORK_NAME",
    "KIND",
    "PLURAL",
    "REPLICA_TYPES",
    "REPLICA_TYPE_MASTER",
    "REPLICA_TYPE_WORKER",
    "SPECS_FIELD",
]

KIND = "XGBoostJob"
PLURAL = "xgboostjobs"
CRD_NAME = "xgboostjobs.kubeflow.org"
CONTROLLER_NAME = "xgboostjob-controller"
FRAMEWORK_NAME = "xgboost"
SPECS_FIELD = "xgbReplicaSpecs"

DEFAULT_CONTAINER_NAME = "xgboost"
DEFAULT_PORT_NAME = "xgboostjob-port"
DEFAULT_PORT = 9999
DEFAULT_RESTART_POLICY = "Never"
DELETE_JOB_REASONS = ("SuccessfulDeleteJob", "FailedDeleteJob")
"""The Event reasons upstream's ``DeleteJob`` records when ``ttlSecondsAfterFinished`` deletes
a XGBoostJob."""

REPLICA_TYPE_MASTER = "Master"
"""The Rabit tracker (XGBoost) or LightGBM master: exactly one, and it decides success."""
REPLICA_TYPE_WORKER = "Worker"
REPLICA_TYPES = (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER)
"""The replica types, in the order upstream camel-cases them (and lists them as supported)."""
