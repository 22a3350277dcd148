"""The torch ML policy (Trainer v2.3.0 ``pkg/runtime/framework/plugins/torch/torch.go``,
``EnforceMLPolicy``): the ``PET_*`` environment of ``torchrun``.

On a runtime with ``mlPolicy.torch``:

* the trainer pod set's count becomes the TrainJob's ``trainer.numNodes`` when set;
* ``PET_NPROC_PER_NODE`` is the TrainJob's ``trainer.numProcPerNode``, else ``auto``; an
  ``auto`` on a node without GPUs becomes the node's CPU count (its request, else its limit,
  rounded up; at least 1), the node's resources being the TrainJob's
  ``trainer.resourcesPerNode`` or else the runtime's ``node`` container's;
* only when the TrainJob has a ``trainer``: the ``node`` container of the trainer pod set gets
  the TrainJob's env, then ``PET_NNODES``, ``PET_NPROC_PER_NODE``, ``PET_NODE_RANK`` (the Job
  completion index) and, unless the command is ``tune run`` (torchtune, not supported here),
  ``PET_MASTER_ADDR`` (``<trainjob>-node-0-0.<trainjob>``) and ``PET_MASTER_PORT`` (29500),
  and the container port 29500;
* the containers named in ``torch.envInjection.targets`` get the ``PET_*`` variables
  including the master's address and port.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.quantity import parse_quantity
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.apply import upsert_env, upsert_ports
from mpi_controller.trainjob.info import RuntimeInfo

__all__ = ["TORCHTUNE_ENTRYPOINT", "enforce_torch", "gpus_per_node", "node_resources"]

TORCHTUNE_ENTRYPOINT = ["tune", "run"]


def node_resources(info: RuntimeInfo) -> Mapping[str, Any] | None:
    """``runtime.ExtractResourcePerNodeFromRuntime``: the resources of the ``node`` container
    of the first replicated Job named ``node`` or labelled as the trainer step, if set."""
    for rjob in info.spec.get("replicatedJobs") or []:
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if rjob.get("name") != constants.NODE and \
                labels.get(constants.LABEL_TRAINJOB_ANCESTOR) != constants.ANCESTOR_TRAINER:
            continue
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get(
            "spec") or {}
        for container in pod.get("containers") or []:
            if container.get("name") == constants.NODE and "resources" in container:
                resources: Mapping[str, Any] = container["resources"] or {}
                return resources
    return None


def _count(quantities: Mapping[str, Any] | None, *, gpu: bool, name: str = "cpu") -> int:
    """A whole count of a resource (rounded up, as ``Quantity.Value``): for ``gpu``, the
    first resource whose name contains ``gpu``."""
    for resource, value in (quantities or {}).items():
        if (gpu and "gpu" in resource.lower()) or (not gpu and resource == name):
            parsed = parse_quantity(value)
            return math.ceil(parsed.value) if parsed is not None else 0
    return 0


def gpus_per_node(resources: Mapping[str, Any] | None) -> int:
    """``runtime.GetNumGPUPerNode``: the requested GPUs, else the limit's."""
    resources = resources or {}
    requested = _count(resources.get("requests"), gpu=True)
    return requested or _count(resources.get("limits"), gpu=True)


def _cpus_per_node(resources: Mapping[str, Any]) -> int:
    requested = _count(resources.get("requests"), gpu=False)
    return requested or _count(resources.get("limits"), gpu=False)


def enforce_torch(info: RuntimeInfo, trainjob: Mapping[str, Any]) -> None:
    """Apply the torch policy to ``info`` (module doc); nothing without ``mlPolicy.torch``."""
    torch = (info.ml_policy or {}).get("torch")
    if torch is None:
        return
    name = trainjob["metadata"]["name"]
    trainer = (trainjob.get("spec") or {}).get("trainer")
    trainer_set = info.by_ancestor(constants.ANCESTOR_TRAINER)
    if trainer_set is not None and trainer and trainer.get("numNodes") is not None:
        trainer_set.count = trainer["numNodes"]
    nproc: str = "auto"
    if trainer and trainer.get("numProcPerNode") is not None:
        nproc = str(trainer["numProcPerNode"])
    resources = node_resources(info) or {}
    if trainer and trainer.get("resourcesPerNode") is not None:
        resources = trainer["resourcesPerNode"]
    if nproc == "auto" and gpus_per_node(resources) == 0:
        nproc = str(max(1, _cpus_per_node(resources)))
    pet: list[dict[str, Any]] = [
        {"name": constants.TORCH_ENV_NUM_NODES,
         "value": str(trainer_set.count if trainer_set is not None else 1)},
        {"name": constants.TORCH_ENV_NUM_PROC_PER_NODE, "value": nproc},
        {"name": constants.TORCH_ENV_NODE_RANK, "valueFrom": {"fieldRef": {
            "fieldPath": constants.JOB_COMPLETION_INDEX_FIELD_PATH}}},
    ]
    master: list[dict[str, Any]] = [
        {"name": constants.TORCH_ENV_MASTER_ADDR,
         "value": f"{name}-{constants.NODE}-0-0.{name}"},
        {"name": constants.TORCH_ENV_MASTER_PORT, "value": str(constants.CONTAINER_TRAINER_PORT)},
    ]
    node = trainer_set.container(constants.NODE) if trainer and trainer_set else None
    if node is not None and trainer is not None:
        env = node.setdefault("env", [])
        upsert_env(env, trainer.get("env") or [])
        upsert_env(env, pet)
        if trainer.get("command") != TORCHTUNE_ENTRYPOINT:
            upsert_env(env, master)
        upsert_ports(node.setdefault("ports", []),
                     [{"containerPort": constants.CONTAINER_TRAINER_PORT}])
    for target in (torch.get("envInjection") or {}).get("targets") or []:
        pod_set = info.by_name(target.get("jobName", ""))
        for container_name in target.get("containerNames") or []:
            found = pod_set.container(container_name) if pod_set is not None else None
            if found is None:
                raise ValueError(f"envInjection target podSet {target.get('jobName')!r} "
                                 f"container {container_name!r} not found in runtime template")
            upsert_env(found.setdefault("env", []), [*pet, *master])
