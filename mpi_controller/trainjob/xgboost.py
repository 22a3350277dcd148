"""The XGBoost ML policy (Trainer v2.3.0 ``pkg/runtime/framework/plugins/xgboost/xgboost.go``):
the TrainJob's ``trainer.numNodes`` sets the trainer pod set's count and, only when the TrainJob
has a ``trainer``, the trainer's ``node`` container gets ``DMLC_TRACKER_URI``
(``<trainjob>-node-0-0.<trainjob>``), ``DMLC_TRACKER_PORT`` (29500), ``DMLC_TASK_ID`` (the Job
completion index) and ``DMLC_NUM_WORKER`` (nodes times the GPUs per node, or times 1 without
GPUs; the TrainJob's ``resourcesPerNode``, else the runtime's ``node`` container's), and the
container port 29500. Its check: no ``DMLC_*`` variable of those four in ``trainer.env``
(Forbidden, per entry).

The plain policy also applies to an XGBoost runtime (``plainml.go`` leaves out only torch, MPI
and JAX) and upstream runs the two in the order of a Go map's iteration, so the TrainJob's env
may come before or after the ``DMLC_*`` variables there; here it always comes first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.fielderrors import FieldError, forbidden
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.apply import upsert_env, upsert_ports
from mpi_controller.trainjob.info import RuntimeInfo
from mpi_controller.trainjob.torch import gpus_per_node, node_resources

__all__ = ["RESERVED_ENV_NAMES", "enforce_xgboost", "validate_xgboost"]

TRACKER_URI, TRACKER_PORT, TASK_ID, NUM_WORKER = (
    "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")
RESERVED_ENV_NAMES = frozenset({TRACKER_URI, TRACKER_PORT, TASK_ID, NUM_WORKER})


def validate_xgboost(trainjob: Mapping[str, Any],
                     runtime_spec: Mapping[str, Any]) -> list[FieldError]:
    if (runtime_spec.get("mlPolicy") or {}).get("xgboost") is None:
        return []
    trainer = (trainjob.get("spec") or {}).get("trainer") or {}
    return [forbidden(f"spec.trainer.env[{i}]",
                      f"{env.get('name')} is reserved for the XGBoost runtime")
            for i, env in enumerate(trainer.get("env") or [])
            if env.get("name") in RESERVED_ENV_NAMES]


def enforce_xgboost(info: RuntimeInfo, trainjob: Mapping[str, Any]) -> None:
    if (info.ml_policy or {}).get("xgboost") is None:
        return
    trainer_set = info.by_ancestor(constants.ANCESTOR_TRAINER)
    if trainer_set is None:
        return
    trainer = (trainjob.get("spec") or {}).get("trainer")
    if trainer and trainer.get("numNodes") is not None:
        trainer_set.count = trainer["numNodes"]
    node = trainer_set.container(constants.NODE) if trainer is not None else None
    if node is None or trainer is None:
        return
    resources = node_resources(info) or {}
    if trainer.get("resourcesPerNode") is not None:
        resources = trainer["resourcesPerNode"]
    per_node = gpus_per_node(resources) or 1
    name = trainjob["metadata"]["name"]
    upsert_env(node.setdefault("env", []), [
        {"name": TRACKER_URI, "value": f"{name}-{constants.NODE}-0-0.{name}"},
        {"name": TRACKER_PORT, "value": str(constants.CONTAINER_TRAINER_PORT)},
        {"name": TASK_ID, "valueFrom": {"fieldRef": {
            "fieldPath": constants.JOB_COMPLETION_INDEX_FIELD_PATH}}},
        {"name": NUM_WORKER, "value": str(trainer_set.count * per_node)},
    ])
    upsert_ports(node.setdefault("ports", []),
                 [{"containerPort": constants.CONTAINER_TRAINER_PORT}])
