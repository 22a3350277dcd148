"""Validation of a ``kubeflow.org/v1`` MPIJob, as training-operator v1.9's
``ValidateV1MpiJobSpec`` does it (in ``Reconcile``, on the object before defaulting).

:func:`validate` returns at most one :class:`SpecError`, the first problem upstream would
return, with upstream's message (``str(error)``; the controller's event reads ``MPIJob failed
validation because <message>``) and the field it is about (``error.field``). Replica specs are
checked in the order the object lists them (Go visits its map in random order). The checks:

1. ``MPIReplicaSpecs is not valid``: no ``spec.mpiReplicaSpecs``;
2. for each replica spec: ``MPIReplicaSpecs is not valid: containers definition expected in
   <T>`` (null, or no containers); ``MPIReplicaType is <T> but must be one of [Launcher
   Worker]``; for each container ``MPIReplicaSpec is not valid: Image is undefined in the
   container of <T>`` and ``... ImageName is undefined ...`` (no ``name``); for the Launcher
   ``MPIReplicaSpec is not valid: There must be only 1 launcher replica`` (replicas set and not
   1);
3. ``MPIReplicaSpec is not valid: Master ReplicaSpec must be present``: no Launcher.

A part of the wrong JSON type (the API server's schema rejects those) reads as unset. Never
raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_list, as_record, as_str
from mpi_controller.mpi import constants

__all__ = ["SpecError", "validate"]

_TYPES = (constants.REPLICA_TYPE_LAUNCHER, constants.REPLICA_TYPE_WORKER)


@dataclass(frozen=True)
class SpecError:
    """One validation error: upstream's message, and the field path it is about."""

    field: str
    message: str

    def __str__(self) -> str:
        return self.message

    def with_field(self) -> str:
        """``<field>: <message>``, for users who need to find the field."""
        return f"{self.field}: {self.message}"


def _replica_error(rtype: str, value: object) -> SpecError | None:
    path = f"spec.mpiReplicaSpecs[{rtype}]"
    cpath = f"{path}.template.spec.containers"
    containers = as_list(as_dict(as_record(as_record(value).get("template")).get("spec"))
                         .get("containers"))
    if not isinstance(value, dict) or not containers:
        return SpecError(cpath, f"MPIReplicaSpecs is not valid: containers definition expected "
                                f"in {rtype}")
    if rtype not in _TYPES:
        return SpecError(path, f"MPIReplicaType is {rtype} but must be one of "
                               f"[{' '.join(_TYPES)}]")
    for i, container in enumerate(containers):
        container = as_dict(container)
        if not as_str(container.get("image")):
            return SpecError(f"{cpath}[{i}].image", "MPIReplicaSpec is not valid: Image is "
                                                    f"undefined in the container of {rtype}")
        if not as_str(container.get("name")):
            return SpecError(f"{cpath}[{i}].name", "MPIReplicaSpec is not valid: ImageName is "
                                                   f"undefined in the container of {rtype}")
    replicas = value.get("replicas")
    if rtype == constants.REPLICA_TYPE_LAUNCHER and replicas is not None and replicas != 1:
        return SpecError(f"{path}.replicas",
                         "MPIReplicaSpec is not valid: There must be only 1 launcher replica")
    return None


def validate(job: object) -> list[SpecError]:
    """The first validation error of ``job`` as upstream finds it (empty when valid)."""
    spec: Any = as_dict(as_record(job).get("spec"))
    specs = spec.get("mpiReplicaSpecs")
    if not isinstance(specs, dict):
        return [SpecError("spec.mpiReplicaSpecs", "MPIReplicaSpecs is not valid")]
    for rtype, value in specs.items():
        error = _replica_error(str(rtype), value)
        if error is not None:
            return [error]
    if constants.REPLICA_TYPE_LAUNCHER not in specs:
        return [SpecError(f"spec.mpiReplicaSpecs[{constants.REPLICA_TYPE_LAUNCHER}]",
                          "MPIReplicaSpec is not valid: Master ReplicaSpec must be present")]
    return []
