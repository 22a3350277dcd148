"""What Trainer v2.3.0's validating webhooks check (``pkg/webhooks``), as pure functions over
the objects they read; :mod:`.plugin` reads them and serves these.

* :func:`judge_training_runtime`, :func:`judge_cluster_training_runtime`
  (``trainingruntime_webhook.go``, ``clustertrainingruntime_webhook.go``): a replicated Job
  labelled as a TrainJob step (``trainer``, ``dataset-initializer``, ``model-initializer``)
  must have ``replicas`` 1 and the step's container (``node``, ``dataset-initializer``,
  ``model-initializer``); a TrainingRuntime is checked on create only, a
  ClusterTrainingRuntime on create and update, and on create it is warned about when labelled
  ``trainer.kubeflow.org/support: deprecated``.
* :func:`validate_trainjob`: the TrainJob's checks once its runtime is known
  (``pkg/runtime/core`` ``ValidateObjects``: the runtime info with the TrainJob's patches
  merged, then each plugin's ``Validate``): the JobSet plugin's (the initializers' Jobs,
  containers and volume mounts; the runtime patches' managers, targets and envs; patches
  changed only while suspended and while no replicated Job of the JobSet is active), the torch
  plugin's (``envInjection`` targets, reserved ``PET_*`` envs), the MPI plugin's
  (``runLauncherAsNode`` with several nodes, reserved ``OMPI_MCA_*`` envs), the XGBoost
  plugin's (reserved ``DMLC_*`` envs, per entry), the Volcano plugin's (an empty queue
  annotation, a PriorityClass that does not exist) and the Flux plugin's (``numProcPerNode``
  at least 1, the reserved ``flux-installer`` init container). Upstream runs the plugins in
  a Go map's order; here always in that order. torchtune's checks (a ``tune run`` command) are
  not made.

Messages are upstream's, field path first; a composite bad value is printed as Go's JSON of the
typed value (the field order of its Go type).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mpi_controller.kube.fielderrors import (
    FieldError,
    Rendered,
    forbidden,
    go_json,
    internal,
    invalid,
    required,
)
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.info import RuntimeInfo, runtime_info
from mpi_controller.trainjob.patches import PatchError
from mpi_controller.trainjob.xgboost import validate_xgboost

__all__ = [
    "DEPRECATION_POLICY_URL",
    "LABEL_SUPPORT",
    "MPI_RESERVED_ENV_NAMES",
    "VOLCANO_QUEUE_ANNOTATION",
    "deprecated_reference_warning",
    "judge_cluster_training_runtime",
    "judge_training_runtime",
    "patches_changed",
    "patches_need_jobset",
    "priority_class_names",
    "runtime_ref_value",
    "validate_replicated_jobs",
    "validate_trainjob",
]

Obj = Mapping[str, Any]

LABEL_SUPPORT = "trainer.kubeflow.org/support"
DEPRECATION_POLICY_URL = ("https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html"
                          "#runtime-deprecation-policy")
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
MPI_RESERVED_ENV_NAMES = frozenset({
    "OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args",
    "OMPI_MCA_orte_keep_fqdn_hostnames", "OMPI_MCA_orte_set_default_slots"})
_STEP_CONTAINERS = {constants.ANCESTOR_TRAINER: constants.NODE,
                    constants.MODEL_INITIALIZER: constants.MODEL_INITIALIZER,
                    constants.DATASET_INITIALIZER: constants.DATASET_INITIALIZER}
_INITIALIZER_VOLUME = "initializer"
_FLUX_INSTALLER = "flux-installer"
_SYSTEM_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")
_RUNTIME_PATCHES = "spec.runtimePatches"

# The field order of the Go types whose JSON a message prints.
_CONTAINER_FIELDS = ("name", "image", "command", "args", "workingDir", "ports", "envFrom", "env",
                     "resources", "resizePolicy", "restartPolicy", "restartPolicyRules",
                     "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
                     "startupProbe", "lifecycle", "terminationMessagePath",
                     "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin",
                     "stdinOnce", "tty")
_ENV_FIELDS = ("name", "value", "valueFrom")
_MOUNT_FIELDS = ("name", "readOnly", "recursiveReadOnly", "mountPath", "subPath",
                 "mountPropagation", "subPathExpr")
_PORT_FIELDS = ("name", "hostPort", "containerPort", "protocol", "hostIP")
_POD_PATCH_FIELDS = ("serviceAccountName", "volumes", "initContainers", "containers",
                     "imagePullSecrets", "securityContext", "nodeSelector", "affinity",
                     "tolerations", "schedulingGates", "terminationGracePeriodSeconds")
_CONTAINER_PATCH_FIELDS = ("name", "env", "volumeMounts", "securityContext")


def _ordered(value: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """``value``'s fields in the Go type's order (unknown ones after, as given)."""
    out = {k: value[k] for k in fields if k in value}
    out.update({k: v for k, v in value.items() if k not in out})
    return out


def _container(value: Mapping[str, Any]) -> dict[str, Any]:
    out = _ordered({"resources": {}, **value}, _CONTAINER_FIELDS)
    for key, fields in (("env", _ENV_FIELDS), ("volumeMounts", _MOUNT_FIELDS),
                        ("ports", _PORT_FIELDS)):
        if isinstance(out.get(key), list):
            out[key] = [_ordered(v, fields) for v in out[key]]
    return out


def _env(value: Iterable[Mapping[str, Any]]) -> Rendered:
    return Rendered(go_json([_ordered(v, _ENV_FIELDS) for v in value]))


def _container_patch(value: Mapping[str, Any]) -> dict[str, Any]:
    out = _ordered(value, _CONTAINER_PATCH_FIELDS)
    for key, fields in (("env", _ENV_FIELDS), ("volumeMounts", _MOUNT_FIELDS)):
        if isinstance(out.get(key), list):
            out[key] = [_ordered(v, fields) for v in out[key]]
    return out


def _patch(value: Mapping[str, Any]) -> dict[str, Any]:
    out = _ordered(value, ("manager", "time", "trainingRuntimeSpec"))
    template = (out.get("trainingRuntimeSpec") or {}).get("template")
    if not isinstance(template, Mapping):
        return out
    rjobs = []
    for rjob in (template.get("spec") or {}).get("replicatedJobs") or []:
        job_template = dict(rjob.get("template") or {})
        pod_template = dict((job_template.get("spec") or {}).get("template") or {})
        if isinstance(pod_template.get("spec"), Mapping):
            pod = _ordered(pod_template["spec"], _POD_PATCH_FIELDS)
            for key in ("initContainers", "containers"):
                if isinstance(pod.get(key), list):
                    pod[key] = [_container_patch(c) for c in pod[key]]
            pod_template = _ordered({**pod_template, "spec": pod}, ("metadata", "spec"))
        if job_template.get("spec") is not None:
            job_template = _ordered({**job_template, "spec": {"template": pod_template}},
                                    ("metadata", "spec"))
        rjobs.append(_ordered({**rjob, "template": job_template} if rjob.get("template")
                              else dict(rjob), ("name", "template")))
    spec = template.get("spec")
    new_template = _ordered({**template, **({"spec": {"replicatedJobs": rjobs}}
                                            if isinstance(spec, Mapping) else {})},
                            ("metadata", "spec"))
    out["trainingRuntimeSpec"] = {"template": new_template}
    return out


def runtime_ref_value(trainjob: Obj) -> Rendered:
    """The TrainJob's ``runtimeRef`` as Go prints it (``name``, ``apiGroup``, ``kind``)."""
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    return Rendered(go_json(_ordered(ref, ("name", "apiGroup", "kind"))))


