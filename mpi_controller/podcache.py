"""What the controller caches of a pod: the fields it reads, decoded and stored compactly.

The controller reads of a pod only its name, namespace, uid, resourceVersion, labels, owner
references, creation and deletion timestamps, phase, reason, message and the ``Ready``
condition (worker and launcher status, hostfile and ``discover_hosts.sh``, cleanup, the
launcher's last failed pod). Contract:

* :data:`POD_CODEC` decodes pod LIST pages and WATCH events to :class:`SlimPod`: nothing else
  of a pod (its spec, container statuses, managedFields, annotations...) is ever built.
* :func:`slim_pod` (the pod informer's transform) returns ``{"metadata": {...}, "status":
  {...}}`` with exactly those fields (conditions: only ``Ready``, as ``{"type", "status"}``),
  strings that repeat across pods interned, and equal owner-reference lists and statuses shared
  between pods (a job's workers have the same owner and, once running, the same status). The
  result is read-only, like every cached object. It accepts any pod dict, also a full one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypedDict, TypeVar

from mpi_controller.runtime.codec import Codec
from mpi_controller.runtime.compact import Flyweights, intern_mapping, intern_str

__all__ = ["POD_CODEC", "SlimPod", "slim_pod"]

Obj = dict[str, Any]
T = TypeVar("T")


class _OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool
    blockOwnerDeletion: bool


class _PodMeta(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    resourceVersion: str
    labels: dict[str, str]
    ownerReferences: list[_OwnerReference]
    creationTimestamp: str
    deletionTimestamp: str


class _PodCondition(TypedDict, total=False):
    type: str
    status: str


class _PodStatus(TypedDict, total=False):
    phase: str
    reason: str
    message: str
    conditions: list[_PodCondition]


class SlimPod(TypedDict, total=False):
    """The fields of a pod that the controller's cache keeps."""

    apiVersion: str
    kind: str
    metadata: _PodMeta
    status: _PodStatus


POD_CODEC = Codec(SlimPod)
_UNIQUE = ("name", "uid", "resourceVersion")
_REPEATED = ("namespace", "creationTimestamp", "deletionTimestamp")
_STATUS_TEXT = ("phase", "reason", "message")
_shared = Flyweights()


def slim_pod(pod: Mapping[str, Any]) -> Obj:
    """The cached form of ``pod`` (see the module doc)."""
    meta = pod.get("metadata") or {}
    slim: Obj = {k: meta[k] for k in _UNIQUE if k in meta}
    for k in _REPEATED:
        if k in meta:
            slim[k] = intern_str(meta[k])
    labels = meta.get("labels")
    if isinstance(labels, Mapping):
        slim["labels"] = intern_mapping(labels)
    refs = meta.get("ownerReferences")
    if isinstance(refs, list):
        slim["ownerReferences"] = _share(("refs", _freeze(refs)), lambda: [
            intern_mapping(r) if isinstance(r, Mapping) else r for r in refs])
    return {"metadata": slim, "status": _slim_status(pod.get("status") or {})}


def _slim_status(status: Mapping[str, Any]) -> Obj:
    ready = None
    for cond in status.get("conditions") or ():
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            ready = cond.get("status")

    def make() -> Obj:
        out: Obj = {k: intern_str(status[k]) for k in _STATUS_TEXT if k in status}
        if ready is not None:
            out["conditions"] = [{"type": "Ready", "status": intern_str(ready)}]
        return out

    key = ("status", *(status.get(k) for k in _STATUS_TEXT), ready)
    shared: Obj = _share(key, make)
    return shared


def _share(key: Hashable, make: Callable[[], T]) -> T:
    try:
        return _shared.share(key, make)
    except TypeError:  # an unhashable value in a malformed object: keep it unshared
        return make()


def _freeze(refs: list[Any]) -> Hashable:
    return tuple(tuple(sorted(r.items())) if isinstance(r, Mapping) else r for r in refs)
