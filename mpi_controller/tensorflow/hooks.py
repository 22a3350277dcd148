"""The TFJob kind on the job engine: training-operator v1.9's ``TFJobReconciler`` as a
:class:`~mpi_controller.engine.training.framework.TrainingFramework` (:class:`TensorFlow`, its
hooks), which the engine's generic training-operator kind runs.

Hooks: the ``v1`` defaults and validation (with ``replicas`` below 0, which upstream cannot
run either: ``validate_sync``), ``TF_CONFIG`` as the cluster spec (with the
``--cluster-domain``), the master role (the Chief or Master pod, else worker 0) and the TFJob
status rules; the names of :mod:`.constants`: the default container ``tensorflow``,
``SuccessfulDeleteJob`` / ``FailedDeleteJob`` events when ``ttlSecondsAfterFinished`` deletes
a job. The engine's :class:`~mpi_controller.engine.training.hooks.TrainingHooks` runs them;
the cluster spec is this kind's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec
from mpi_controller.engine.training.hooks import TrainingHooks
from mpi_controller.engine.training.replicas import master_role
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.tensorflow import constants
from mpi_controller.tensorflow.status import update_tfjob_status
from mpi_controller.tensorflow.tfconfig import add_tf_config, cluster_spec, tf_config
from mpi_controller.tensorflow.v1 import (
    TFJob,
    admitted_problems,
    parse_tfjob,
    set_defaults,
    validate_sync,
)

__all__ = ["TensorFlow"]



def _is_master_role(specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
    return master_role(specs, rtype, index, master_types=(constants.REPLICA_TYPE_CHIEF,
                                                          constants.REPLICA_TYPE_MASTER))


class TensorFlow(TrainingHooks[TFJob]):
    """The TFJob kind's hooks (``cluster_domain``: the ``--cluster-domain`` flag)."""

    def __init__(self, *, cluster_domain: str = "") -> None:
        super().__init__(constants, parse=parse_tfjob, set_defaults=set_defaults,
                         validate=validate_sync, pod_env=None, is_master_role=_is_master_role,
                         update_status=update_tfjob_status, admitted=admitted_problems)
        self.cluster_domain = cluster_domain
        self._cluster = self.per_job(lambda job: cluster_spec(self.view(job), cluster_domain))

    def master_role_decides(self, job: Mapping[str, Any],
                            specs: Mapping[str, ReplicaSpec]) -> bool:
        """The Chief or Master decides; without one worker 0 does, unless ``successPolicy:
        AllWorkers`` (upstream's ``UpdateJobStatus``)."""
        view = self.view(job)
        return view.has_chief_or_master or not view.all_workers_must_succeed

    def set_cluster_spec(self, job: Mapping[str, Any], template: Obj, rtype: str,
                         index: int) -> None:
        """``TF_CONFIG`` on the ``tensorflow`` container (a job's cluster spec is computed once
        for all its pods)."""
        value = tf_config(self.view(job), rtype, index, self.cluster_domain,
                          cluster=self._cluster(job))
        if value is not None:
            add_tf_config(template, value)
