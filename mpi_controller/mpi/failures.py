"""What failed, in words: the details the ``FailureDetails`` gate adds to a Failed condition.

Upstream's Failed condition repeats the launcher Job's failure (``BackoffLimitExceeded``, "Job
has reached the specified backoff limit") and says nothing of the worker that was OOMKilled
or exited non-zero, which is usually why mpirun failed (kubeflow/mpi-operator#90). From the
pods the shared pod cache keeps (phase, reason, message and each container's state):

* :func:`pod_failure` describes one pod, or returns ``None`` when nothing in it failed:
  ``worker pod pi-worker-1: container mpi-worker terminated with exit code 137 (OOMKilled)``;
  a container waiting with a reason that is not part of a normal start
  (``CrashLoopBackOff``, ``ImagePullBackOff``...): ``container c waiting (ImagePullBackOff)``;
  a Failed pod without such a container: ``worker pod pi-worker-3 failed (Evicted: The node
  was low on resource: memory.)``.
* :func:`failure_details` joins the descriptions of failed workers (in name order, at most
  :data:`MAX_PODS`, then ``and N more``) and of the most recently created failed launcher
  pod with ``; ``.

Everything is pure and never raises on malformed pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_int, as_list, as_record, as_str
from mpi_controller.kube.pods import pod_phase
from mpi_controller.mpi import constants

__all__ = ["MAX_PODS", "failure_details", "pod_failure"]

MAX_PODS = 5
"""Failed workers named in one message; the rest are counted."""

_STARTING = {"", "ContainerCreating", "PodInitializing"}


def _container_failure(status: Mapping[str, Any]) -> str | None:
    name = as_str(status.get("name"))
    state = as_dict(status.get("state"))
    terminated = state.get("terminated")
    if isinstance(terminated, Mapping):
        code = as_int(terminated.get("exitCode"))
        reason = as_str(terminated.get("reason"))
        if (code is None or code == 0) and reason != "OOMKilled":
            return None
        text = f"container {name} terminated with exit code {code if code is not None else '?'}"
        return f"{text} ({reason})" if reason else text
    waiting = state.get("waiting")
    if isinstance(waiting, Mapping):
        reason = as_str(waiting.get("reason"))
        if reason not in _STARTING:
            return f"container {name} waiting ({reason})"
    return None


def pod_failure(pod: Mapping[str, Any], role: str) -> str | None:
    """``<role> pod <name>: <what failed>``, or ``None`` when nothing in ``pod`` failed."""
    status = as_dict(pod.get("status"))
    name = as_str(as_record(pod.get("metadata")).get("name"))
    parts = []
    for key in ("initContainerStatuses", "containerStatuses"):
        for container in as_list(status.get(key)):
            if isinstance(container, Mapping) and (text := _container_failure(container)):
                parts.append(text)
    if parts:
        return f"{role} pod {name}: " + ", ".join(parts)
    if pod_phase(pod) != "Failed":
        return None
    why = ": ".join(t for t in (as_str(status.get("reason")), as_str(status.get("message"))) if t)
    return f"{role} pod {name} failed" + (f" ({why})" if why else "")


def _role(pod: Mapping[str, Any]) -> str:
    labels = as_dict(as_record(pod.get("metadata")).get("labels"))
    return as_str(labels.get(constants.JOB_ROLE_LABEL))


def _name(pod: Mapping[str, Any]) -> str:
    return as_str(as_record(pod.get("metadata")).get("name"))


def _created(pod: Mapping[str, Any]) -> str:
    return as_str(as_record(pod.get("metadata")).get("creationTimestamp"))


def failure_details(pods: Iterable[Mapping[str, Any]]) -> str:
    """The failed workers and the last failed launcher pod among ``pods`` (see the module
    doc); ``""`` when none failed."""
    workers: list[str] = []
    launchers: list[tuple[str, str]] = []
    for pod in sorted(pods, key=_name):
        role = _role(pod)
        text = pod_failure(pod, role or "pod")
        if text is None:
            continue
        if role == constants.ROLE_LAUNCHER:
            launchers.append((_created(pod), text))
        else:
            workers.append(text)
    parts = workers[:MAX_PODS]
    if len(workers) > MAX_PODS:
        parts.append(f"and {len(workers) - MAX_PODS} more failed workers")
    if launchers:
        parts.append(max(launchers)[1])
    return "; ".join(parts)
