"""The PyTorchJob kind on the job engine: training-operator v1.9's ``PyTorchJobReconciler`` as a
:class:`~mpi_controller.engine.training.framework.TrainingFramework` (:class:`PyTorch`, its
hooks), which the engine's generic training-operator kind runs.

Hooks: the ``v1`` defaults and validation; as the cluster spec the environment of
:mod:`.envvars` in every container and, on workers of a job with a Master, the init container
of :mod:`.initcontainer`; the master role (the Master pod, else worker 0); the PyTorchJob
status rules; the names of :mod:`.constants`: the default container ``pytorch``,
``SuccessfulDeletePod`` / ``FailedDeletePod`` events when ``ttlSecondsAfterFinished`` deletes a
job (upstream's reasons); and the HPA of :mod:`.hpa` as a companion (reconciled before the
pods, deleted while the job is suspended). The engine's
:class:`~mpi_controller.engine.training.hooks.TrainingHooks` runs them; the init container is
this kind's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec
from mpi_controller.engine.training.framework import Companion
from mpi_controller.engine.training.hooks import TrainingHooks, a_master_decides
from mpi_controller.engine.training.replicas import general_name, master_role
from mpi_controller.kube.jsonvalue import Obj, json_copy
from mpi_controller.kube.resources import Resource
from mpi_controller.pytorch import constants
from mpi_controller.pytorch.envvars import pod_env
from mpi_controller.pytorch.hpa import desired_hpa, hpa_changed
from mpi_controller.pytorch.initcontainer import InitContainerTemplate, add_init_containers
from mpi_controller.pytorch.status import update_pytorchjob_status
from mpi_controller.pytorch.v1 import (
    PyTorchJob,
    admitted_problems,
    parse_pytorchjob,
    set_defaults,
    validate,
)

__all__ = ["HPAS", "PyTorch", "PyTorchOptions"]

HPAS = Resource("autoscaling", "v2", "horizontalpodautoscalers", True, "HorizontalPodAutoscaler")
HPA_COMPANION = Companion(HPAS, desired_hpa, hpa_changed)



@dataclass(frozen=True)
class PyTorchOptions:
    """The PyTorchJob kind's settings: the workers' init container, from
    ``--pytorch-init-container-image``, ``--pytorch-init-container-max-tries`` and
    ``--pytorch-init-container-template-file``."""

    init_container: InitContainerTemplate = field(default_factory=InitContainerTemplate)


def _is_master_role(specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
    return master_role(specs, rtype, index, master_types=(constants.REPLICA_TYPE_MASTER,))


class PyTorch(TrainingHooks[PyTorchJob]):
    """The PyTorchJob kind's hooks."""

    def __init__(self, *, init_container: InitContainerTemplate | None = None) -> None:
        super().__init__(constants, parse=parse_pytorchjob, set_defaults=set_defaults,
                         validate=validate, pod_env=pod_env, is_master_role=_is_master_role,
                         update_status=update_pytorchjob_status, companions=(HPA_COMPANION,),
                         admitted=admitted_problems,
                         master_decides=a_master_decides)
        self.init_container = init_container or InitContainerTemplate()
        self._init = self.per_job(self._init_containers)

    def _init_containers(self, job: Mapping[str, Any]) -> list[Obj]:
        """The workers' init containers (none without a Master)."""
        view = self.view(job)
        if view.master is None:
            return []
        return self.init_container.containers(
            general_name(view.name, constants.REPLICA_TYPE_MASTER, 0))

    def set_cluster_spec(self, job: Mapping[str, Any], template: Obj, rtype: str,
                         index: int) -> None:
        """The environment in every container; a worker's init containers (a job's are made
        once for all its pods)."""
        init = self._init(job)
        super().set_cluster_spec(job, template, rtype, index)
        if init and rtype.lower() == constants.REPLICA_TYPE_WORKER.lower():
            add_init_containers(template, json_copy(init))
