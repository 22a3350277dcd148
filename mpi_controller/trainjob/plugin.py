"""The TrainJob kind's description (:class:`~mpi_controller.engine.plugin.KindPlugin`):
``trainer.kubeflow.org/v1alpha1`` ``TrainJob`` with its runtimes' CRDs, run only when
``--enable-scheme trainjob`` names it (Kubeflow Trainer may serve the same CRD), needing the
JobSet CRD (``jobsets.jobset.x-k8s.io``) served; the ClusterRole rules for JobSets and the
runtimes; and the validating webhooks of TrainJob, TrainingRuntime and ClusterTrainingRuntime
(Trainer v2.3.0's ``pkg/webhooks``, named and served at the paths of its
``manifests/base/webhook``): :data:`ADMISSIONS` (here, beside the kind's other I/O, since the
TrainJob's webhook reads the API).

The runtimes' judges are pure (:mod:`.validation`, imported on the first review, as
:mod:`.schemas` is on the first CRD build and :mod:`.kind` when the engine builds the kind:
every ``mpi-controller run`` loads this module, most serve no TrainJob).
The TrainJob's reads the API through the webhook server's lookup, as upstream's reads its
cache: the runtime the TrainJob names (a ``runtimeRef`` of another kind or group is refused
with ``unsupported runtime: <Kind>.<group>``; a runtime that cannot be read with
``spec.runtimeRef`` (``spec.RuntimeRef`` for a ClusterTrainingRuntime, as upstream spells it)
``Invalid value: <ref>: <error>: specified trainingRuntime must be created before the TrainJob
is created``), then, only where a check
needs them, the TrainJob's JobSet (changed runtime patches while suspended) and the
PriorityClasses of a Volcano runtime's pods. Then :func:`~.validation.validate_trainjob`.
A naming of a deprecated ClusterTrainingRuntime is a warning.

:data:`DEFAULTING` is the TrainJob defaulter, Trainer's one mutating webhook
(``defaulter.trainjob.trainer.kubeflow.org`` at
``/mutate-trainer-kubeflow-org-v1alpha1-trainjob``): :func:`~.api.stamp_runtime_patches`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mpi_controller.engine.kind import JobKind
from mpi_controller.engine.plugin import (
    Admission,
    Defaulting,
    KindContext,
    KindPlugin,
    RbacRule,
)
from mpi_controller.kube.fielderrors import FieldError, invalid
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.errors import ApiError
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.crd import CLUSTER_TRAINING_RUNTIME, TRAINING_RUNTIME, TRAINJOB
from mpi_controller.trainjob.resources import (
    CLUSTER_RUNTIMES,
    CONTROLLER_NAME,
    EVENT_COMPONENT,
    JOBSETS,
    RUNTIMES,
)

__all__ = ["ADMISSIONS", "DEFAULTING", "PLUGIN", "PRIORITY_CLASSES", "judge_trainjob"]


Lookup = Callable[[Resource, str, str | None], Awaitable[Obj]]
PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", False, "PriorityClass")


def _path(plural: str) -> str:
    return f"/validate-trainer-kubeflow-org-{constants.VERSION}-{plural[:-1]}"


async def _read(lookup: Lookup, resource: Resource, name: str,
                namespace: str | None) -> tuple[Obj | None, ApiError | None]:
    """The object, or ``None`` and the error (its text: ``<resource> "<name>" not found``)."""
    try:
        return await lookup(resource, name, namespace), None
    except ApiError as err:
        return None, err


def _text(err: ApiError | None) -> str:
    return (err.message or str(err)) if err is not None else ""


def _judge_cluster_training_runtime(runtime: Mapping[str, Any], old: Mapping[str, Any] | None
                                    ) -> tuple[list[str], list[str]]:
    """:func:`.validation.judge_cluster_training_runtime`, its module imported on the first
    review (an idle controller, or one that serves no webhook, never loads the checks)."""
    from mpi_controller.trainjob import validation

    return validation.judge_cluster_training_runtime(runtime, old)


def _judge_training_runtime(runtime: Mapping[str, Any], old: Mapping[str, Any] | None
                            ) -> tuple[list[str], list[str]]:
    """:func:`.validation.judge_training_runtime` (imported as above)."""
    from mpi_controller.trainjob import validation

    return validation.judge_training_runtime(runtime, old)


def _runtime_error(trainjob: Mapping[str, Any], cluster: bool, error: str) -> FieldError:
    from mpi_controller.trainjob import validation

    if cluster:
        return invalid("spec.RuntimeRef", validation.runtime_ref_value(trainjob),
                       f"{error}: specified clusterTrainingRuntime must be created before the "
                       "TrainJob is created")
    return invalid("spec.runtimeRef", validation.runtime_ref_value(trainjob),
                   f"{error}: specified trainingRuntime must be created before the TrainJob is "
                   "created")


async def judge_trainjob(lookup: Lookup, trainjob: Mapping[str, Any],
                         old: Mapping[str, Any] | None) -> tuple[Sequence[str], Sequence[str]]:
    """``TrainJobValidator.ValidateCreate``/``ValidateUpdate`` (module doc)."""
    from mpi_controller.trainjob import api, validation
    from mpi_controller.trainjob.info import runtime_info
    from mpi_controller.trainjob.patches import PatchError

    key = api.runtime_key(trainjob)
    if key not in {f"{k}.{constants.GROUP}" for k in api.RUNTIME_KINDS}:
        return [f"unsupported runtime: {key}"], []
    meta = trainjob.get("metadata") or {}
    namespace = meta.get("namespace") or None
    cluster = key.startswith(constants.CLUSTER_RUNTIME_KIND + ".")
    ref_name = ((trainjob.get("spec") or {}).get("runtimeRef") or {}).get("name", "")
    runtime, error = await _read(lookup, CLUSTER_RUNTIMES if cluster else RUNTIMES, ref_name,
                                 None if cluster else namespace)
    if runtime is None:
        return [str(_runtime_error(trainjob, cluster, _text(error)))], []
    warnings = validation.deprecated_reference_warning(runtime) if cluster else []
    jobset, jobset_error = None, ""
    if validation.patches_need_jobset(trainjob, old):
        jobset, problem = await _read(lookup, JOBSETS, meta.get("name", ""), namespace)
        if problem is not None and not problem.is_not_found():
            jobset_error = _text(problem)
    priority_errors: dict[str, str] = {}
    try:
        info = runtime_info(trainjob, runtime.get("spec") or {})
    except (PatchError, ValueError, TypeError):
        info = None
    for name in validation.priority_class_names(info):
        found, problem = await _read(lookup, PRIORITY_CLASSES, name, None)
        if found is None:
            priority_errors[name] = _text(problem)
    errors = validation.validate_trainjob(trainjob, old, runtime, jobset=jobset,
                                          jobset_error=jobset_error,
                                          priority_errors=priority_errors)
    return [str(e) for e in errors], warnings


ADMISSIONS = (
    Admission(name=f"validator.{constants.CLUSTER_RUNTIME_PLURAL[:-1]}.{constants.GROUP}",
              path=_path(constants.CLUSTER_RUNTIME_PLURAL), version=constants.VERSION,
              judge=_judge_cluster_training_runtime,
              kind=constants.CLUSTER_RUNTIME_KIND, resource=constants.CLUSTER_RUNTIME_PLURAL,
              scope="Cluster"),
    Admission(name=f"validator.{constants.RUNTIME_PLURAL[:-1]}.{constants.GROUP}",
              path=_path(constants.RUNTIME_PLURAL), version=constants.VERSION,
              judge=_judge_training_runtime, kind=constants.RUNTIME_KIND,
              resource=constants.RUNTIME_PLURAL),
    Admission(name=f"validator.{constants.PLURAL[:-1]}.{constants.GROUP}",
              path=_path(constants.PLURAL), version=constants.VERSION,
              lookup_judge=judge_trainjob),
)
"""The three webhooks, in upstream's order."""


