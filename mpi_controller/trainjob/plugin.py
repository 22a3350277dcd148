"""The TrainJob kind's description (:class:`~mpi_controller.engine.plugin.KindPlugin`):
``trainer.kubeflow.org/v1alpha1`` ``TrainJob`` with its runtimes' CRDs, run only when
``--enable-scheme trainjob`` names it (Kubeflow Trainer may serve the same CRD), needing the
JobSet CRD (``jobsets.jobset.x-k8s.io``) served; the ClusterRole rules for JobSets and the
runtimes; the validating webhooks of the TrainJob and its runtimes (:mod:`.admission`)."""

from __future__ import annotations

from mpi_controller.engine.kind import JobKind
from mpi_controller.engine.plugin import KindContext, KindPlugin, RbacRule
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.admission import ADMISSIONS
from mpi_controller.trainjob.crd import CLUSTER_TRAINING_RUNTIME, TRAINING_RUNTIME, TRAINJOB
from mpi_controller.trainjob.kind import CONTROLLER_NAME, JOBSETS, TrainJobKind

__all__ = ["PLUGIN"]


def _build(ctx: KindContext) -> JobKind:
    return TrainJobKind(ctx.factory, namespace=ctx.namespace)


PLUGIN = KindPlugin(
    scheme="trainjob", kind=constants.KIND, group=constants.GROUP,
    api_versions=(constants.VERSION,), plural=constants.PLURAL, crd=TRAINJOB,
    operator_names=(CONTROLLER_NAME,), component=CONTROLLER_NAME, build=_build,
    admission=ADMISSIONS,
    rbac=(
        RbacRule(constants.JOBSET_GROUP, (constants.JOBSET_PLURAL,),
                 ("create", "delete", "get", "list", "patch", "update", "watch"),
                 "a TrainJob runs as a JobSet"),
        RbacRule(constants.GROUP, (constants.RUNTIME_PLURAL, constants.CLUSTER_RUNTIME_PLURAL),
                 ("get", "list", "watch"), "a TrainJob names its runtime"),
        RbacRule("", ("configmaps",), ("create", "get", "update"),
                 "the runtime snapshot (read each sync, made once) and the MPI hostfile "
                 "ConfigMap (get: the existing one, on AlreadyExists)"),
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
