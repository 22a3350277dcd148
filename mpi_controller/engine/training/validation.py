"""Validation the ``kubeflow.org/v1`` kinds' webhooks share (training-operator v1.9
``pkg/common/util/webhooks.go`` and the per-kind webhooks), with upstream's messages:

* :func:`validate_name`: ``metadata.name: Invalid value: "<name>": should match: <problems>``
  (a DNS-1035 label);
* :func:`validate_run_policy`: ``spec.runPolicy.managedBy`` must be
  ``kubeflow.org/training-operator`` or ``kueue.x-k8s.io/multikueue`` (Unsupported value);
  :func:`validate_run_policy_update`: it is immutable;
* :func:`validate_replica_specs`: the replica specs are required (``spec.<field>: Required
  value: must be required``); each one's type is one of the kind's (``spec.<field>[<type>]:
  Unsupported value``), when the kind lists them; each needs containers
  (``...template.spec.containers: Required value: must be specified``), each container an image
  (``...containers[i].image: Required value: must be required``) and one container named after
  the kind's default (``must have at least one container with name <name>``, the name in Go's
  quotes for PaddleJob); then the kind's own checks of the replica spec, if any.

:func:`validate_job` and :func:`validate_job_update` are a kind's webhook made of them (every
kind's but JAXJob's, which does not check ``managedBy``): the name, ``managedBy`` (on update:
first unchanged, then supported), then the kind's checks of its spec.

Errors come in the order of the replica specs as written (upstream walks a Go map).

What upstream admits but cannot run as meant (reported by a Warning Event, the job still
run: :mod:`mpi_controller.engine.admitted`):

* :func:`negative_replicas`: ``spec.<field>[<type>].replicas: Invalid value: -3: must be
  greater than or equal to 0``. Upstream's common engine sizes such a replica type's pods as
  for ``replicas: 0`` (not compared by the differential run for every kind); TFJob's own
  reconcile cannot run them (``tensorflow.v1.validate_sync``).
* :func:`unknown_replica_types`: ``spec.<field>[<type>]: Unsupported value``, for a kind whose
  webhook does not check the types (upstream makes their pods anyway).
* :func:`run_policy_problems`, every kind: the ``runPolicy`` fields neither upstream's schema
  nor its webhooks check. ``cleanPodPolicy`` other than ``All``, ``Running`` or ``None``
  (Unsupported value; the engine, as upstream's, then deletes every pod of the finished job, as
  ``All`` does), and ``backoffLimit``, ``activeDeadlineSeconds`` or ``ttlSecondsAfterFinished``
  below 0 (Invalid value: the job fails at once, past its backoff limit before any pod failed;
  fails as past its deadline as soon as it starts; is deleted as soon as it finishes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from mpi_controller.engine.training.api import (
    CLEAN_POD_POLICY_ALL,
    CLEAN_POD_POLICY_NONE,
    CLEAN_POD_POLICY_RUNNING,
    KUBEFLOW_JOBS_CONTROLLER,
    MULTIKUEUE_CONTROLLER,
)
from mpi_controller.kube.fielderrors import FieldError, go_quote, invalid, not_supported, required
from mpi_controller.kube.jsonvalue import as_dict, as_list, as_record, as_str
from mpi_controller.kube.names import is_dns1035_label

__all__ = ["ReplicaCheck", "SpecCheck", "negative_replicas", "replica_container_errors",
           "run_policy_problems", "unknown_replica_types", "validate_job", "validate_job_update",
           "validate_name", "validate_replica_specs", "validate_run_policy",
           "validate_run_policy_update"]

MANAGED_BY_PATH = "spec.runPolicy.managedBy"
SUPPORTED_MANAGERS = (KUBEFLOW_JOBS_CONTROLLER, MULTIKUEUE_CONTROLLER)

ReplicaCheck = Callable[[str, object, str], list[FieldError]]
"""A kind's own checks of one replica spec: ``(type, replica spec, its path)``, the errors."""
SpecCheck = Callable[[Mapping[str, Any]], list[FieldError]]
"""A kind's checks of a job's spec: the errors."""


def validate_name(job: Mapping[str, Any]) -> list[FieldError]:
    name = as_str(as_record(job.get("metadata")).get("name"))
    problems = is_dns1035_label(name)
    if not problems:
        return []
    return [invalid("metadata.name", name, f"should match: {','.join(problems)}")]


def _managed_by(job: Mapping[str, Any]) -> object:
    return as_record(as_record(job.get("spec")).get("runPolicy")).get("managedBy")


def validate_run_policy(job: Mapping[str, Any]) -> list[FieldError]:
    manager = _managed_by(job)
    if manager is None or manager in SUPPORTED_MANAGERS:
        return []
    return [not_supported(MANAGED_BY_PATH, manager, SUPPORTED_MANAGERS)]


def validate_run_policy_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    if _managed_by(old) == _managed_by(new):
        return []
    return [invalid(MANAGED_BY_PATH, _managed_by(new), "field is immutable")]


