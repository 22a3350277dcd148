"""The job kinds this controller serves: one line per kind, naming its package's ``plugin``
module (whose ``PLUGIN`` is its :class:`~mpi_controller.engine.plugin.KindPlugin`).

Everything that lists kinds reads :func:`plugins` (``mpi-controller run`` and its
``--enable-scheme``, ``render``, the webhooks, the generated CRDs, ClusterRole and webhook
configuration, the test fixtures): adding a kind is its folder and one line here. The modules
are imported on first use, in this order (the order of ``--enable-scheme``'s help and of
the generated manifests).
"""

from __future__ import annotations

import importlib
from functools import cache

from mpi_controller.engine.plugin import KindPlugin

__all__ = ["PLUGIN_MODULES", "plugin", "plugins", "schemes"]

PLUGIN_MODULES = (
    "mpi_controller.mpi.plugin",
    "mpi_controller.tensorflow.plugin",
    "mpi_controller.pytorch.plugin",
    "mpi_controller.xgboost.plugin",
    "mpi_controller.paddle.plugin",
    "mpi_controller.jax.plugin",
    "mpi_controller.trainjob.plugin",
)


@cache
def plugins() -> tuple[KindPlugin, ...]:
    """Every kind's plugin, in :data:`PLUGIN_MODULES` order."""
    found: list[KindPlugin] = []
    for name in PLUGIN_MODULES:
        described = getattr(importlib.import_module(name), "PLUGIN", None)
        if not isinstance(described, KindPlugin):
            raise TypeError(f"{name}.PLUGIN is not a KindPlugin")
        if any(p.scheme == described.scheme for p in found):
            raise ValueError(f"{name}: scheme {described.scheme} is registered twice")
        found.append(described)
    return tuple(found)


def schemes() -> tuple[str, ...]:
    """The ``--enable-scheme`` values, lower case."""
    return tuple(p.scheme for p in plugins())


def plugin(scheme: str) -> KindPlugin:
    """The plugin of ``scheme`` (any case); KeyError naming the known ones."""
    for described in plugins():
        if described.scheme == scheme.lower():
            return described
    raise KeyError(f"unknown job kind {scheme!r} (known: {', '.join(schemes())})")