def _patches_value(trainjob: Obj) -> Rendered:
    patches = (trainjob.get("spec") or {}).get("runtimePatches") or []
    return Rendered(go_json([_patch(p) for p in patches]) if patches else "null")


# -- the runtimes --------------------------------------------------------------------------

def validate_replicated_jobs(runtime: Obj) -> list[FieldError]:
    """``validateReplicatedJobs``: the TrainJob steps' replicas and containers."""
    errors: list[FieldError] = []
    rjobs = ((((runtime.get("spec") or {}).get("template") or {}).get("spec") or {})
             .get("replicatedJobs") or [])
    for i, rjob in enumerate(rjobs):
        template = rjob.get("template") or {}
        step = ((template.get("metadata") or {}).get("labels") or {}).get(
            constants.LABEL_TRAINJOB_ANCESTOR)
        if step not in _STEP_CONTAINERS:
            continue
        path = f"spec.template.spec.replicatedJobs[{i}]"
        if rjob.get("replicas", 0) != 1:
            errors.append(invalid(f"{path}.replicas", rjob.get("replicas", 0),
                                  "always must be 1"))
        containers = ((((template.get("spec") or {}).get("template") or {}).get("spec") or {})
                      .get("containers") or [])
        if all(c.get("name") != _STEP_CONTAINERS[step] for c in containers):
            value = Rendered(go_json([_container(c) for c in containers])
                             if containers else "null")
            errors.append(invalid(f"{path}.template.spec.template.spec.containers", value,
                                  f"must contain the required container for the ancestor: "
                                  f"{step}"))
    return errors


