"""The plain ML policy (Trainer v2.3.0 ``pkg/runtime/framework/plugins/plainml/plainml.go``):
on a runtime without a torch, MPI or JAX policy, the TrainJob's ``trainer.numNodes`` sets the
trainer pod set's count and its ``trainer.env`` goes into the trainer's ``node`` container."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.trainjob import constants
from mpi_controller.trainjob.apply import upsert_env
from mpi_controller.trainjob.info import RuntimeInfo

__all__ = ["enforce_plain"]


def enforce_plain(info: RuntimeInfo, trainjob: Mapping[str, Any]) -> None:
    policy = info.ml_policy or {}
    if any(policy.get(name) is not None for name in ("torch", "mpi", "jax")):
        return
    trainer = (trainjob.get("spec") or {}).get("trainer")
    if trainer is None:
        return
    trainer_set = info.by_ancestor(constants.ANCESTOR_TRAINER)
    if trainer_set is None:
        return
    if trainer.get("numNodes") is not None:
        trainer_set.count = trainer["numNodes"]
    node = trainer_set.container(constants.NODE)
    if node is not None:
        upsert_env(node.setdefault("env", []), trainer.get("env") or [])
