"""The TrainJob API of Trainer v2.3.0 (``pkg/apis/trainer/v1alpha1/trainjob_types.go``): its
defaults, the runtime a TrainJob names, and the checks the controller makes before it builds
anything (the torch plugin's ``Validate`` in
``pkg/runtime/framework/plugins/torch/torch.go``).

Defaults (the CRD's, applied again to the copy a sync works on): ``runtimeRef.apiGroup``
``trainer.kubeflow.org``, ``runtimeRef.kind`` ``ClusterTrainingRuntime``, ``suspend`` false,
``managedBy`` ``trainer.kubeflow.org/trainjob-controller``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.fielderrors import FieldError, invalid
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.xgboost import validate_xgboost

__all__ = ["RUNTIME_KINDS", "managed_elsewhere", "runtime_key", "set_defaults", "validate"]

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
