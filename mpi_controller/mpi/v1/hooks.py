"""The ``v1`` MPIJob's hooks on training-operator v1.9's common job engine
(:class:`~mpi_controller.engine.training.framework.TrainingFramework`; upstream's
``MPIJobReconciler`` overrides, ``pkg/controller.v1/mpi``): the ``v1`` defaults (and the
cleanPodPolicy sync of ``Reconcile``), the status rules of :mod:`.status`, operator name
``mpijob-controller``, framework ``mpi`` (the ``training_operator_jobs_*`` metrics), the
launcher as the master role. The pods are not the engine's per-replica ones:
:class:`~mpi_controller.mpi.v1.reconcile.MPIJobV1Reconcile` builds them with :mod:`.launch`.
Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.kube.jsonvalue import Obj, as_record, as_str
from mpi_controller.mpi import constants
from mpi_controller.mpi.v1 import launch
from mpi_controller.mpi.v1.defaults import set_defaults, sync_clean_pod_policy
from mpi_controller.mpi.v1.status import update_job_status

__all__ = ["MPIJobV1"]


class MPIJobV1:
    """The ``v1`` MPIJob's hooks on the training-operator engine (module doc)."""

    kind = constants.KIND
    plural = constants.PLURAL
    controller_name = launch.CONTROLLER_NAME
    framework_name = "mpi"
    replica_specs_field = launch.SPECS_FIELD
    default_container_name = "mpi"
    delete_job_reasons = ("SuccessfulDeleteJob", "FailedDeleteJob")
    companions = ()

    def set_defaults(self, job: Mapping[str, Any]) -> Obj:
        return sync_clean_pod_policy(set_defaults(job))

    def forget(self, namespace: str, name: str) -> None:
        """Nothing is kept per job."""

    def validate(self, job: Mapping[str, Any]) -> list[FieldError]:
        """Unused: upstream's messages are not field errors
        (:meth:`~mpi_controller.mpi.v1.reconcile.MPIJobV1Mode.validate`)."""
        return []

    def admitted(self, job: Mapping[str, Any]) -> list[FieldError]:
        """None checked for ``v1`` MPIJobs."""
        return []

    def set_cluster_spec(self, job: Mapping[str, Any], template: Obj, rtype: str,
                         index: int) -> None:
        """None: the MPI pods are built by :mod:`.launch`."""

    def is_master_role(self, specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
        return rtype == constants.REPLICA_TYPE_LAUNCHER

    def master_role_decides(self, job: Mapping[str, Any],
                            specs: Mapping[str, ReplicaSpec]) -> bool:
        """Unused: the launcher and workers are created by :mod:`.launch`, in its own order."""
        return False

    def update_job_status(self, job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec],
                          status: Obj, *, pods: list[Obj], now: datetime) -> list[Event]:
        return update_job_status(as_str(as_record(job.get("metadata")).get("name")), specs,
                                 status, now=now)