def _deprecated(runtime: Obj) -> bool:
    labels = (runtime.get("metadata") or {}).get("labels") or {}
    return bool(labels.get(LABEL_SUPPORT) == "deprecated")


def judge_training_runtime(runtime: Obj, old: Obj | None) -> tuple[list[str], list[str]]:
    """A TrainingRuntime: checked on create only (``ValidateUpdate`` admits everything)."""
    if old is not None:
        return [], []
    return [str(e) for e in validate_replicated_jobs(runtime)], []


def judge_cluster_training_runtime(runtime: Obj, old: Obj | None
                                   ) -> tuple[list[str], list[str]]:
    """A ClusterTrainingRuntime: checked on create and update, warned about on create when
    deprecated."""
    warnings: list[str] = []
    if old is None and _deprecated(runtime):
        name = (runtime.get("metadata") or {}).get("name", "")
        warnings.append(f'ClusterTrainingRuntime "{name}" is deprecated and will be removed in '
                        "a future release of Kubeflow Trainer. See runtime deprecation "
                        f"policy: {DEPRECATION_POLICY_URL}")
    return [str(e) for e in validate_replicated_jobs(runtime)], warnings


def deprecated_reference_warning(runtime: Obj) -> list[str]:
    """The warning for a TrainJob naming a deprecated ClusterTrainingRuntime."""
    if not _deprecated(runtime):
        return []
    name = (runtime.get("metadata") or {}).get("name", "")
    return [f'Referenced ClusterTrainingRuntime "{name}" is deprecated and will be removed in a '
            f"future release of Kubeflow Trainer. See runtime deprecation policy: "
            f"{DEPRECATION_POLICY_URL}"]


# -- the TrainJob ---------------------------------------------------------------------------

def _info(trainjob: Obj, runtime: Obj) -> RuntimeInfo | None:
    """The runtime info the plugins validate (``None`` where upstream's fails to build)."""
    try:
        return runtime_info(trainjob, runtime.get("spec") or {})
    except (PatchError, ValueError, TypeError):
        return None


def _container_names(info: RuntimeInfo) -> dict[str, set[str]]:
    return {p.name: {c.get("name", "") for c in (*p.init_containers, *p.containers)}
            for p in info.pod_sets}


def _initializer_errors(trainjob: Obj, info: RuntimeInfo, step: str, config: str
                        ) -> list[FieldError]:
    names = _container_names(info)
    ref = runtime_ref_value(trainjob)
    if step not in names:
        return [invalid("spec.runtimeRef", ref,
                        f"must have {step} job when trainJob is configured with input {config}")]
    if step not in names[step]:
        return [invalid("spec.runtimeRef", ref,
                        f"must have container with name - {step} in the {step} job")]
    pod_set = info.by_name(step)
    mounts = [m for c in (pod_set.containers if pod_set else []) if c.get("name") == step
              for m in c.get("volumeMounts") or []]
    if all(m.get("name") != _INITIALIZER_VOLUME for m in mounts):
        return [invalid("spec.runtimeRef", ref,
                        f"must have volumeMount with name - {_INITIALIZER_VOLUME} in container "
                        f"{step} of the {step} job")]
    return []


_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_DNS1123_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def _domain_prefixed_path(path: str, value: str) -> list[FieldError]:
    """apimachinery's ``validation.IsDomainPrefixedPath``."""
    if not value:
        return [required(path, "")]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errors: list[FieldError] = []
    if len(host) > 253:
        errors.append(invalid(path, host, "must be no more than 253 characters"))
    if not _DNS1123_SUBDOMAIN.fullmatch(host):
        errors.append(invalid(path, host, _DNS1123_MESSAGE))
    if not re.fullmatch(_HTTP_PATH_FMT, rest):
        errors.append(invalid(path, rest, f"Invalid path (regex used for validation is "
                                          f"'{_HTTP_PATH_FMT}')"))
    return errors


def patches_changed(trainjob: Obj, old: Obj | None) -> bool:
    """Whether an update changes ``spec.runtimePatches``."""
    if old is None:
        return False
    return bool(((old.get("spec") or {}).get("runtimePatches") or None)
                != ((trainjob.get("spec") or {}).get("runtimePatches") or None))


