"""``validatePaddleJob`` (training-operator v1.9 ``pkg/webhooks/paddlepaddle``), with its
messages:

* ``metadata.name`` is a DNS-1035 label;
* on update, ``spec.runPolicy.managedBy`` is unchanged (upstream's Paddle webhook compares the
  old job with the new one, so this check does fire, unlike PyTorchJob's);
* ``spec.runPolicy.managedBy`` is supported;
* ``spec.paddleReplicaSpecs`` is required (``Required value: must be required``); per replica
  type, in the order written: the type is ``Master`` or ``Worker`` (``Unsupported value``);
  it has containers (``...template.spec.containers: Required value: must be specified``), each
  with an image (``...containers[<i>].image: Required value: must be required``), one of them
  named ``paddle`` (``Required value: must have at least one container with name "paddle"``,
  the name quoted as upstream's ``%q`` prints it).

There are no replica-count checks (any number of Masters and Workers, zero included), no
elastic-policy checks and no warnings. A replica spec that is not an object is reported as
having no containers (upstream's webhook dereferences the nil spec there).

The controller runs :func:`validate` on the defaulted job on every sync (an invalid job gets a
Warning event naming the field and is not reconciled); the validating webhook runs the same
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
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.paddle.constants import DEFAULT_CONTAINER_NAME, REPLICA_TYPES, SPECS_FIELD

__all__ = ["validate", "validate_update"]


def _spec_errors(job: Mapping[str, Any]) -> list[FieldError]:
    return validate_replica_specs(job, SPECS_FIELD, DEFAULT_CONTAINER_NAME, types=REPLICA_TYPES,
                                  quote_name=True)


def validate(job: Mapping[str, Any]) -> list[FieldError]:
    """The errors of a new PaddleJob (empty when valid)."""
    return validate_job(job, _spec_errors)


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """The errors of an update from ``old`` to ``new``."""
    return validate_job_update(old, new, _spec_errors)
