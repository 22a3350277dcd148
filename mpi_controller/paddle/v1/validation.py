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
    validate_name,
    validate_run_policy,
    validate_run_policy_update,
)
from mpi_controller.kube.fielderrors import FieldError, go_quote, not_supported, required
from mpi_controller.kube.jsonvalue import as_dict, as_list, as_str
from mpi_controller.paddle.constants import DEFAULT_CONTAINER_NAME, REPLICA_TYPES, SPECS_FIELD

__all__ = ["validate", "validate_update"]

_SPECS_PATH = f"spec.{SPECS_FIELD}"
_NO_DEFAULT_CONTAINER = (f"must have at least one container with name "
                         f"{go_quote(DEFAULT_CONTAINER_NAME)}")


def _replica_errors(rtype: str, replica: object) -> list[FieldError]:
    role_path = f"{_SPECS_PATH}[{rtype}]"
    containers_path = f"{role_path}.template.spec.containers"
    errors: list[FieldError] = []
    if rtype not in REPLICA_TYPES:
        errors.append(not_supported(role_path, rtype, REPLICA_TYPES))
    pod_spec = as_dict(as_dict(as_dict(replica).get("template")).get("spec"))
    containers = as_list(pod_spec.get("containers"))
    if not containers:
        errors.append(required(containers_path, "must be specified"))
    named = False
    for index, container in enumerate(containers):
        if not as_str(as_dict(container).get("image")):
            errors.append(required(f"{containers_path}[{index}].image", "must be required"))
        named = named or as_dict(container).get("name") == DEFAULT_CONTAINER_NAME
    if not named:
        errors.append(required(containers_path, _NO_DEFAULT_CONTAINER))
    return errors


def _spec_errors(job: Mapping[str, Any]) -> list[FieldError]:
    specs = as_dict(job.get("spec")).get(SPECS_FIELD)
    if not isinstance(specs, dict):
        return [required(_SPECS_PATH, "must be required")]
    errors: list[FieldError] = []
    for rtype, replica in specs.items():
        errors += _replica_errors(rtype, replica)
    return errors


def validate(job: Mapping[str, Any]) -> list[FieldError]:
    """The errors of a new PaddleJob (empty when valid)."""
    return [*validate_name(job), *validate_run_policy(job), *_spec_errors(job)]


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """The errors of an update from ``old`` to ``new``."""
    return [*validate_name(new), *validate_run_policy_update(old, new),
            *validate_run_policy(new), *_spec_errors(new)]
