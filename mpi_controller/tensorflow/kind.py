"""The TFJob kind on the job engine: training-operator v1.9's ``TFJobReconciler`` as a
:class:`~mpi_controller.engine.training.framework.TrainingFramework` (its hooks) and
:class:`TFJobKind` (the engine's generic training-operator kind with them).

Hooks: the ``v1`` defaults and validation, ``TF_CONFIG`` as the cluster spec (with the
``--cluster-domain``), the master role (the Chief or Master pod, else worker 0) and the TFJob
status rules; the default container ``tensorflow``; ``SuccessfulDeleteJob`` /
``FailedDeleteJob`` events when ``ttlSecondsAfterFinished`` deletes a job.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import GROUP, VERSION, ReplicaSpec
from mpi_controller.engine.training.children import master_role
from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.engine.training.kind import TrainingJobKind
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.runtime.client import Resource
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer
from mpi_controller.tensorflow import constants
from mpi_controller.tensorflow.status import update_tfjob_status
from mpi_controller.tensorflow.tfconfig import add_tf_config, cluster_spec, tf_config
from mpi_controller.tensorflow.v1 import (
    TFJob,
    parse_tfjob,
    set_defaults,
    validate,
)

__all__ = ["TFJOBS", "TFJobKind", "TensorFlow"]

TFJOBS = Resource(GROUP, VERSION, constants.PLURAL, True, constants.KIND)

Obj = dict[str, Any]


class TensorFlow:
    """The TFJob kind's hooks (``cluster_domain``: the ``--cluster-domain`` flag)."""

    kind = constants.KIND
    plural = constants.PLURAL
    controller_name = constants.CONTROLLER_NAME
    framework_name = constants.FRAMEWORK_NAME
    replica_specs_field = constants.SPECS_FIELD
    default_container_name = constants.DEFAULT_CONTAINER_NAME
    delete_job_reasons = ("SuccessfulDeleteJob", "FailedDeleteJob")
    companions = ()

    def __init__(self, *, cluster_domain: str = "") -> None:
        self.cluster_domain = cluster_domain
        self._last: tuple[Mapping[str, Any], TFJob, dict[str, list[str]]] | None = None

    def _view(self, job: Mapping[str, Any]) -> tuple[TFJob, dict[str, list[str]]]:
        """The typed view and cluster spec of ``job``, kept for the next call with the same
        job object (a sync builds all of a job's pods from one)."""
        if self._last is None or self._last[0] is not job:
            view = parse_tfjob(job)
            self._last = (job, view, cluster_spec(view, self.cluster_domain))
        return self._last[1], self._last[2]

    def set_defaults(self, job: Mapping[str, Any]) -> Obj:
        return set_defaults(job)

    def validate(self, job: Mapping[str, Any]) -> list[FieldError]:
        return validate(job)

    def set_cluster_spec(self, job: Mapping[str, Any], template: Obj, rtype: str,
                         index: int) -> None:
        view, cluster = self._view(job)
        value = tf_config(view, rtype, index, self.cluster_domain, cluster=cluster)
        if value is not None:
            add_tf_config(template, value)

    def is_master_role(self, specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
        return master_role(specs, rtype, index, master_types=(constants.REPLICA_TYPE_CHIEF,
                                                              constants.REPLICA_TYPE_MASTER))

    def update_job_status(self, job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec],
                          status: Obj, *, pods: list[Obj], now: datetime) -> list[Event]:
        return update_tfjob_status(parse_tfjob(job), status, pods=pods, now=now)


class TFJobKind(TrainingJobKind):
    """The TFJob kind (``kubeflow.org/v1`` ``tfjobs``) on the engine."""

    operator_name = constants.CONTROLLER_NAME
    component = constants.CONTROLLER_NAME

    def __init__(self, factory: InformerFactory, *, namespace: str = "",
                 pods: SharedIndexInformer, options: TrainingOptions) -> None:
        super().__init__(TensorFlow(cluster_domain=options.cluster_domain), factory,
                         namespace=namespace, pods=pods, options=options)
