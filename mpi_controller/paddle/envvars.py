"""The environment of a PaddleJob pod (training-operator v1.9 ``paddlepaddle/envvar.go``):
:func:`pod_env` is the list upstream's ``setPodEnv`` appends to **every** container of pod
``<rtype>-<index>`` (init containers excepted), in its order:

1. ``PYTHONUNBUFFERED=1``;
2. ``PADDLE_JOB_ID=<job name>``;
3. ``PADDLE_NNODES=<the replicas of every type>`` (masters included);
4. ``PADDLE_MASTER``, the rendezvous endpoint: ``<host>:<port>``, where

   * in **collective** mode (no Master) the host is ``<job>-worker-0`` (the Service's short
     name) and the port the Worker's ``master`` port;
   * in **parameter-server** mode (a Master) the host is ``<job>-master-0`` and the port the
     Master's ``master`` port;

   the port is the ``containerPort`` of the port named ``master`` of the replica type's
   ``paddle`` container, 36543 without one. The rendezvous pod itself (index 0 in collective
   mode, whatever its type; ``master-0`` in parameter-server mode) gets its own IP instead:
   first ``POD_IP_DUMMY`` from the field reference ``status.podIP``, then
   ``PADDLE_MASTER=$(POD_IP_DUMMY):<port>``, which the kubelet expands;
5. parameter-server mode only: ``PADDLE_SERVER_NUM=1`` on a Master pod,
   ``PADDLE_TRAINER_NUM=1`` on any other (each pod is one server or one trainer).

``elasticPolicy`` changes nothing here. The engine's
:func:`~mpi_controller.engine.training.env.add_pod_env` appends the list to a pod template.
"""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training.env import env_var
from mpi_controller.engine.training.replicas import container_port, general_name
from mpi_controller.paddle.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    ENV_JOB_ID,
    ENV_MASTER_ENDPOINT,
    ENV_NUM_NODES,
    ENV_POD_IP_DUMMY,
    ENV_PYTHONUNBUFFERED,
    ENV_SERVER_NUM,
    ENV_TRAINER_NUM,
    POD_IP_FIELD,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.paddle.v1.types import PaddleJob

__all__ = ["master_endpoint", "pod_env", "replica_port"]

Env = list[dict[str, Any]]


def replica_port(job: PaddleJob, rtype: str) -> int:
    """The ``master`` port of the replica type's ``paddle`` container, else 36543
    (``getPortFromPaddleJob``)."""
    spec = job.replica_specs.get(rtype)
    port = None if spec is None else container_port(spec, DEFAULT_CONTAINER_NAME,
                                                     DEFAULT_PORT_NAME)
    return DEFAULT_PORT if port is None else port


def master_endpoint(job: PaddleJob) -> tuple[str, int]:
    """The rendezvous replica type and port: ``(Master, its port)`` in parameter-server mode,
    ``(Worker, its port)`` in collective mode."""
    rtype = REPLICA_TYPE_MASTER if job.parameter_server_mode else REPLICA_TYPE_WORKER
    return rtype, replica_port(job, rtype)


def pod_env(job: PaddleJob, rtype: str, index: int) -> Env:
    """The variables of pod ``<rtype>-<index>``, in upstream's order (module doc)."""
    is_master = rtype.lower() == REPLICA_TYPE_MASTER.lower()
    env: Env = [env_var(ENV_PYTHONUNBUFFERED, "1"), env_var(ENV_JOB_ID, job.name),
                env_var(ENV_NUM_NODES, job.total_replicas)]
    endpoint_type, port = master_endpoint(job)
    rendezvous = index == 0 and (is_master or not job.parameter_server_mode)
    if rendezvous:
        env.append({"name": ENV_POD_IP_DUMMY,
                    "valueFrom": {"fieldRef": {"fieldPath": POD_IP_FIELD}}})
        env.append(env_var(ENV_MASTER_ENDPOINT, f"$({ENV_POD_IP_DUMMY}):{port}"))
    else:
        host = general_name(job.name, endpoint_type, 0)
        env.append(env_var(ENV_MASTER_ENDPOINT, f"{host}:{port}"))
    if job.parameter_server_mode:
        env.append(env_var(ENV_SERVER_NUM if is_master else ENV_TRAINER_NUM, "1"))
    return env