def patches_need_jobset(trainjob: Obj, old: Obj | None) -> bool:
    """Whether the patches' check reads the JobSet (changed, and suspended before or after)."""
    return patches_changed(trainjob, old) and (
        bool((trainjob.get("spec") or {}).get("suspend"))
        or bool(((old or {}).get("spec") or {}).get("suspend")))


def _patch_errors(trainjob: Obj, old: Obj | None, info: RuntimeInfo,
                  jobset: Obj | None, jobset_error: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if patches_changed(trainjob, old):
        if not patches_need_jobset(trainjob, old):
            errors.append(forbidden(_RUNTIME_PATCHES, "RuntimePatches can only be modified when "
                                    "the TrainJob is suspended before or after the update"))
        elif jobset_error:
            errors.append(internal(_RUNTIME_PATCHES, jobset_error))
        else:
            for status in ((jobset or {}).get("status") or {}).get("replicatedJobsStatus") or []:
                if (status.get("active") or 0) > 0:
                    errors.append(forbidden(
                        _RUNTIME_PATCHES, "RuntimePatches cannot be modified when the JobSet's "
                        f"ReplicatedJob {status.get('name')} is still active"))
    names = _container_names(info)
    for patch in (trainjob.get("spec") or {}).get("runtimePatches") or []:
        errors += _domain_prefixed_path(f"{_RUNTIME_PATCHES}.manager", patch.get("manager", ""))
        spec = (((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec"))
        for rjob in (spec or {}).get("replicatedJobs") or []:
            rjob_name = rjob.get("name", "")
            if rjob_name not in names:
                errors.append(invalid(_RUNTIME_PATCHES, _patches_value(trainjob),
                                      "must not have replicated job that doesn't exist in the "
                                      "runtime job template"))
                continue
            pod = ((((rjob.get("template") or {}).get("spec") or {}).get("template") or {})
                   .get("spec")) or {}
            for c in pod.get("initContainers") or []:
                if c.get("name") not in names[rjob_name]:
                    errors.append(invalid(_RUNTIME_PATCHES, _patches_value(trainjob),
                                          "must not have initContainer that doesn't exist in "
                                          f"the runtime job {rjob_name}"))
            for c in pod.get("containers") or []:
                if c.get("name") not in names[rjob_name]:
                    errors.append(invalid(_RUNTIME_PATCHES, _patches_value(trainjob),
                                          "must not have container that doesn't exist in the "
                                          f"runtime job {rjob_name}"))
                elif c.get("env") and c.get("name") in _STEP_CONTAINERS.values():
                    errors.append(invalid(_RUNTIME_PATCHES, _patches_value(trainjob),
                                          "must not have envs for the dataset-initializer, "
                                          "model-initializer, node containers"))
    return errors


def _jobset_errors(trainjob: Obj, old: Obj | None, info: RuntimeInfo, jobset: Obj | None,
                   jobset_error: str) -> list[FieldError]:
    """The JobSet plugin's ``Validate``."""
    errors: list[FieldError] = []
    initializer = (trainjob.get("spec") or {}).get("initializer") or {}
    if initializer.get("dataset") is not None:
        errors += _initializer_errors(trainjob, info, constants.DATASET_INITIALIZER,
                                      "datasetConfig")
    if initializer.get("model") is not None:
        errors += _initializer_errors(trainjob, info, constants.MODEL_INITIALIZER, "modelConfig")
    return errors + _patch_errors(trainjob, old, info, jobset, jobset_error)


def _reserved(trainer: Obj, names: frozenset[str]) -> list[str]:
    return sorted({e.get("name", "") for e in trainer.get("env") or []} & names)


def _torch_errors(trainjob: Obj, info: RuntimeInfo) -> list[FieldError]:
    torch = (info.ml_policy or {}).get("torch")
    if torch is None:
        return []
    errors: list[FieldError] = []
    for target in (torch.get("envInjection") or {}).get("targets") or []:
        pod_set = info.by_name(target.get("jobName", ""))
        for name in target.get("containerNames") or []:
            if pod_set is None or pod_set.container(name) is None:
                errors.append(invalid(
                    "spec.runtimeRef",
                    Rendered(go_json(_ordered(target, ("jobName", "containerNames")))),
                    f'envInjection target podSet "{target.get("jobName", "")}" container '
                    f'"{name}" not found in runtime template'))
    trainer = (trainjob.get("spec") or {}).get("trainer")
    if trainer is not None:
        reserved = _reserved(trainer, constants.TORCH_RESERVED_ENV_NAMES)
        if reserved:
            errors.append(invalid("spec.trainer.env", _env(trainer.get("env") or []),
                                  "must not have reserved envs, invalid envs configured: "
                                  f"[{' '.join(reserved)}]"))
    return errors


def _mpi_errors(trainjob: Obj, info: RuntimeInfo) -> list[FieldError]:
    mpi = (info.ml_policy or {}).get("mpi")
    trainer = (trainjob.get("spec") or {}).get("trainer")
    if mpi is None or trainer is None:
        return []
    errors: list[FieldError] = []
    nodes = trainer.get("numNodes", 1)
    if nodes >= 2 and mpi.get("runLauncherAsNode") and (
            info.by_name("launcher") is None or info.by_name(constants.NODE) is None):
        errors.append(invalid("spec.trainer.numNodes", nodes,
                              "must have 1 when MPI trainingRuntime with enabled "
                              "runLauncherAsNode does not have either launcher and node"))
    reserved = _reserved(trainer, MPI_RESERVED_ENV_NAMES)
    if reserved:
        errors.append(invalid("spec.trainer.env", _env(trainer.get("env") or []),
                              "must not have reserved envs, invalid envs configured: "
                              f"[{' '.join(reserved)}]"))
    return errors


def priority_class_names(info: RuntimeInfo | None) -> list[str]:
    """The PriorityClasses the Volcano plugin looks up: the pods' ``priorityClassName`` in
    replicated-Job order, up to the first of the two system ones (where it stops)."""
    if info is None or (info.pod_group_policy or {}).get("volcano") is None:
        return []
    names: list[str] = []
    for rjob in info.spec.get("replicatedJobs") or []:
        name = (((((rjob.get("template") or {}).get("spec") or {}).get("template") or {})
                 .get("spec") or {}).get("priorityClassName"))
        if name is None:
            continue
        if name in _SYSTEM_PRIORITY_CLASSES:
            break
        names.append(name)
    return names


def _volcano_errors(info: RuntimeInfo, priority_errors: Mapping[str, str]) -> list[FieldError]:
    if (info.pod_group_policy or {}).get("volcano") is None:
        return []
    errors: list[FieldError] = []
    if info.annotations.get(VOLCANO_QUEUE_ANNOTATION, None) == "":
        errors.append(invalid(f"spec.annotations[{VOLCANO_QUEUE_ANNOTATION}]", "",
                              "Volcano queue name must not be empty"))
    for name in priority_class_names(info):
        if name in priority_errors:
            errors.append(invalid("spec.templateSpec.priorityClassName", name,
                                  f'PriorityClass "{name}" doesn\'t exist: '
                                  f"{priority_errors[name]}"))
    return errors


def _flux_errors(trainjob: Obj, info: RuntimeInfo) -> list[FieldError]:
    flux = (info.ml_policy or {}).get("flux")
    if flux is None:
        return []
    errors: list[FieldError] = []
    procs = flux.get("numProcPerNode")
    trainer = (trainjob.get("spec") or {}).get("trainer") or {}
    if trainer.get("numProcPerNode") is not None:
        procs = trainer["numProcPerNode"]
    if procs is not None and procs < 1:
        errors.append(invalid("spec.trainer.numProcPerNode", procs,
                              "must be greater than or equal to 1 for Flux TrainJob"))
    node = info.by_name(constants.NODE)
    for init in node.init_containers if node else []:
        if init.get("name") == _FLUX_INSTALLER:
            errors.append(invalid("spec.trainer.initContainers", _FLUX_INSTALLER,
                                  "InitContainer 'flux-installer' is reserved"))
    return errors


def validate_trainjob(trainjob: Obj, old: Obj | None, runtime: Obj, *,
                      jobset: Obj | None = None, jobset_error: str = "",
                      priority_errors: Mapping[str, str] | None = None) -> list[FieldError]:
    """The plugins' checks of ``trainjob`` (``old``: on update) on ``runtime`` (the
    (Cluster)TrainingRuntime object). ``jobset`` is the TrainJob's JobSet (``None``: none) and
    ``jobset_error`` the error reading it, when :func:`patches_need_jobset`;
    ``priority_errors`` the error reading each of :func:`priority_class_names` that could not
    be read."""
    info = _info(trainjob, runtime)
    if info is None:
        return []
    return (_jobset_errors(trainjob, old, info, jobset, jobset_error)
            + _torch_errors(trainjob, info) + _mpi_errors(trainjob, info)
            + validate_xgboost(trainjob, runtime.get("spec") or {})
            + _volcano_errors(info, priority_errors or {}) + _flux_errors(trainjob, info))
