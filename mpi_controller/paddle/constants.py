"""Names of the PaddleJob kind (training-operator v1.9 ``paddlepaddle_types.go``, ``envvar.go``
and the controller)."""

from __future__ import annotations

__all__ = [
    "CONTROLLER_NAME",
    "CRD_NAME",
    "DEFAULT_CONTAINER_NAME",
    "DEFAULT_PORT",
    "DEFAULT_PORT_NAME",
    "DEFAULT_RESTART_POLICY",
    "DELETE_JOB_REASONS",
    "ELASTIC_POLICY",
    "ENV_JOB_ID",
    "ENV_MASTER_ENDPOINT",
    "ENV_NUM_NODES",
    "ENV_POD_IP_DUMMY",
    "ENV_PYTHONUNBUFFERED",
    "ENV_SERVER_NUM",
    "ENV_TRAINER_NUM",
    "FRAMEWORK_NAME",
    "KIND",
    "PLURAL",
    "POD_IP_FIELD",
    "REPLICA_TYPES",
    "REPLICA_TYPE_MASTER",
    "REPLICA_TYPE_WORKER",
    "SPECS_FIELD",
]

KIND = "PaddleJob"
PLURAL = "paddlejobs"
CRD_NAME = "paddlejobs.kubeflow.org"
CONTROLLER_NAME = "paddlejob-controller"
FRAMEWORK_NAME = "paddle"
SPECS_FIELD = "paddleReplicaSpecs"
ELASTIC_POLICY = "elasticPolicy"

DEFAULT_CONTAINER_NAME = "paddle"
DEFAULT_PORT_NAME = "master"
DEFAULT_PORT = 36543
DEFAULT_RESTART_POLICY = "OnFailure"
DELETE_JOB_REASONS = ("SuccessfulDeletePod", "FailedDeletePod")
"""The Event reasons upstream's ``DeleteJob`` records when ``ttlSecondsAfterFinished`` deletes
a PaddleJob (the pod-deletion reasons, as upstream writes them)."""

REPLICA_TYPE_MASTER = "Master"
"""The parameter servers: a job with a Master runs in parameter-server (PS) mode."""
REPLICA_TYPE_WORKER = "Worker"
"""The trainers; a job of workers alone runs in collective mode."""
REPLICA_TYPES = (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER)
"""The replica types, in the order upstream camel-cases them (and lists them as supported)."""

ENV_PYTHONUNBUFFERED = "PYTHONUNBUFFERED"
ENV_JOB_ID = "PADDLE_JOB_ID"
ENV_NUM_NODES = "PADDLE_NNODES"
ENV_MASTER_ENDPOINT = "PADDLE_MASTER"
ENV_SERVER_NUM = "PADDLE_SERVER_NUM"
ENV_TRAINER_NUM = "PADDLE_TRAINER_NUM"
ENV_POD_IP_DUMMY = "POD_IP_DUMMY"
"""The rendezvous pod's own IP (a field reference), which its ``PADDLE_MASTER`` expands."""
POD_IP_FIELD = "status.podIP"
