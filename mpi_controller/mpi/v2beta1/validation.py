"""Validation of an MPIJob, as mpi-operator v0.8.2 ``ValidateMPIJob`` does it.

:func:`validate` takes a (normally defaulted) MPIJob dict and returns the list of
:class:`~mpi_controller.kube.fielderrors.FieldError` in upstream's order, with upstream's field
paths and messages:

1. ``metadata.name``: ``<name>-worker-<R-1>`` must be a DNS-1035 label;
2. ``spec.mpiReplicaSpecs``: present; Launcher present, then for Launcher and Worker:
   ``replicas`` set, ``restartPolicy`` ∈ {Never, OnFailure}, at least one container; Launcher
   replicas == 1, Worker replicas >= 1;
3. ``spec.slotsPerWorker``: set and >= 0;
4. ``spec.runPolicy``: cleanPodPolicy set and ∈ {All, None, Running}; ttlSecondsAfterFinished,
   activeDeadlineSeconds, backoffLimit >= 0; managedBy one of the two known controllers;
5. ``spec.sshAuthMountPath`` non-empty;
6. ``spec.mpiImplementation`` ∈ {Intel, MPICH, OpenMPI}.

Beyond upstream (whose Go decoder rejects such objects before validation runs), a field of the
wrong JSON type gives ``Invalid value: <v>: must be of type <t>`` at the place where upstream
checks that field; type checks of fields upstream does not validate come last. Then the opt-in
annotations of :mod:`mpi_controller.mpi.features`, when they are set. It never raises.

:func:`admitted_problems`: what upstream admits and runs anyway, reported by a Warning Event
(:mod:`mpi_controller.engine.admitted`): ``spec.slotsPerWorker: 0`` (the hostfile gives every
worker ``slots=0`` and the launcher is told it has no slots, so ``mpirun`` finds nowhere to
start a process).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mpi_controller.kube.fielderrors import FieldError, invalid, not_supported, required
from mpi_controller.kube.jsonvalue import as_dict, as_int, as_record, is_int
from mpi_controller.kube.names import is_dns1035_label
from mpi_controller.mpi import constants
from mpi_controller.mpi.features import validate_annotations

__all__ = ["admitted_problems", "validate"]

_NONNEGATIVE = "must be greater than or equal to 0"

_CLEAN_POD_POLICIES = sorted(constants.CLEAN_POD_POLICIES)
_MPI_IMPLEMENTATIONS = sorted(constants.MPI_IMPLEMENTATIONS)
_RESTART_POLICIES = sorted(constants.VALID_RESTART_POLICIES)
_MANAGED_BY = sorted(constants.MANAGED_BY_VALUES)

_Errors = list[FieldError]


def _type_error(path: str, value: object, json_type: str) -> FieldError:
    return invalid(path, value, f"must be of type {json_type}")


def _validate_name(job: dict[str, Any], spec: dict[str, Any]) -> _Errors:
    name = as_record(job.get("metadata")).get("name")
    name = name if isinstance(name, str) else ""
    worker = as_dict(as_record(spec.get("mpiReplicaSpecs")).get(constants.REPLICA_TYPE_WORKER))
    replicas = as_int(worker.get("replicas"))
    count = replicas if replicas is not None and replicas > 0 else 1
    host = f"{name}-worker-{count - 1}"
    problems = is_dns1035_label(host)
    if not problems:
        return []
    detail = (
        f'will not able to create pod and service with invalid DNS label "{host}": '
        + ", ".join(problems)
    )
    return [invalid("metadata.name", name, detail)]


def _validate_containers(template: object, path: str) -> _Errors:
    if template is not None and not isinstance(template, dict):
        return [_type_error(f"{path}.template", template, "object")]
    spec = as_record(template).get("spec")
    if spec is not None and not isinstance(spec, dict):
        return [_type_error(f"{path}.template.spec", spec, "object")]
    containers = as_record(spec).get("containers")
    cpath = f"{path}.template.spec.containers"
    if containers is not None and not isinstance(containers, list):
        return [_type_error(cpath, containers, "array")]
    if not containers:
        return [required(cpath, "must define at least one container")]
    return [
        _type_error(f"{cpath}[{i}]", item, "object")
        for i, item in enumerate(containers)
        if not isinstance(item, dict)
    ]


def _validate_replica(spec: dict[str, Any], path: str) -> _Errors:
    errs: _Errors = []
    replicas = spec.get("replicas")
    if replicas is None:
        errs.append(required(f"{path}.replicas", "must define number of replicas"))
    elif not is_int(replicas):
        errs.append(_type_error(f"{path}.replicas", replicas, "integer"))
    restart = spec.get("restartPolicy", "")
    if restart not in _RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", restart, _RESTART_POLICIES))
    errs.extend(_validate_containers(spec.get("template"), path))
    return errs


def _validate_role(
    specs: dict[str, Any], role: str, check: Callable[[int], str | None], needed: bool
) -> _Errors:
    path = f"spec.mpiReplicaSpecs[{role}]"
    spec = specs.get(role)
    if spec is None:
        return [required(path, f"must have {role} replica spec")] if needed else []
    if not isinstance(spec, dict):
        return [_type_error(path, spec, "object")]
    errs = _validate_replica(spec, path)
    replicas = as_int(spec.get("replicas"))
    detail = check(replicas) if replicas is not None else None
    if detail is not None:
        errs.append(invalid(f"{path}.replicas", replicas, detail))
    return errs


def _validate_replica_specs(spec: dict[str, Any]) -> _Errors:
    specs = spec.get("mpiReplicaSpecs")
    if specs is None:
        return [required("spec.mpiReplicaSpecs", "must have replica specs")]
    if not isinstance(specs, dict):
        return [_type_error("spec.mpiReplicaSpecs", specs, "object")]
    errs = _validate_role(
        specs, constants.REPLICA_TYPE_LAUNCHER, lambda n: None if n == 1 else "must be 1", True
    )
    errs += _validate_role(
        specs,
        constants.REPLICA_TYPE_WORKER,
        lambda n: None if n > 0 else "must be greater than or equal to 1",
        False,
    )
    return errs


def _nonnegative(obj: dict[str, Any], key: str, path: str, *, needed: str = "") -> _Errors:
    value = obj.get(key)
    if value is None:
        return [required(path, needed)] if needed else []
    if not is_int(value):
        return [_type_error(path, value, "integer")]
    return [invalid(path, value, _NONNEGATIVE)] if value < 0 else []


def _validate_run_policy(spec: dict[str, Any]) -> _Errors:
    raw = spec.get("runPolicy")
    if raw is not None and not isinstance(raw, dict):
        return [_type_error("spec.runPolicy", raw, "object")]
    policy = as_dict(raw)
    errs: _Errors = []
    clean = policy.get("cleanPodPolicy")
    if clean is None:
        errs.append(required("spec.runPolicy.cleanPodPolicy", "must have clean Pod policy"))
    elif clean not in _CLEAN_POD_POLICIES:
        errs.append(not_supported("spec.runPolicy.cleanPodPolicy", clean, _CLEAN_POD_POLICIES))
    for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        errs += _nonnegative(policy, key, f"spec.runPolicy.{key}")
    managed_by = policy.get("managedBy")
    if managed_by is not None and managed_by not in _MANAGED_BY:
        errs.append(not_supported("spec.runPolicy.managedBy", managed_by, _MANAGED_BY))
    return errs


def _validate_extra_types(spec: dict[str, Any]) -> _Errors:
    """Type checks of fields upstream does not validate (its decoder would reject them)."""
    errs: _Errors = []
    checks: list[tuple[object, str, type, str]] = [
        (spec.get("runLauncherAsWorker"), "spec.runLauncherAsWorker", bool, "boolean"),
        (spec.get("launcherCreationPolicy"), "spec.launcherCreationPolicy", str, "string"),
    ]
    policy = as_dict(spec.get("runPolicy"))
    checks.append((policy.get("suspend"), "spec.runPolicy.suspend", bool, "boolean"))
    checks.append(
        (policy.get("schedulingPolicy"), "spec.runPolicy.schedulingPolicy", dict, "object")
    )
    for value, path, expected, name in checks:
        if value is not None and not isinstance(value, expected):
            errs.append(_type_error(path, value, name))
    errs += _validate_scheduling_policy(as_dict(policy.get("schedulingPolicy")))
    return errs


def _validate_scheduling_policy(policy: dict[str, Any]) -> _Errors:
    base = "spec.runPolicy.schedulingPolicy"
    errs: _Errors = []
    for key in ("minAvailable", "scheduleTimeoutSeconds"):
        value = policy.get(key)
        if value is not None and not is_int(value):
            errs.append(_type_error(f"{base}.{key}", value, "integer"))
    for key in ("queue", "priorityClass"):
        value = policy.get(key)
        if value is not None and not isinstance(value, str):
            errs.append(_type_error(f"{base}.{key}", value, "string"))
    resources = policy.get("minResources")
    if resources is not None and not isinstance(resources, dict):
        errs.append(_type_error(f"{base}.minResources", resources, "object"))
    return errs


def _validate_spec(spec: dict[str, Any]) -> _Errors:
    errs = _validate_replica_specs(spec)
    errs += _nonnegative(
        spec, "slotsPerWorker", "spec.slotsPerWorker", needed="must have number of slots per worker"
    )
    errs += _validate_run_policy(spec)
    mount = spec.get("sshAuthMountPath")
    if mount is None or mount == "":
        errs.append(required("spec.sshAuthMountPath", "must have a mount path for SSH credentials"))
    elif not isinstance(mount, str):
        errs.append(_type_error("spec.sshAuthMountPath", mount, "string"))
    impl = spec.get("mpiImplementation", "")
    if impl not in _MPI_IMPLEMENTATIONS:
        errs.append(not_supported("spec.mpiImplementation", impl, _MPI_IMPLEMENTATIONS))
    return errs + _validate_extra_types(spec)


def validate(job: object) -> list[FieldError]:
    """The validation errors of ``job`` in upstream's order (empty when valid). Never raises."""
    if not isinstance(job, dict):
        return [_type_error("<root>", job, "object")]
    raw_spec = job.get("spec")
    if raw_spec is not None and not isinstance(raw_spec, dict):
        return [*_validate_name(job, {}), _type_error("spec", raw_spec, "object")]
    spec = as_dict(raw_spec)
    return _validate_name(job, spec) + _validate_spec(spec) + validate_annotations(job)


def admitted_problems(job: dict[str, Any]) -> list[FieldError]:
    """The problems of a valid (defaulted) MPIJob that upstream runs anyway (module doc)."""
    slots = as_record(job.get("spec")).get("slotsPerWorker")
    if is_int(slots) and slots == 0:
        return [invalid("spec.slotsPerWorker", 0,
                        "must be greater than 0: mpirun has no slot to start a process in")]
    return []
