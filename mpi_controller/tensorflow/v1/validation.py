"""``validateTFJob`` (training-operator v1.9 ``pkg/webhooks/tensorflow``), with its messages:

* ``metadata.name`` is a DNS-1035 label;
* ``spec.runPolicy.managedBy`` is supported (and, on update, unchanged);
* ``spec.tfReplicaSpecs`` is required; each replica has containers, each with an image, one of
  them named ``tensorflow``;
* ``spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role``.

:func:`admitted_problems`: what upstream admits and runs anyway, reported by a Warning Event
(:mod:`mpi_controller.engine.admitted`): a replica type that is none of TFJob's (``Boss``: its
pods are made and named in ``TF_CONFIG``, nothing waits for them).

:func:`validate_sync`: what stops the controller from running a job: :func:`validate`'s errors
and ``replicas`` below 0, which upstream's webhook admits but its reconcile cannot run (it
panics building ``TF_CONFIG``, ``makeslice: cap out of range``, on every retry: no pod, no
Service, no status); here the job gets ``TFJobFailedValidation`` naming the field instead.

The controller runs it on every sync (an invalid job gets a Warning event naming the field and
is not reconciled); a validating webhook can run the same function on admission.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.validation import (
    negative_replicas,
    unknown_replica_types,
    validate_job,
    validate_job_update,
    validate_replica_specs,
)
from mpi_controller.kube.fielderrors import FieldError, forbidden
from mpi_controller.kube.jsonvalue import as_dict, as_record
from mpi_controller.tensorflow.constants import DEFAULT_CONTAINER_NAME, REPLICA_TYPES, SPECS_FIELD
from mpi_controller.tensorflow.v1.types import is_chief_or_master

__all__ = ["admitted_problems", "validate", "validate_sync", "validate_update"]


def _spec_errors(job: Mapping[str, Any]) -> list[FieldError]:
    errors = validate_replica_specs(job, SPECS_FIELD, DEFAULT_CONTAINER_NAME)
    specs = as_dict(as_record(job.get("spec")).get(SPECS_FIELD))
    if sum(1 for rtype in specs if is_chief_or_master(rtype)) > 1:
        errors.append(forbidden(f"spec.{SPECS_FIELD}",
                                "must not have more than 1 Chief or Master role"))
    return errors


def validate(job: Mapping[str, Any]) -> list[FieldError]:
    """The errors of a new TFJob (empty when valid)."""
    return validate_job(job, _spec_errors)


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """The errors of an update from ``old`` to ``new``."""
    return validate_job_update(old, new, _spec_errors)


def admitted_problems(job: Mapping[str, Any]) -> list[FieldError]:
    """The problems of a valid (defaulted) TFJob that upstream runs anyway (module doc)."""
    return unknown_replica_types(job, SPECS_FIELD, REPLICA_TYPES)


def validate_sync(job: Mapping[str, Any]) -> list[FieldError]:
    """The errors that keep the controller from running a TFJob (module doc)."""
    return [*validate(job), *negative_replicas(job, SPECS_FIELD)]
