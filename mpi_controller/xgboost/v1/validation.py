"""``validateXGBoostJob`` (training-operator v1.9 ``pkg/webhooks/xgboost``), with its messages:

* ``metadata.name`` is a DNS-1035 label;
* ``spec.runPolicy.managedBy`` is supported (and, on update, unchanged: this webhook compares
  the old job with the new one);
* ``spec.xgbReplicaSpecs`` is required (``Required value: must be required``, when absent);
  per replica type, in the order written: the type is ``Master`` or ``Worker`` (``Unsupported
  value``); containers (``...template.spec.containers: Required value: must be specified``),
  each with an image (``...containers[<i>].image: Required value: must be required``), one
  named ``xgboost`` (``must have at least one container with name xgboost``); the Master's
  ``replicas`` is 1 (``spec.xgbReplicaSpecs[Master].replicas: Forbidden: must be 1``, also
  when unset, as upstream checks the object as submitted);
* a Master is required: ``spec.xgbReplicaSpecs[Master]: Required value: must be present``
  (last; also after ``must be required``).

The controller runs :func:`validate` on the defaulted job on every sync (an invalid job gets a
Warning event naming the field and is not reconciled); a validating webhook runs the same
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
from mpi_controller.kube.fielderrors import FieldError, forbidden, required
from mpi_controller.kube.jsonvalue import as_dict, as_int, as_record
from mpi_controller.xgboost.constants import (
    DEFAULT_CONTAINER_NAME,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPES,
    SPECS_FIELD,
)

__all__ = ["validate", "validate_update"]

_SPECS_PATH = f"spec.{SPECS_FIELD}"


def _master_replicas_errors(rtype: str, replica: object, role_path: str) -> list[FieldError]:
    if rtype == REPLICA_TYPE_MASTER and as_int(as_record(replica).get("replicas")) != 1:
        return [forbidden(f"{role_path}.replicas", "must be 1")]
    return []


def _spec_errors(job: Mapping[str, Any]) -> list[FieldError]:
    errors = validate_replica_specs(job, SPECS_FIELD, DEFAULT_CONTAINER_NAME, types=REPLICA_TYPES,
                                    check=_master_replicas_errors)
    if REPLICA_TYPE_MASTER not in as_dict(as_record(job.get("spec")).get(SPECS_FIELD)):
        errors.append(required(f"{_SPECS_PATH}[{REPLICA_TYPE_MASTER}]", "must be present"))
    return errors


def validate(job: Mapping[str, Any]) -> list[FieldError]:
    """The errors of a new XGBoostJob (empty when valid)."""
    return validate_job(job, _spec_errors)


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """The errors of an update from ``old`` to ``new``."""
    return validate_job_update(old, new, _spec_errors)
