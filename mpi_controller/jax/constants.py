"""Names of the JAXJob kind (training-operator v1.9 ``jax_types.go``, ``envvar.go`` and the
controller)."""

from __future__ import annotations

__all__ = [
    "CONTROLLER_NAME",
    "CRD_NAME",
    "DEFAULT_CONTAINER_NAME",
    "DEFAULT_PORT",
    "DEFAULT_PORT_NAME",
    "DEFAULT_RESTART_POLICY",
    "DELETE_JOB_REASONS",
    "ENV_COORDINATOR_ADDRESS",
    "ENV_COORDINATOR_PORT",
    "ENV_NUM_PROCESSES",
    "ENV_PROCESS_ID",
    "ENV_PYTHONUNBUFFERED",
    "FRAMEWORK_NAME",
    "KIND",
    "PLURAL",
    "REPLICA_TYPES",
    "REPLICA_TYPE_WORKER",
    "SPECS_FIELD",
]

KIND = "JAXJob"
PLURAL = "jaxjobs"
CRD_NAME = "jaxjobs.kubeflow.org"
CONTROLLER_NAME = "jaxjob-controller"
FRAMEWORK_NAME = "jax"
SPECS_FIELD = "jaxReplicaSpecs"

DEFAULT_CONTAINER_NAME = "jax"
DEFAULT_PORT_NAME = "jaxjob-port"
DEFAULT_PORT = 6666
DEFAULT_RESTART_POLICY = "Never"

REPLICA_TYPE_WORKER = "Worker"
REPLICA_TYPES = (REPLICA_TYPE_WORKER,)
"""The only replica type: every JAX process is a worker (worker 0 hosts the coordinator)."""

ENV_PYTHONUNBUFFERED = "PYTHONUNBUFFERED"
ENV_COORDINATOR_PORT = "COORDINATOR_PORT"
ENV_COORDINATOR_ADDRESS = "COORDINATOR_ADDRESS"
ENV_NUM_PROCESSES = "NUM_PROCESSES"
ENV_PROCESS_ID = "PROCESS_ID"
"""What ``jax.distributed.initialize`` needs, under training-operator v1.9's names (no ``JAX_``
prefix)."""

DELETE_JOB_REASONS = ("SuccessfulDeletePod", "FailedDeletePod")
"""The Event reasons upstream's ``DeleteJob`` records when ``ttlSecondsAfterFinished`` deletes
a JAXJob (the pod-deletion reasons, as PyTorchJob's)."""
