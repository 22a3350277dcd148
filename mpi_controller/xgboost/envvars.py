"""The environment of an XGBoostJob pod (training-operator v1.9 ``xgboost.go``,
``SetPodEnv``): :func:`pod_env` is the list upstream appends to **every** container of pod
``<rtype>-<index>`` (init containers excepted), in its order:

1. ``MASTER_PORT``: the ``xgboostjob-port`` of the Master's ``xgboost`` container;
2. ``MASTER_ADDR``: ``<job>-master-0`` (the Service's short name: no namespace, no cluster
   domain);
3. ``WORLD_SIZE``: the replicas of every replica type;
4. ``RANK``: the index; a Worker's (its type compared case-insensitively) plus the Master's
   replicas;
5. ``PYTHONUNBUFFERED=1``;
6. only when ``WORLD_SIZE`` is above 1 (what LightGBM reads): ``WORKER_PORT``, the
   ``xgboostjob-port`` of the Worker's ``xgboost`` container, and ``WORKER_ADDRS``, the names
   ``<job>-worker-<i>`` for ``i`` in ``0 .. WORLD_SIZE - 2``, comma-separated.

What upstream cannot build raises ``ValueError`` (it fails the pod's creation, or panics): a
port that is not there (``failed to found the port``, upstream's words), no Master spec, no
Worker spec in a job of more than one replica. Validation rejects such jobs first. The
engine's :func:`~mpi_controller.engine.training.env.add_pod_env` appends the list to a pod
template.
"""

from __future__ import annotations

from mpi_controller.engine.training.env import env_var
from mpi_controller.engine.training.replicas import container_port, general_name
from mpi_controller.xgboost.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.xgboost.v1.types import XGBoostJob

__all__ = ["pod_env", "replica_port"]

Env = list[dict[str, str]]


def replica_port(job: XGBoostJob, rtype: str) -> int:
    """The ``xgboostjob-port`` of the replica type's ``xgboost`` container
    (``getPortFromXGBoostJob``); ValueError without the replica type or the port."""
    spec = job.replica_specs.get(rtype)
    if spec is None:
        raise ValueError(f"no {rtype} replica spec")
    port = container_port(spec, DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME)
    if port is None:
        raise ValueError("failed to found the port")
    return port



def pod_env(job: XGBoostJob, rtype: str, index: int) -> Env:
    """The variables of pod ``<rtype>-<index>``, in upstream's order (module doc)."""
    rank = index
    if rtype.lower() == REPLICA_TYPE_WORKER.lower():
        if job.master is None:
            raise ValueError(f"no {REPLICA_TYPE_MASTER} replica spec")
        rank += job.master.replicas
    master_port = replica_port(job, REPLICA_TYPE_MASTER)
    world = job.total_replicas
    env = [env_var("MASTER_PORT", master_port),
           env_var("MASTER_ADDR", general_name(job.name, REPLICA_TYPE_MASTER, 0)),
           env_var("WORLD_SIZE", world), env_var("RANK", rank), env_var("PYTHONUNBUFFERED", "1")]
    if world > 1:
        workers = ",".join(general_name(job.name, REPLICA_TYPE_WORKER, i)
                           for i in range(world - 1))
        env += [env_var("WORKER_PORT", replica_port(job, REPLICA_TYPE_WORKER)),
                env_var("WORKER_ADDRS", workers)]
    return env
