"""The environment of a PyTorchJob pod (training-operator v1.9 ``envvar.go``, ``master.go``,
``elastic.go``): :func:`pod_env` is the list upstream's ``setPodEnv`` appends to **every**
container of pod ``<rtype>-<index>`` (init containers excepted), in its order:

1. ``PYTHONUNBUFFERED=1``;
2. with a Master: ``MASTER_PORT`` and ``PET_MASTER_PORT`` (the Master's ``pytorchjob-port``),
   ``MASTER_ADDR`` and ``PET_MASTER_ADDR`` (``<job>-master-0``, the Service's short name),
   ``WORLD_SIZE`` (all replicas times ``nprocPerNode`` when that is a number, else times 1),
   ``RANK`` and ``PET_NODE_RANK`` (the index; a Worker's plus 1);
3. ``PET_NPROC_PER_NODE`` = ``spec.nprocPerNode`` when set (defaults make it ``auto``);
4. elastic (``elasticPolicy`` set): ``PET_RDZV_ENDPOINT`` (``rdzvHost`` or ``<job>-worker-0``,
   ``:``, ``rdzvPort`` or the Worker's ``pytorchjob-port``), ``PET_RDZV_BACKEND`` (``c10d`` by
   default), ``PET_NNODES=<min>:<max>`` (the Worker's replicas when neither is set), then when
   set ``PET_MAX_RESTARTS``, ``PET_NPROC_PER_NODE`` (the deprecated
   ``elasticPolicy.nProcPerNode``), ``PET_RDZV_ID``, ``PET_RDZV_CONF=k1=v1,k2=v2``,
   ``PET_STANDALONE=""`` (when ``standalone`` is true); otherwise ``PET_NNODES=<all
   replicas>``.

A port that is not there (no ``pytorch`` container with a ``pytorchjob-port`` in the Master's,
or for the endpoint the Worker's, template) raises ``ValueError("port not found")``, as
upstream fails the pod's creation. The engine's
:func:`~mpi_controller.engine.training.env.add_pod_env` appends the list to a pod template.
"""

from __future__ import annotations

import re

from mpi_controller.engine.training.env import env_var
from mpi_controller.engine.training.replicas import container_port, general_name
from mpi_controller.pytorch.constants import (
    BACKEND_C10D,
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT_NAME,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.pytorch.v1.types import ElasticPolicy, PyTorchJob

__all__ = ["nproc_per_node_int", "pod_env", "replica_port"]

Env = list[dict[str, str]]
_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64 = 2**63


def replica_port(job: PyTorchJob, rtype: str) -> int:
    """The ``pytorchjob-port`` of the replica type's ``pytorch`` container
    (``getPortFromPyTorchJob``); ValueError ``port not found`` without one."""
    spec = job.replica_specs.get(rtype)
    port = None if spec is None else container_port(spec, DEFAULT_CONTAINER_NAME,
                                                     DEFAULT_PORT_NAME)
    if port is None:
        raise ValueError("port not found")
    return port


def nproc_per_node_int(job: PyTorchJob) -> int:
    """``spec.nprocPerNode`` as Go's ``strconv.Atoi`` reads it; 1 when unset or not a number
    (``auto``, ``cpu``, ``gpu``)."""
    text = job.nproc_per_node
    if text is None or not _GO_INT.fullmatch(text):
        return 1
    value = int(text)
    return value if -_INT64 <= value < _INT64 else 1



def _master_env(job: PyTorchJob, rtype: str, index: int) -> Env:
    port = replica_port(job, REPLICA_TYPE_MASTER)
    address = general_name(job.name, REPLICA_TYPE_MASTER, 0)
    rank = index + 1 if rtype.lower() == REPLICA_TYPE_WORKER.lower() else index
    return [env_var("MASTER_PORT", port), env_var("PET_MASTER_PORT", port),
            env_var("MASTER_ADDR", address), env_var("PET_MASTER_ADDR", address),
            env_var("WORLD_SIZE", job.total_replicas * nproc_per_node_int(job)),
            env_var("RANK", rank), env_var("PET_NODE_RANK", rank)]


def _elastic_env(job: PyTorchJob, policy: ElasticPolicy) -> Env:
    host = policy.rdzv_host if policy.rdzv_host is not None \
        else general_name(job.name, REPLICA_TYPE_WORKER, 0)
    port = policy.rdzv_port if policy.rdzv_port is not None \
        else replica_port(job, REPLICA_TYPE_WORKER)
    if policy.min_replicas is None and policy.max_replicas is None:
        worker = job.worker
        nnodes = str(worker.replicas if worker is not None else 0)
    else:
        nnodes = f"{policy.min_replicas or 0}:{policy.max_replicas or 0}"
    env = [env_var("PET_RDZV_ENDPOINT", f"{host}:{port}"),
           env_var("PET_RDZV_BACKEND", policy.rdzv_backend or BACKEND_C10D),
           env_var("PET_NNODES", nnodes)]
    if policy.max_restarts is not None:
        env.append(env_var("PET_MAX_RESTARTS", policy.max_restarts))
    if policy.nproc_per_node is not None:
        env.append(env_var("PET_NPROC_PER_NODE", policy.nproc_per_node))
    if policy.rdzv_id is not None:
        env.append(env_var("PET_RDZV_ID", policy.rdzv_id))
    if policy.rdzv_conf:
        env.append(env_var("PET_RDZV_CONF", ",".join(f"{k}={v}" for k, v in policy.rdzv_conf)))
    if policy.standalone:
        env.append(env_var("PET_STANDALONE", ""))
    return env


def pod_env(job: PyTorchJob, rtype: str, index: int) -> Env:
    """The variables of pod ``<rtype>-<index>``, in upstream's order (module doc)."""
    env = [env_var("PYTHONUNBUFFERED", "1")]
    if job.master is not None:
        env += _master_env(job, rtype, index)
    if job.nproc_per_node is not None:
        env.append(env_var("PET_NPROC_PER_NODE", job.nproc_per_node))
    if job.elastic_policy is not None:
        env += _elastic_env(job, job.elastic_policy)
    else:
        env.append(env_var("PET_NNODES", job.total_replicas))
    return env
