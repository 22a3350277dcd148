"""The MPIJob kind on the job engine: one informer and queue for every MPIJob (all stored as
``kubeflow.org/v2beta1``), each job reconciled in the mode of the API version it was created in
(:func:`~mpi_controller.mpi.conversion.generation_of`), chosen from :data:`MODES`:

* ``v2beta1``: mpi-operator v0.8.2 (:class:`~mpi_controller.mpi.reconcile.MPIJobV2Beta1Mode`);
* ``v1``: training-operator v1.9's kubectl-exec launch mode on its common job engine
  (:class:`~mpi_controller.mpi.v1.reconcile.MPIJobV1Mode`);
* ``v1alpha2``: mpi-operator v0.2.3's worker StatefulSet and launcher Job
  (:class:`~mpi_controller.mpi.v1alpha2.reconcile.MPIJobV1Alpha2Mode`).

Every mode is a :class:`~mpi_controller.engine.kind.JobKind` on the same resource: defaults,
``managedBy``, validation, the Events' source and the sync all follow the job's generation;
the status is written through ``v2beta1`` (the three have the same status). :class:`MPIJobKind`
watches what any mode reads (each informer once) and hands every call to the job's mode.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mpi_controller.engine.context import SyncContext
from mpi_controller.engine.kind import JobKind, KindInformers
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import CONFIGMAPS
from mpi_controller.mpi import constants
from mpi_controller.mpi.conversion import generation_of
from mpi_controller.mpi.options import MPIJOBS, MPIJobOptions
from mpi_controller.mpi.reconcile import MPIJobV2Beta1Mode
from mpi_controller.mpi.v1.launch import CONTROLLER_NAME as V1_OPERATOR_NAME
from mpi_controller.mpi.v1.reconcile import MPIJobV1Mode
from mpi_controller.mpi.v1alpha2.reconcile import MPIJobV1Alpha2Mode
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer

__all__ = ["MODES", "MPIJobKind", "Mode"]

Mode = Callable[..., JobKind]
"""Makes a generation's mode: ``(factory, *, namespace, pods, options)``."""

MODES: Mapping[str, Mode] = {
    "v2beta1": MPIJobV2Beta1Mode,
    "v1": MPIJobV1Mode,
    "v1alpha2": MPIJobV1Alpha2Mode,
}
"""Each generation's mode, by the API version jobs of it were created in."""


class MPIJobKind:
    """The MPIJob kind (see the module doc)."""

    resource = MPIJOBS
    operator_name = constants.OPERATOR_NAME
    operator_names = (constants.OPERATOR_NAME, V1_OPERATOR_NAME)
    """The pods' ``training.kubeflow.org/operator-name`` values (``v2beta1`` and ``v1`` jobs;
    ``v1alpha2`` pods are not watched)."""
    component = constants.CONTROLLER_AGENT_NAME

    def __init__(self, factory: InformerFactory, *, namespace: str = "",
                 pods: SharedIndexInformer, options: MPIJobOptions) -> None:
        self.options = options
        self.modes: dict[str, JobKind] = {
            generation: make(factory, namespace=namespace, pods=pods, options=options)
            for generation, make in MODES.items()}
        ns = namespace or None
        self.pods = pods
        self.mpijobs = factory.informer_for(MPIJOBS, ns)
        self.config_maps = factory.informer_for(CONFIGMAPS, ns, label_selector="app")
        """Shared by every mode (the factory makes each informer once)."""
        self._last: tuple[Mapping[str, Any], JobKind] | None = None

    def mode(self, job: Mapping[str, Any]) -> JobKind:
        """The mode of ``job``'s generation (kept for the next call with the same object: a
        sync asks for it once per step)."""
        last = self._last
        if last is not None and last[0] is job:
            return last[1]
        mode = self.modes[generation_of(job)]
        self._last = (job, mode)
        return mode

    # -- JobKind ---------------------------------------------------------------------------

    def informers(self) -> KindInformers:
        first, *rest = (mode.informers() for mode in self.modes.values())
        return first.merge(*rest)

    def prepare(self, cached: Mapping[str, Any]) -> Obj:
        return self.mode(cached).prepare(cached)

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        return self.mode(job).managed_elsewhere(job)

    def event_component(self, job: Mapping[str, Any]) -> str:
        """``mpijob-controller`` (training-operator's) for the jobs created as ``v1``."""
        return self.mode(job).event_component(job)

    def validate(self, job: Mapping[str, Any]) -> Event | None:
        return self.mode(job).validate(job)

    def admitted_problems(self, job: Mapping[str, Any]) -> Sequence[Event]:
        return self.mode(job).admitted_problems(job)

    def child_update_matters(self, job: Mapping[str, Any], child_kind: str,
                             old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return self.mode(job).child_update_matters(job, child_kind, old, new)

    async def sync(self, ctx: SyncContext) -> None:
        await self.mode(ctx.job).sync(ctx)

    def forget(self, key: str) -> None:
        for mode in self.modes.values():
            mode.forget(key)