def _stamp_runtime_patches(trainjob: Mapping[str, Any], old: Mapping[str, Any] | None,
                           now: str) -> dict[str, Any]:
    """:func:`.api.stamp_runtime_patches` (imported on the first review)."""
    from mpi_controller.trainjob import api

    return api.stamp_runtime_patches(trainjob, old, now)


DEFAULTING = (
    Defaulting(name=f"defaulter.{constants.PLURAL[:-1]}.{constants.GROUP}",
               path=f"/mutate-trainer-kubeflow-org-{constants.VERSION}-"
                    f"{constants.PLURAL[:-1]}",
               version=constants.VERSION, default=_stamp_runtime_patches),
)
"""The TrainJob defaulter (module doc)."""


def _build(ctx: KindContext) -> JobKind:
    from mpi_controller.trainjob.kind import TrainJobKind

    return TrainJobKind(ctx.factory, namespace=ctx.namespace)


PLUGIN = KindPlugin(
    scheme="trainjob", kind=constants.KIND, group=constants.GROUP,
    api_versions=(constants.VERSION,), plural=constants.PLURAL, crd=TRAINJOB,
    operator_names=(CONTROLLER_NAME,), component=EVENT_COMPONENT, build=_build,
    events_bucket_of_their_own=True, admission=ADMISSIONS,
    defaulting=DEFAULTING,
    rbac=(
        RbacRule(constants.JOBSET_GROUP, (constants.JOBSET_PLURAL,),
                 ("create", "delete", "get", "list", "patch", "update", "watch"),
                 "a TrainJob runs as a JobSet"),
        RbacRule(constants.GROUP, (constants.RUNTIME_PLURAL, constants.CLUSTER_RUNTIME_PLURAL),
                 ("get", "list", "watch"), "a TrainJob names its runtime"),
        RbacRule("", ("configmaps",), ("create", "get", "list", "update", "watch"),
                 "the runtime snapshot (read from the ConfigMap cache each sync, made once) "
                 "and the MPI hostfile ConfigMap (get: the existing one, on AlreadyExists)"),
        RbacRule("", ("secrets",), ("create", "get"),
                 "the MPI SSH Secret, made once (get: the existing one, on AlreadyExists)"),
        RbacRule("scheduling.k8s.io", ("priorityclasses",), ("get",),
                 "the TrainJob webhook: a Volcano runtime's PriorityClass must exist"),
    ),
    children=(JOBSETS,),
    extra_crds=(TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME),
    explicit=True,
    requires=(JOBSETS,),
)
