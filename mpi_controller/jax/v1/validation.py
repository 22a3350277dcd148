"""``validateJAXJob`` (training-operator v1.9 ``pkg/webhooks/jax``), with its messages:

* ``metadata.name`` is a DNS-1035 label;
* ``spec.jaxReplicaSpecs`` is required (``Required value: must be required``; an empty map
  passes); per replica type, in the order written: the type is ``Worker`` (``Unsupported
  value: "<type>": supported values: "Worker"``; on the job as submitted, so ``worker`` is
  refused there though the defaults would rename it), then containers, each with an image,
  one named ``jax``.

Unlike the other kinds' webhooks, upstream's JAXJob webhook does not check
``spec.runPolicy.managedBy`` (any value is admitted, and may change on update); an update is
judged as a new job.

The controller runs :func:`validate` on the defaulted job on every sync (an invalid job gets a
Warning event naming the field and is not reconciled); a validating webhook can run the same
functions on the object as submitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.validation import validate_name, validate_replica_specs
from mpi_controller.jax.constants import DEFAULT_CONTAINER_NAME, REPLICA_TYPES, SPECS_FIELD
from mpi_controller.kube.fielderrors import FieldError

__all__ = ["validate", "validate_update"]


def validate(job: Mapping[str, Any]) -> list[FieldError]:
    """The errors of a new JAXJob (empty when valid)."""
    return [*validate_name(job), *validate_replica_specs(job, SPECS_FIELD, DEFAULT_CONTAINER_NAME,
                                                         types=REPLICA_TYPES)]


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """The errors of an update from ``old`` to ``new``: those of ``new`` alone."""
    return validate(new)
