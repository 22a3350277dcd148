"""Names of the PyTorchJob kind (training-operator v1.9 ``pytorch_types.go``, ``elastic.go``,
``envvar.go``, ``master.go``, ``initcontainer.go`` and the controller)."""

from __future__ import annotations

__all__ = [
    "BACKEND_C10D",
    "CONTROLLER_NAME",
    "CRD_NAME",
    "DEFAULT_CONTAINER_NAME",
    "DEFAULT_INIT_CONTAINER_IMAGE",
    "DEFAULT_INIT_CONTAINER_MAX_TRIES",
    "DEFAULT_INIT_CONTAINER_TEMPLATE_FILE",
    "DEFAULT_NPROC_PER_NODE",
    "DEFAULT_PORT",
    "DEFAULT_PORT_NAME",
    "DEFAULT_RESTART_POLICY",
    "DELETE_JOB_REASONS",
    "ELASTIC_POLICY",
    "FRAMEWORK_NAME",
    "INIT_CONTAINER_NAME",
    "KIND",
    "PLURAL",
    "REPLICA_TYPES",
    "REPLICA_TYPE_MASTER",
    "REPLICA_TYPE_WORKER",
    "SPECS_FIELD",
]

KIND = "PyTorchJob"
PLURAL = "pytorchjobs"
CRD_NAME = "pytorchjobs.kubeflow.org"
CONTROLLER_NAME = "pytorchjob-controller"
FRAMEWORK_NAME = "pytorch"
SPECS_FIELD = "pytorchReplicaSpecs"
ELASTIC_POLICY = "elasticPolicy"

DEFAULT_CONTAINER_NAME = "pytorch"
DEFAULT_PORT_NAME = "pytorchjob-port"
DEFAULT_PORT = 23456
DEFAULT_RESTART_POLICY = "OnFailure"
DEFAULT_NPROC_PER_NODE = "auto"
DELETE_JOB_REASONS = ("SuccessfulDeletePod", "FailedDeletePod")
"""The Event reasons upstream's ``DeleteJob`` records when ``ttlSecondsAfterFinished`` deletes
a PyTorchJob (the pod-deletion reasons, as upstream writes them)."""

REPLICA_TYPE_MASTER = "Master"
REPLICA_TYPE_WORKER = "Worker"
REPLICA_TYPES = (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER)
"""The replica types, in the order upstream camel-cases them (and lists them as supported)."""

BACKEND_C10D = "c10d"
"""The rendezvous backend when ``elasticPolicy.rdzvBackend`` is unset."""

INIT_CONTAINER_NAME = "init-pytorch"
DEFAULT_INIT_CONTAINER_IMAGE = "alpine:3.10"
DEFAULT_INIT_CONTAINER_MAX_TRIES = 100
DEFAULT_INIT_CONTAINER_TEMPLATE_FILE = "/etc/config/initContainer.yaml"
