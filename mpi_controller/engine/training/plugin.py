"""A ``kubeflow.org/v1`` training-operator kind's :class:`~mpi_controller.engine.plugin.KindPlugin`
from its framework hooks: :func:`training_plugin`.

What every such kind shares is filled in here, as training-operator v1.9 does it for all of
them: the scheme is the lower-case kind (``--enable-scheme xgboostjob``); the CRD serves
``kubeflow.org/v1``; the pods carry ``training.kubeflow.org/operator-name:
<controller name>``, which is also the Events' source; the validating webhook is
``validator.<kind>.training-operator.kubeflow.org`` at ``/validate-kubeflow-org-v1-<kind>``
(``failurePolicy: Fail``); ``render`` shows the first sync's objects (the kind's public
``initial_children``, e.g. :func:`mpi_controller.tensorflow.initial_children`) and, as warnings,
the Warning events their creation records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mpi_controller.engine.kind import JobKind
from mpi_controller.engine.plugin import (
    Admission,
    FlagSet,
    KindContext,
    KindPlugin,
    RbacRule,
    Renderer,
    RenderOptions,
)
from mpi_controller.engine.training import gang
from mpi_controller.engine.training.api import GROUP, VERSION, replica_specs
from mpi_controller.engine.training.children import InitialChildren, replica_pod
from mpi_controller.engine.training.framework import TrainingFramework, TrainingOptions
from mpi_controller.engine.training.kind import TrainingJobKind
from mpi_controller.kube.crd import CRD
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource

__all__ = ["FrameworkFactory", "training_admission", "training_plugin"]

Job = Mapping[str, Any]
FrameworkFactory = Callable[[TrainingOptions, object], TrainingFramework]
"""Makes the kind's hooks from the shared training options and the kind's own options."""


def training_admission(kind: str, validate: Callable[[Job], Sequence[FieldError]],
                       validate_update: Callable[[Job, Job], Sequence[FieldError]],
                       warnings: Callable[[Job], Sequence[str]] = lambda job: (),
                       ) -> Admission:
    """training-operator v1.9's validating webhook of ``kind``: the job as submitted (before
    defaults) judged by the kind's own checks, the ones the controller runs on every sync.
    An update is judged against the old job too (``validate_update``); one that leaves
    ``spec`` as it was (labels, annotations, finalizers) is not judged again, so a job
    admitted before the webhook existed can still be labelled and deleted. ``warnings`` are
    answered whether the job is admitted or not."""
    lower = kind.lower()

    def judge(obj: Job, old: Job | None) -> tuple[list[str], list[str]]:
        warned = list(warnings(obj))
        if old is None:
            return [str(e) for e in validate(obj)], warned
        if old.get("spec") == obj.get("spec"):
            return [], warned
        return [str(e) for e in validate_update(old, obj)], warned

    return Admission(name=f"validator.{lower}.training-operator.kubeflow.org",
                     path=f"/validate-kubeflow-org-{VERSION}-{lower}", version=VERSION,
                     judge=judge)


def _render_framework(make: FrameworkFactory, flags: FlagSet | None,
                      options: RenderOptions) -> TrainingFramework:
    shared = TrainingOptions(gang_scheduler_name=options.gang_scheduling,
                             cluster_domain=options.cluster_domain)
    return make(shared, flags.default() if flags is not None else None)


def _renderer(make: FrameworkFactory, flags: FlagSet | None,
              warnings: Callable[[Job], Sequence[str]],
              initial_children: InitialChildren) -> Renderer:
    def prepare(job: Job, options: RenderOptions) -> Obj:
        return _render_framework(make, flags, options).set_defaults(job)

    def check(job: Obj, options: RenderOptions) -> tuple[list[FieldError], list[str]]:
        fw = _render_framework(make, flags, options)
        errors = fw.validate(job)
        if errors:
            return errors, []
        scheduler = gang.gang_scheduler(options.gang_scheduling)
        specs = replica_specs(job, fw.replica_specs_field)
        messages = list(warnings(job))
        for spec in specs.values():
            for event in replica_pod(fw, job, specs, spec, 0, gang=scheduler)[1]:
                messages += [] if event.message in messages else [event.message]
        return [], messages

    def objects(job: Obj, options: RenderOptions) -> list[Obj]:
        return initial_children(job, cluster_domain=options.cluster_domain,
                                gang_scheduling=options.gang_scheduling,
                                priority_classes=options.priority_classes)

    return Renderer(prepare=prepare, check=check, objects=objects)


def training_plugin(*, framework: FrameworkFactory, initial_children: InitialChildren, crd: CRD,
                    validate: Callable[[Job], Sequence[FieldError]],
                    validate_update: Callable[[Job, Job], Sequence[FieldError]],
                    warnings: Callable[[Job], Sequence[str]] = lambda job: (),
                    flags: FlagSet | None = None, rbac: tuple[RbacRule, ...] = (),
                    children: tuple[Resource, ...] = (),
                    examples: tuple[str, ...] = (),
                    kind_type: type[TrainingJobKind] = TrainingJobKind) -> KindPlugin:
    """The plugin of the training-operator kind whose hooks ``framework`` makes (module doc),
    whose public ``initial_children`` ``render`` prints;
    ``validate``, ``validate_update`` and ``warnings`` are the kind's admission checks (on
    the job as submitted, before defaults); ``kind_type`` the engine kind it is built as (a
    subclass of the generic one where the kind's reconciler differs outside the hooks, e.g.
    JAXJob, which never leaves a job to ``runPolicy.managedBy``)."""
    sample = framework(TrainingOptions(), flags.default() if flags is not None else None)

    def build(ctx: KindContext) -> JobKind:
        return kind_type(framework(ctx.training, ctx.options), ctx.factory,
                         namespace=ctx.namespace, pods=ctx.pods, options=ctx.training)

    return KindPlugin(
        scheme=sample.kind.lower(), kind=sample.kind, group=GROUP, api_versions=(VERSION,),
        plural=sample.plural, crd=crd, operator_names=(sample.controller_name,),
        component=sample.controller_name, build=build,
        admission=(training_admission(sample.kind, validate, validate_update, warnings),),
        renderer=_renderer(framework, flags, warnings, initial_children), flags=flags, rbac=rbac,
        children=children, examples=examples, framework_name=sample.framework_name,
        replica_specs=sample.replica_specs_field, events_bucket_of_their_own=True)
