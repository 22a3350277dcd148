"""The JAX ML policy (Trainer v2.3.0 ``pkg/runtime/framework/plugins/jax/jax.go``): the
TrainJob's ``trainer.numNodes`` sets the trainer pod set's count and, only when the TrainJob
has a ``trainer``, the trainer's ``node`` container gets ``JAX_NUM_PROCESSES`` (the nodes),
``JAX_PROCESS_ID`` (the Job completion index) and ``JAX_COORDINATOR_ADDRESS``
(``<trainjob>-node-0-0.<trainjob>:29500``), and the container port 29500. The TrainJob's env
is added after them by the JobSet builder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.trainjob import constants
from mpi_controller.trainjob.apply import upsert_env, upsert_ports
from mpi_controller.trainjob.info import RuntimeInfo

__all__ = ["enforce_jax"]


def enforce_jax(info: RuntimeInfo, trainjob: Mapping[str, Any]) -> None:
    if (info.ml_policy or {}).get("jax") is None:
        return
    trainer = (trainjob.get("spec") or {}).get("trainer")
    trainer_set = info.by_ancestor(constants.ANCESTOR_TRAINER)
    if trainer_set is not None and trainer and trainer.get("numNodes") is not None:
        trainer_set.count = trainer["numNodes"]
    if trainer is None or trainer_set is None:
        return
    node = trainer_set.container(constants.NODE)
    if node is None:
        return
    name = trainjob["metadata"]["name"]
    upsert_env(node.setdefault("env", []), [
        {"name": "JAX_NUM_PROCESSES", "value": str(trainer_set.count)},
        {"name": "JAX_PROCESS_ID", "valueFrom": {"fieldRef": {
            "fieldPath": constants.JOB_COMPLETION_INDEX_FIELD_PATH}}},
        {"name": "JAX_COORDINATOR_ADDRESS",
         "value": f"{name}-{constants.NODE}-0-0.{name}:{constants.CONTAINER_TRAINER_PORT}"},
    ])
    upsert_ports(node.setdefault("ports", []),
                 [{"containerPort": constants.CONTAINER_TRAINER_PORT}])
