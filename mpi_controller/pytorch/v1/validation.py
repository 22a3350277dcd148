"""``validatePyTorchJob`` (training-operator v1.9 ``pkg/webhooks/pytorch``), with its messages:

* ``metadata.name`` is a DNS-1035 label;
* ``spec.runPolicy.managedBy`` is supported (and, on update, unchanged: upstream's webhook
  compares the new job with itself, so its check never fires; :func:`validate_update` does
  compare);
* ``spec.elasticPolicy`` needs a Worker (``spec.pytorchReplicaSpecs[Worker]: Required value:
  must be configured if elastic policy is used``); the deprecated
  ``spec.elasticPolicy.nProcPerNode`` must not be set with ``spec.nprocPerNode``
  (``Forbidden: must not be used with spec.nprocPerNode``) and is reported by
  :func:`validation_warnings` (``spec.elasticPolicy.nProcPerNode is deprecated, use
  spec.nprocPerNode instead``);
* ``spec.pytorchReplicaSpecs`` is required; per replica type, in the order written: the type
  is ``Master`` or ``Worker`` (Unsupported value); containers, each with an image, one named
  ``pytorch``; the Master's ``replicas`` is 1 (``Forbidden: must be 1``; also when unset, as
  upstream checks the raw object), any other type's at least 1 (``Forbidden: must be at least
  1``).

:func:`admitted_problems`: what upstream admits and runs anyway, reported by a Warning Event
(:mod:`mpi_controller.engine.admitted`): ``spec.elasticPolicy.minReplicas`` above
``maxReplicas`` (``PET_NNODES`` is ``<min>:<max>``, which torchrun refuses; with metrics the
API server refuses such an HPA). ``replicas`` below 0 are refused by :func:`validate` already.

The controller runs :func:`validate` on the defaulted job on every sync (an invalid job gets a
Warning event naming the field and is not reconciled); a validating webhook can run the same
functions on the object as submitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.validation import (
    validate_job,
    validate_job_update,
    validate_replica_specs,
)
from mpi_controller.kube.fielderrors import FieldError, forbidden, invalid, required
from mpi_controller.kube.jsonvalue import as_dict, as_int, as_record
from mpi_controller.pytorch.constants import (
    DEFAULT_CONTAINER_NAME,
    ELASTIC_POLICY,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
    REPLICA_TYPES,
    SPECS_FIELD,
)

__all__ = ["admitted_problems", "validate", "validate_update", "validation_warnings"]

_SPECS_PATH = f"spec.{SPECS_FIELD}"
_ELASTIC_NPROC_PATH = f"spec.{ELASTIC_POLICY}.nProcPerNode"
_NPROC_PATH = "spec.nprocPerNode"


def _elastic_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    policy = spec.get(ELASTIC_POLICY)
    if policy is None:
        return []
    errors: list[FieldError] = []
    if REPLICA_TYPE_WORKER not in as_dict(spec.get(SPECS_FIELD)):
        errors.append(required(f"{_SPECS_PATH}[{REPLICA_TYPE_WORKER}]",
                               "must be configured if elastic policy is used"))
    if as_record(policy).get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
        errors.append(forbidden(_ELASTIC_NPROC_PATH, f"must not be used with {_NPROC_PATH}"))
    return errors


def _replicas_errors(rtype: str, replica: object, role_path: str) -> list[FieldError]:
    replicas = as_int(as_record(replica).get("replicas"))
    if rtype == REPLICA_TYPE_MASTER:
        return [] if replicas == 1 else [forbidden(f"{role_path}.replicas", "must be 1")]
    if replicas is not None and replicas < 1:
        return [forbidden(f"{role_path}.replicas", "must be at least 1")]
    return []


def _spec_errors(job: Mapping[str, Any]) -> list[FieldError]:
    return [*_elastic_errors(as_dict(job.get("spec"))),
            *validate_replica_specs(job, SPECS_FIELD, DEFAULT_CONTAINER_NAME,
                                    types=REPLICA_TYPES, check=_replicas_errors)]


def validate(job: Mapping[str, Any]) -> list[FieldError]:
    """The errors of a new PyTorchJob (empty when valid)."""
    return validate_job(job, _spec_errors)


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """The errors of an update from ``old`` to ``new``."""
    return validate_job_update(old, new, _spec_errors)


def validation_warnings(job: Mapping[str, Any]) -> list[str]:
    """The admission warnings upstream's webhook returns with its answer."""
    spec = as_dict(job.get("spec"))
    if spec.get(ELASTIC_POLICY) is not None \
            and as_record(spec.get(ELASTIC_POLICY)).get("nProcPerNode") is not None:
        return [f"{_ELASTIC_NPROC_PATH} is deprecated, use {_NPROC_PATH} instead"]
    return []


def admitted_problems(job: Mapping[str, Any]) -> list[FieldError]:
    """The problems of a valid (defaulted) PyTorchJob that upstream runs anyway (module doc)."""
    errors: list[FieldError] = []
    policy = as_dict(as_record(job.get("spec")).get(ELASTIC_POLICY))
    low, high = as_int(policy.get("minReplicas")), as_int(policy.get("maxReplicas"))
    if low is not None and high is not None and low > high:
        errors.append(invalid(f"spec.{ELASTIC_POLICY}.minReplicas", low,
                              f"must be less than or equal to spec.{ELASTIC_POLICY}.maxReplicas "
                              f"({high})"))
    return errors
