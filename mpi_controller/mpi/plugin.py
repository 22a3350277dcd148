"""The MPIJob kind's description (:class:`~mpi_controller.engine.plugin.KindPlugin`).

One CRD serves ``v2beta1`` (stored, what the controller reads), ``v1`` and ``v1alpha2``
through the conversion webhook (:func:`~mpi_controller.mpi.admission.convert_mpijob`); a
validating webhook per version (:func:`~mpi_controller.mpi.admission.validate_mpijob`,
``failurePolicy: Ignore``). Its own flags: ``--feature-gates`` (the opt-ins of
:mod:`~mpi_controller.mpi.features`), ``--mpi-kubectl-delivery-image`` (training-operator's:
the launchers of jobs created as ``v1``) and ``--kubectl-delivery-image`` (mpi-operator
v0.2.3's: those created as ``v1alpha2``); with the shared ``--gang-scheduling``,
``--cluster-domain`` and ``--worker-create-concurrency`` they make its
:class:`~mpi_controller.mpi.options.MPIJobOptions`.

``render`` shows a ``v2beta1`` job's :func:`~mpi_controller.mpi.children.initial_children`:
Service, ConfigMap, SSH Secret, PodGroup (with ``--gang-scheduling``), worker pods, launcher
Job (a suspended job: no PodGroup and no workers, a suspended launcher).
"""

from __future__ import annotations

from collections.abc import Mapping
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
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import (
    CONFIGMAPS,
    JOBS,
    ROLE_BINDINGS,
    ROLES,
    SECRETS,
    SERVICE_ACCOUNTS,
    STATEFUL_SETS,
)
from mpi_controller.mpi import constants
from mpi_controller.mpi.admission import (
    convert_mpijob,
    validate_mpijob,
    webhook_name,
    webhook_path,
)
from mpi_controller.mpi.children import initial_children
from mpi_controller.mpi.conversion import VERSIONS
from mpi_controller.mpi.crd import MPIJOB
from mpi_controller.mpi.features import GATES, Features
from mpi_controller.mpi.kind import MPIJobKind
from mpi_controller.mpi.launcher import launcher_template_events
from mpi_controller.mpi.options import MPIJobOptions
from mpi_controller.mpi.v2beta1 import set_defaults, validate

__all__ = ["PLUGIN"]



def _add_flags(parser: Any) -> None:
    defaults = MPIJobOptions()
    parser.add_argument(
        "--mpi-kubectl-delivery-image", "-mpi-kubectl-delivery-image",
        dest="kubectl_delivery_image_v1", default=defaults.kubectl_delivery_image_v1,
        help="kubectl-delivery image of the launchers of MPIJobs created as v1")
    parser.add_argument(
        "--kubectl-delivery-image", "-kubectl-delivery-image",
        dest="kubectl_delivery_image_v1alpha2",
        default=defaults.kubectl_delivery_image_v1alpha2,
        help="kubectl-delivery image of the launchers of MPIJobs created as v1alpha2")
    parser.add_argument(
        "--feature-gates", "-feature-gates", dest="feature_gates", default="",
        help="opt-ins beyond the Go operator, e.g. JobMetrics=true,FailureDetails=true "
             "(all off by default); gates: " + ", ".join(GATES))


def _parse_flags(args: Any) -> MPIJobOptions:
    return MPIJobOptions(
        gang_scheduling=args.gang_scheduling,
        cluster_domain=args.cluster_domain,
        worker_create_concurrency=args.worker_create_concurrency,
        features=Features.parse(args.feature_gates),
        kubectl_delivery_image_v1=args.kubectl_delivery_image_v1,
        kubectl_delivery_image_v1alpha2=args.kubectl_delivery_image_v1alpha2,
    )


def _build(ctx: KindContext) -> JobKind:
    options = ctx.options if isinstance(ctx.options, MPIJobOptions) else MPIJobOptions()
    return MPIJobKind(ctx.factory, namespace=ctx.namespace, pods=ctx.pods, options=options)


def _prepare(job: Mapping[str, Any], options: RenderOptions) -> Obj:
    return set_defaults(job)


def _check(job: Obj, options: RenderOptions) -> tuple[list[FieldError], list[str]]:
    errors = validate(job)
    return errors, [] if errors else [e.message for e in launcher_template_events(job)]


def _objects(job: Obj, options: RenderOptions) -> list[Obj]:
    return initial_children(job, cluster_domain=options.cluster_domain,
                            gang_scheduling=options.gang_scheduling,
                            priority_classes=options.priority_classes,
                            running_workers=options.running_workers)


_RW = ("get", "create", "list", "watch", "update")

PLUGIN = KindPlugin(
    scheme="mpijob", kind=constants.KIND, group=constants.GROUP, api_versions=VERSIONS,
    plural=constants.PLURAL, crd=MPIJOB, operator_names=MPIJobKind.operator_names,
    component=MPIJobKind.component, build=_build,
    admission=tuple(Admission(name=webhook_name(v), path=webhook_path(v), version=v,
                              judge=validate_mpijob, failure_policy="Ignore")
                    for v in VERSIONS),
    convert=convert_mpijob,
    renderer=Renderer(prepare=_prepare, check=_check, objects=_objects),
    flags=FlagSet(add=_add_flags, parse=_parse_flags, default=MPIJobOptions),
    rbac=(
        RbacRule("", ("configmaps", "secrets"), _RW,
                 "the hostfile ConfigMap and the SSH Secret"),
        RbacRule("", ("pods/exec",), ("create",),
                 "MPIJobs created through v1 and v1alpha2 (kubectl-exec launch modes): the "
                 "per-job Role grants the launcher exec into its workers, and RBAC lets only a "
                 "holder of a permission grant it (the controller itself never execs)"),
        RbacRule("", ("serviceaccounts",), ("get", "create", "list", "watch"),
                 "the launcher's ServiceAccount of v1 and v1alpha2 jobs (get after an "
                 "AlreadyExists: a template's own one is used whoever owns it)"),
        RbacRule("rbac.authorization.k8s.io", ("roles",), _RW,
                 "the launcher's Role of v1 and v1alpha2 jobs (updated when the workers "
                 "change)"),
        RbacRule("rbac.authorization.k8s.io", ("rolebindings",),
                 ("get", "create", "list", "watch"), "the launcher's RoleBinding"),
        RbacRule("apps", ("statefulsets",), _RW,
                 "v1alpha2's worker StatefulSet (scaled, updated)"),
        RbacRule("batch", ("jobs",), (*_RW, "delete"),
                 "the launcher Job; delete: the TTL of an evicted job's launcher "
                 "(CleanUpEvictedJobs opt-in)"),
        RbacRule("batch", ("jobs/status",), ("update",),
                 "resuming an MPIJob whose launcher had started: before Kubernetes 1.36 "
                 "(MutableSchedulingDirectivesForSuspendedJobs off) the Job controller keeps a "
                 "suspended Job's status.startTime, which must be cleared before the resumed "
                 "launcher's template is updated (as mpi-operator's sync does)"),
    ),
    children=(CONFIGMAPS, SECRETS, JOBS, SERVICE_ACCOUNTS, ROLES, ROLE_BINDINGS, STATEFUL_SETS),
    examples=("examples/pi.yaml", "examples/pi-intel.yaml", "examples/pi-mpich.yaml",
              "examples/horovod-elastic.yaml", "examples/tensorflow-benchmarks.yaml",
              "examples/v1/tensorflow-mnist-elastic.yaml",
              "examples/v1alpha2/tensorflow-benchmarks.yaml"),
)
