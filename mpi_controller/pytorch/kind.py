"""The PyTorchJob kind on the job engine: training-operator v1.9's ``PyTorchJobReconciler`` as a
:class:`~mpi_controller.engine.training.framework.TrainingFramework` (its hooks) and
:class:`PyTorchJobKind` (the engine's generic training-operator kind with them).

Hooks: the ``v1`` defaults and validation; as the cluster spec the environment of
:mod:`.envvars` in every container and, on workers of a job with a Master, the init container
of :mod:`.initcontainer`; the master role (the Master pod, else worker 0); the PyTorchJob
status rules; the default container ``pytorch``; ``SuccessfulDeletePod`` / ``FailedDeletePod``
events when ``ttlSecondsAfterFinished`` deletes a job (upstream's reasons); and the HPA of
:mod:`.hpa` as a companion (reconciled before the pods, deleted while the job is suspended).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import GROUP, VERSION, ReplicaSpec
from mpi_controller.engine.training.children import general_name, master_role
from mpi_controller.engine.training.env import add_pod_env
from mpi_controller.engine.training.framework import Companion, TrainingOptions
from mpi_controller.engine.training.kind import TrainingJobKind
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.kube.jsonvalue import json_copy
from mpi_controller.pytorch import constants
from mpi_controller.pytorch.envvars import pod_env
from mpi_controller.pytorch.hpa import desired_hpa, hpa_changed
from mpi_controller.pytorch.initcontainer import InitContainerTemplate, add_init_containers
from mpi_controller.pytorch.status import update_pytorchjob_status
from mpi_controller.pytorch.v1 import PyTorchJob, parse_pytorchjob, set_defaults, validate
from mpi_controller.runtime.client import Resource
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer

__all__ = ["HPAS", "PYTORCHJOBS", "PyTorch", "PyTorchJobKind", "PyTorchOptions"]

PYTORCHJOBS = Resource(GROUP, VERSION, constants.PLURAL, True, constants.KIND)
HPAS = Resource("autoscaling", "v2", "horizontalpodautoscalers", True, "HorizontalPodAutoscaler")
HPA_COMPANION = Companion(HPAS, desired_hpa, hpa_changed)

Obj = dict[str, Any]


@dataclass(frozen=True)
class PyTorchOptions:
    """The PyTorchJob kind's settings: the workers' init container, from
    ``--pytorch-init-container-image``, ``--pytorch-init-container-max-tries`` and
    ``--pytorch-init-container-template-file``."""

    init_container: InitContainerTemplate = field(default_factory=InitContainerTemplate)


class PyTorch:
    """The PyTorchJob kind's hooks."""

    kind = constants.KIND
    plural = constants.PLURAL
    controller_name = constants.CONTROLLER_NAME
    framework_name = constants.FRAMEWORK_NAME
    replica_specs_field = constants.SPECS_FIELD
    default_container_name = constants.DEFAULT_CONTAINER_NAME
    delete_job_reasons = ("SuccessfulDeletePod", "FailedDeletePod")
    companions = (HPA_COMPANION,)

    def __init__(self, *, init_container: InitContainerTemplate | None = None) -> None:
        self.init_container = init_container or InitContainerTemplate()
        self._last: tuple[Mapping[str, Any], PyTorchJob, list[Obj]] | None = None

    def _view(self, job: Mapping[str, Any]) -> tuple[PyTorchJob, list[Obj]]:
        """The typed view of ``job`` and its workers' init containers, kept for the next call
        with the same job object (a sync builds all of a job's pods from one)."""
        if self._last is None or self._last[0] is not job:
            view = parse_pytorchjob(job)
            init: list[Obj] = []
            if view.master is not None:
                init = self.init_container.containers(
                    general_name(view.name, constants.REPLICA_TYPE_MASTER, 0))
            self._last = (job, view, init)
        return self._last[1], self._last[2]

    def set_defaults(self, job: Mapping[str, Any]) -> Obj:
        return set_defaults(job)

    def validate(self, job: Mapping[str, Any]) -> list[FieldError]:
        return validate(job)

    def set_cluster_spec(self, job: Mapping[str, Any], template: Obj, rtype: str,
                         index: int) -> None:
        view, init = self._view(job)
        add_pod_env(template, pod_env(view, rtype, index))
        if init and rtype.lower() == constants.REPLICA_TYPE_WORKER.lower():
            add_init_containers(template, json_copy(init))

    def is_master_role(self, specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
        return master_role(specs, rtype, index, master_types=(constants.REPLICA_TYPE_MASTER,))

    def update_job_status(self, job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec],
                          status: Obj, *, pods: list[Obj], now: datetime) -> list[Event]:
        return update_pytorchjob_status(parse_pytorchjob(job), status, pods=pods, now=now)


class PyTorchJobKind(TrainingJobKind):
    """The PyTorchJob kind (``kubeflow.org/v1`` ``pytorchjobs``) on the engine."""

    operator_name = constants.CONTROLLER_NAME
    component = constants.CONTROLLER_NAME

    def __init__(self, factory: InformerFactory, *, namespace: str = "",
                 pods: SharedIndexInformer, options: TrainingOptions,
                 pytorch: PyTorchOptions | None = None) -> None:
        init = (pytorch or PyTorchOptions()).init_container
        super().__init__(PyTorch(init_container=init), factory, namespace=namespace, pods=pods,
                         options=options)
