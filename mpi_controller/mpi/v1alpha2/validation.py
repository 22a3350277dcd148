"""Validation of a ``kubeflow.org/v1alpha2`` MPIJob.

mpi-operator v0.2.3 validated only through its CRD's schema; :func:`validate` reports those
checks first, with the messages the API server gives for them:

1. ``spec.mpiReplicaSpecs.Launcher.replicas``: at least 1 and at most 1;
2. ``spec.mpiReplicaSpecs.Worker.replicas``: at least 1;
3. ``spec.slotsPerWorker``: at least 1,

e.g. ``spec.slotsPerWorker: Invalid value: 0: spec.slotsPerWorker in body should be greater
than or equal to 1``. Then what v0.2.3's controller needs to not crash (it dereferences them),
in the words of the ``v2beta1`` validation: ``spec.mpiReplicaSpecs`` present, a Launcher and a
Worker replica spec, the Worker's ``replicas`` set, at least one container in each template.
A part of the wrong JSON type (the schema rejects those) reads as unset. Never raises.
"""

from __future__ import annotations

from typing import Any

from mpi_controller.kube.fielderrors import FieldError, invalid, required
from mpi_controller.kube.jsonvalue import as_dict, as_list, as_record, is_int
from mpi_controller.mpi import constants

__all__ = ["validate"]

_ROLES = (constants.REPLICA_TYPE_LAUNCHER, constants.REPLICA_TYPE_WORKER)


def _bound(value: object, path: str, *, minimum: int, maximum: int | None = None
           ) -> list[FieldError]:
    if not is_int(value):
        return []
    assert isinstance(value, int)
    if value < minimum:
        return [invalid(path, value, f"{path} in body should be greater than or equal to "
                                     f"{minimum}")]
    if maximum is not None and value > maximum:
        return [invalid(path, value, f"{path} in body should be less than or equal to "
                                     f"{maximum}")]
    return []


def _schema_errors(spec: dict[str, Any], specs: dict[str, Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    for role in _ROLES:
        path = f"spec.mpiReplicaSpecs.{role}.replicas"
        replicas = as_record(specs.get(role)).get("replicas")
        upper = 1 if role == constants.REPLICA_TYPE_LAUNCHER else None
        errs += _bound(replicas, path, minimum=1, maximum=upper)
    return errs + _bound(spec.get("slotsPerWorker"), "spec.slotsPerWorker", minimum=1)


def _controller_errors(spec: dict[str, Any]) -> list[FieldError]:
    specs = spec.get("mpiReplicaSpecs")
    if not isinstance(specs, dict):
        return [required("spec.mpiReplicaSpecs", "must have replica specs")]
    errs: list[FieldError] = []
    for role in _ROLES:
        path = f"spec.mpiReplicaSpecs[{role}]"
        replica = specs.get(role)
        if not isinstance(replica, dict):
            errs.append(required(path, f"must have {role} replica spec"))
            continue
        if role == constants.REPLICA_TYPE_WORKER and replica.get("replicas") is None:
            errs.append(required(f"{path}.replicas", "must define number of replicas"))
        template = as_dict(as_record(replica.get("template")).get("spec"))
        if not as_list(template.get("containers")):
            errs.append(required(f"{path}.template.spec.containers",
                                 "must define at least one container"))
    return errs


def validate(job: object) -> list[FieldError]:
    """The validation errors of ``job`` (empty when valid)."""
    spec = as_dict(as_record(job).get("spec"))
    return (_schema_errors(spec, as_dict(spec.get("mpiReplicaSpecs")))
            + _controller_errors(spec))
