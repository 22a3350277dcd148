"""The TrainJob API of Trainer v2.3.0 (``pkg/apis/trainer/v1alpha1/trainjob_types.go``): its
defaults, the runtime a TrainJob names, and the checks the controller makes before it builds
anything (the torch plugin's ``Validate`` in
``pkg/runtime/framework/plugins/torch/torch.go``).

Defaults (the CRD's, applied again to the copy a sync works on): ``runtimeRef.apiGroup``
``trainer.kubeflow.org``, ``runtimeRef.kind`` ``ClusterTrainingRuntime``, ``suspend`` false,
``managedBy`` ``trainer.kubeflow.org/trainjob-controller``.

:func:`stamp_runtime_patches` is the TrainJob defaulter (the mutating webhook
``defaulter.trainjob.trainer.kubeflow.org``, ``pkg/webhooks/trainjob_webhook.go``): each
runtime patch's ``time`` says when its manager last changed it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.fielderrors import FieldError, invalid
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.xgboost import validate_xgboost

__all__ = ["RUNTIME_KINDS", "managed_elsewhere", "runtime_key", "set_defaults",
           "stamp_runtime_patches", "validate"]

RUNTIME_KINDS = (constants.CLUSTER_RUNTIME_KIND, constants.RUNTIME_KIND)
"""The runtime kinds of ``trainer.kubeflow.org`` a TrainJob may name."""


def set_defaults(trainjob: Mapping[str, Any]) -> dict[str, Any]:
    """A defaulted deep copy."""
    out: dict[str, Any] = copy.deepcopy(dict(trainjob))
    spec = out.setdefault("spec", {})
    ref = spec.setdefault("runtimeRef", {})
    ref.setdefault("apiGroup", constants.GROUP)
    ref.setdefault("kind", constants.CLUSTER_RUNTIME_KIND)
    spec.setdefault("suspend", False)
    spec.setdefault("managedBy", constants.MANAGED_BY_TRAINER)
    return out


def managed_elsewhere(trainjob: Mapping[str, Any]) -> bool:
    """``trainjob.IsManagedByExternalController``: ``managedBy`` set to another controller."""
    managed_by = (trainjob.get("spec") or {}).get("managedBy")
    return managed_by is not None and managed_by != constants.MANAGED_BY_TRAINER


def runtime_key(trainjob: Mapping[str, Any]) -> str:
    """The runtime registry key, ``Kind.group`` (``schema.GroupKind.String``)."""
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    kind, group = ref.get("kind", ""), ref.get("apiGroup", "")
    return f"{kind}.{group}" if group else kind


def validate(trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any]) -> list[FieldError]:
    """The torch plugin's checks (no ``PET_*`` variable of torchrun in ``trainer.env``), then
    the XGBoost plugin's (no ``DMLC_*`` one)."""
    errors: list[FieldError] = []
    trainer = (trainjob.get("spec") or {}).get("trainer") or {}
    if (runtime_spec.get("mlPolicy") or {}).get("torch") is not None and trainer:
        reserved = sorted({e.get("name", "") for e in trainer.get("env") or []}
                          & constants.TORCH_RESERVED_ENV_NAMES)
        if reserved:
            errors.append(invalid(
                "spec.trainer.env", trainer.get("env"),
                f"must not have reserved envs, invalid envs configured: [{' '.join(reserved)}]"))
    return errors + validate_xgboost(trainjob, runtime_spec)


def stamp_runtime_patches(trainjob: Mapping[str, Any], old: Mapping[str, Any] | None,
                          now: str) -> dict[str, Any]:
    """A copy of ``trainjob`` whose ``spec.runtimePatches[].time`` are set as upstream's
    defaulter sets them: on create, ``now`` where a patch has none; on update, a patch whose
    manager had one in ``old`` keeps the old patch's time when nothing else in it changed,
    else gets ``now``; a new manager's patch gets ``now`` where it has none."""
    out: dict[str, Any] = copy.deepcopy(dict(trainjob))
    patches = (out.get("spec") or {}).get("runtimePatches")
    if not isinstance(patches, list):
        return out
    before: dict[str, Mapping[str, Any]] = {}
    if old is not None:
        for patch in (old.get("spec") or {}).get("runtimePatches") or []:
            if isinstance(patch, Mapping):
                before[str(patch.get("manager", ""))] = patch
    for patch in patches:
        if not isinstance(patch, dict):
            continue
        previous = before.get(str(patch.get("manager", "")))
        if previous is None:
            if patch.get("time") is None:
                patch["time"] = now
        elif _without_time(previous) == _without_time(patch):
            if previous.get("time") is None:
                patch.pop("time", None)
            else:
                patch["time"] = previous["time"]
        else:
            patch["time"] = now
    return out


def _without_time(patch: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in patch.items() if key != "time"}
