"""Names of the TFJob kind (training-operator v1.9 ``tensorflow_types.go`` and controller)."""

from __future__ import annotations

__all__ = [
    "CONTROLLER_NAME",
    "CRD_NAME",
    "DEFAULT_CONTAINER_NAME",
    "DEFAULT_PORT",
    "DEFAULT_PORT_NAME",
    "DEFAULT_RESTART_POLICY",
    "DELETE_JOB_REASONS",
    "ENV_CUSTOM_CLUSTER_DOMAIN",
    "FRAMEWORK_NAME",
    "KIND",
    "PLURAL",
    "REPLICA_TYPES",
    "REPLICA_TYPE_CHIEF",
    "REPLICA_TYPE_EVALUATOR",
    "REPLICA_TYPE_MASTER",
    "REPLICA_TYPE_PS",
    "REPLICA_TYPE_WORKER",
    "SPECS_FIELD",
    "SUCCESS_POLICY_ALL_WORKERS",
    "SUCCESS_POLICY_DEFAULT",
    "TF_CONFIG",
]

KIND = "TFJob"
PLURAL = "tfjobs"
CRD_NAME = "tfjobs.kubeflow.org"
CONTROLLER_NAME = "tfjob-controller"
FRAMEWORK_NAME = "tensorflow"
SPECS_FIELD = "tfReplicaSpecs"

DEFAULT_CONTAINER_NAME = "tensorflow"
DEFAULT_PORT_NAME = "tfjob-port"
DEFAULT_PORT = 2222
DEFAULT_RESTART_POLICY = "Never"
DELETE_JOB_REASONS = ("SuccessfulDeleteJob", "FailedDeleteJob")
"""The Event reasons upstream's ``DeleteJob`` records when ``ttlSecondsAfterFinished`` deletes
a TFJob."""

REPLICA_TYPE_PS = "PS"
REPLICA_TYPE_WORKER = "Worker"
REPLICA_TYPE_CHIEF = "Chief"
REPLICA_TYPE_MASTER = "Master"
"""A legacy name of the chief."""
REPLICA_TYPE_EVALUATOR = "Evaluator"
REPLICA_TYPES = (REPLICA_TYPE_PS, REPLICA_TYPE_WORKER, REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER,
                 REPLICA_TYPE_EVALUATOR)
"""The replica types, in the order upstream camel-cases them."""

SUCCESS_POLICY_DEFAULT = ""
"""The chief (or master), else worker 0, decides success."""
SUCCESS_POLICY_ALL_WORKERS = "AllWorkers"

TF_CONFIG = "TF_CONFIG"
ENV_CUSTOM_CLUSTER_DOMAIN = "CUSTOM_CLUSTER_DOMAIN"
"""The operator's environment variable upstream reads the cluster domain from (here the
``--cluster-domain`` flag's default)."""