def validate_replica_specs(job: Mapping[str, Any], specs_field: str, container_name: str, *,
                           types: tuple[str, ...] | None = None, quote_name: bool = False,
                           check: ReplicaCheck | None = None) -> list[FieldError]:
    """The replica spec checks of the module doc for ``spec.<specs_field>``: ``types`` the
    supported replica types (``None``: any), ``quote_name`` the container name in Go's quotes,
    ``check`` the kind's own."""
    path = f"spec.{specs_field}"
    specs = as_record(job.get("spec")).get(specs_field)
    if not isinstance(specs, dict):
        return [required(path, "must be required")]
    errors: list[FieldError] = []
    for rtype, spec in specs.items():
        role_path = f"{path}[{rtype}]"
        if types is not None and rtype not in types:
            errors.append(not_supported(role_path, rtype, types))
        errors += replica_container_errors(spec, role_path, container_name,
                                           quote_name=quote_name)
        errors += check(rtype, spec, role_path) if check is not None else []
    return errors


def replica_container_errors(spec: object, role_path: str, container_name: str, *,
                             quote_name: bool = False) -> list[FieldError]:
    """The container checks of the module doc for one replica spec at ``role_path``."""
    containers_path = f"{role_path}.template.spec.containers"
    pod_spec = as_dict(as_record(as_record(spec).get("template")).get("spec"))
    containers = as_list(pod_spec.get("containers"))
    errors: list[FieldError] = []
    if not containers:
        errors.append(required(containers_path, "must be specified"))
    named = False
    for index, container in enumerate(containers):
        if not as_str(as_record(container).get("image")):
            errors.append(required(f"{containers_path}[{index}].image", "must be required"))
        named = named or as_record(container).get("name") == container_name
    if not named:
        shown = go_quote(container_name) if quote_name else container_name
        errors.append(required(containers_path,
                               f"must have at least one container with name {shown}"))
    return errors


def validate_job(job: Mapping[str, Any], spec_errors: SpecCheck) -> list[FieldError]:
    """The errors of a new job (module doc): its name, ``managedBy``, ``spec_errors(job)``."""
    return [*validate_name(job), *validate_run_policy(job), *spec_errors(job)]


def validate_job_update(old: Mapping[str, Any], new: Mapping[str, Any],
                        spec_errors: SpecCheck) -> list[FieldError]:
    """The errors of an update from ``old`` to ``new`` (module doc)."""
    return [*validate_name(new), *validate_run_policy_update(old, new),
            *validate_run_policy(new), *spec_errors(new)]



def negative_replicas(job: Mapping[str, Any], specs_field: str) -> list[FieldError]:
    """``replicas`` below 0 in any replica spec of ``spec.<specs_field>`` (module doc)."""
    errors: list[FieldError] = []
    for rtype, spec in as_dict(as_record(job.get("spec")).get(specs_field)).items():
        replicas = as_record(spec).get("replicas")
        if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas < 0:
            errors.append(invalid(f"spec.{specs_field}[{rtype}].replicas", replicas,
                                  "must be greater than or equal to 0"))
    return errors


def unknown_replica_types(job: Mapping[str, Any], specs_field: str,
                          types: tuple[str, ...]) -> list[FieldError]:
    """Replica types of ``spec.<specs_field>`` that are none of ``types`` (module doc)."""
    specs = as_dict(as_record(job.get("spec")).get(specs_field))
    return [not_supported(f"spec.{specs_field}[{rtype}]", rtype, types)
            for rtype in specs if rtype not in types]


CLEAN_POD_POLICIES = (CLEAN_POD_POLICY_ALL, CLEAN_POD_POLICY_RUNNING, CLEAN_POD_POLICY_NONE)
_NON_NEGATIVE = (
    ("backoffLimit", "the job fails at once, past its backoff limit"),
    ("activeDeadlineSeconds", "the job fails as past its deadline as soon as it starts"),
    ("ttlSecondsAfterFinished", "the job is deleted as soon as it finishes"),
)


def run_policy_problems(job: Mapping[str, Any]) -> list[FieldError]:
    """What of ``spec.runPolicy`` nothing upstream checks cannot do what was meant (module doc):
    an unknown ``cleanPodPolicy``, and ``backoffLimit``, ``activeDeadlineSeconds`` or
    ``ttlSecondsAfterFinished`` below 0, in that order."""
    policy = as_dict(as_record(job.get("spec")).get("runPolicy"))
    errors: list[FieldError] = []
    clean = policy.get("cleanPodPolicy")
    if isinstance(clean, str) and clean not in CLEAN_POD_POLICIES:
        error = not_supported("spec.runPolicy.cleanPodPolicy", clean, CLEAN_POD_POLICIES)
        errors.append(replace(error, detail=f"{error.detail}: every pod is deleted when the job "
                                            "finishes, as with All"))
    for name, effect in _NON_NEGATIVE:
        value = policy.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errors.append(invalid(f"spec.runPolicy.{name}", value,
                                  f"must be greater than or equal to 0: {effect}"))
    return errors
