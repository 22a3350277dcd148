"""Reading pods: phase, readiness, container states (pure, read-only)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import as_list, as_record

__all__ = ["count_ready_pods", "is_pod_ready", "pod_phase"]


def pod_phase(pod: Mapping[str, Any]) -> str:
    """``status.phase`` (``""`` when absent; ``as_str(as_record(pod.get("status")).get("phase"))``
    without the calls)."""
    status = pod.get("status")
    if isinstance(status, dict):
        phase = status.get("phase")
        if isinstance(phase, str):
            return phase
    return ""


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """The pod has condition ``Ready=True``."""
    return any(
        isinstance(cond, dict) and cond.get("type") == "Ready" and cond.get("status") == "True"
        for cond in as_list(as_record(pod.get("status")).get("conditions"))
    )


def count_ready_pods(pods: Iterable[Mapping[str, Any]]) -> int:
    return sum(1 for pod in pods if is_pod_ready(pod))
