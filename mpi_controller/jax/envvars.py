"""The environment of a JAXJob pod (training-operator v1.9 ``pkg/controller.v1/jax/envvar.go``):
what ``jax.distributed.initialize`` reads to find the coordinator, in upstream's order:

1. ``PYTHONUNBUFFERED=1``;
2. ``COORDINATOR_PORT``: the ``jaxjob-port`` of the Worker's ``jax`` container (the defaults
   put 6666 there unless the template names its own);
3. ``COORDINATOR_ADDRESS``: ``<job>-worker-0`` (worker 0's Service, short name, no port);
4. ``NUM_PROCESSES``: the replicas of every replica type, summed;
5. ``PROCESS_ID``: the pod's index.

:func:`pod_env` is that list for pod ``<rtype>-<index>``; the engine's
:func:`~mpi_controller.engine.training.env.add_pod_env` appends it to **every** container of
the pod template (init containers excepted; a variable the template already sets is not
replaced, it is followed by upstream's). Without the Worker port (no Worker spec, or no
``jax`` container with a ``jaxjob-port``) :func:`pod_env` raises ``ValueError("default
container port is not exposed")``, as upstream fails the pod's creation.
"""

from __future__ import annotations

from mpi_controller.engine.training.env import env_var
from mpi_controller.engine.training.replicas import container_port, general_name
from mpi_controller.jax.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    ENV_COORDINATOR_ADDRESS,
    ENV_COORDINATOR_PORT,
    ENV_NUM_PROCESSES,
    ENV_PROCESS_ID,
    ENV_PYTHONUNBUFFERED,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.jax.v1.types import JAXJob

__all__ = ["PORT_NOT_EXPOSED", "coordinator_port", "pod_env"]

Env = list[dict[str, str]]
PORT_NOT_EXPOSED = "default container port is not exposed"


def coordinator_port(job: JAXJob) -> int:
    """The ``jaxjob-port`` of the Worker's ``jax`` container; ValueError without one."""
    worker = job.worker
    port = None if worker is None else container_port(worker, DEFAULT_CONTAINER_NAME,
                                                       DEFAULT_PORT_NAME)
    if port is None:
        raise ValueError(PORT_NOT_EXPOSED)
    return port


def pod_env(job: JAXJob, rtype: str, index: int) -> Env:
    """The variables of pod ``<rtype>-<index>``, in upstream's order (module doc)."""
    return [
        env_var(ENV_PYTHONUNBUFFERED, "1"),
        env_var(ENV_COORDINATOR_PORT, coordinator_port(job)),
        env_var(ENV_COORDINATOR_ADDRESS, general_name(job.name, REPLICA_TYPE_WORKER, 0)),
        env_var(ENV_NUM_PROCESSES, job.total_replicas),
        env_var(ENV_PROCESS_ID, index),
    ]
