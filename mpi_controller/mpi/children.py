"""The order in which a first sync creates an MPIJob's children, declared once.

The MPIJob kind's sync creates the Service, ConfigMap and SSH Secret (concurrently), then the
PodGroup (with gang scheduling), the worker pods and the launcher Job; ``mpi-controller
render`` prints the same objects in this order. A test runs the sync against the in-memory
API and checks that its creates follow :data:`CREATION_ORDER`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["CREATION_ORDER", "in_creation_order"]

CREATION_ORDER = ("Service", "ConfigMap", "Secret", "PodGroup", "Pod", "Job")
"""Object kinds in the order a first sync creates them."""


def in_creation_order(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``objects`` sorted by :data:`CREATION_ORDER` of their ``kind`` (stable within a kind)."""
    return sorted(objects, key=lambda obj: CREATION_ORDER.index(obj.get("kind", "Job")))
