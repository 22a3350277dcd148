"""What the first sync of a PyTorchJob creates (pure): :func:`initial_children`, the kind's public
builder (an elastic job's HorizontalPodAutoscaler, then the pods (with ``MASTER_ADDR``,
``WORLD_SIZE``, ``RANK``, ..., the workers' init container) and headless Services of each
replica type), with the kind's hooks (:class:`~mpi_controller.pytorch.hooks.PyTorch`) on the
engine's :func:`~mpi_controller.engine.training.children.initial_children`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training import children
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.pytorch.hooks import PyTorch
from mpi_controller.pytorch.initcontainer import InitContainerTemplate

__all__ = ["initial_children"]


def initial_children(job: Mapping[str, Any], *, cluster_domain: str = "",
                     gang_scheduling: str = "",
                     priority_classes: Mapping[str, int] | None = None,
                     init_container: InitContainerTemplate | None = None) -> list[Obj]:
    """The objects the first sync of the defaulted, valid PyTorchJob ``job`` creates, as the
    engine's :func:`~mpi_controller.engine.training.children.initial_children` says (order,
    ``gang_scheduling``, ``priority_classes``, the ValueError of a job without namespace or
    uid). ``init_container`` is the workers' init container (the built-in one by default);
    ``cluster_domain`` is ignored (the environment names the master by its Service's short
    name)."""
    hooks = PyTorch(init_container=init_container)
    return children.initial_children(hooks, job, gang_scheduling=gang_scheduling,
                                     priority_classes=priority_classes)
