"""The one pod cache every job kind reads: the fields they use, decoded and stored compactly.

Job kinds read of a pod only its name, namespace, uid, resourceVersion, labels, owner
references, creation and deletion timestamps, phase, reason, message, two things of its
conditions (whether one says ``Ready`` is ``True``; the last one, when its status is not
``True``: a pending pod's warning names its type, reason and message), and the name, restart
count and current state of each container and init container (the ExitCode restart policy
reads a container's exit code; backoff limits count restarts; failure reasons name the
container, its exit code and reason). Contract:

* :data:`POD_CODEC` decodes pod LIST pages and WATCH events to :class:`SlimPod`: nothing else
  of a pod (its spec, annotations, managedFields, timestamps of conditions and container
  states...) is ever built.
* :func:`slim_pod` (the pod informer's transform) returns ``{"metadata": {...}, "status":
  {...}}`` with exactly those fields (``conditions``: ``{type: Ready, status: "True"}`` when
  the pod is ready, then the last condition (type, status, reason, message) when its status
  is not ``True``, so ``conditions[-1]`` is not ``True`` exactly when the pod's last is not;
  a container state keeps ``running: {}``, ``waiting: {reason, message}`` or ``terminated:
  {exitCode, reason, message}``), strings that repeat
  across pods interned, and equal owner-reference lists and statuses shared between pods (a
  job's workers have the same owner and, once running, the same status). The result is
  read-only, like every cached object. It accepts any pod dict, also a full one. Sharing is
  keyed by the JSON encoding of the list or status as given (~1 us, a fifth of walking its
  fields): two pods decoded by :data:`POD_CODEC`, which leaves out every field the cache does
  not keep, share a status whenever their slim statuses are equal; a full pod's status is
  shared only with the same full status.
* :func:`same_for_jobs` tells whether two cached (slim) versions of a pod differ in nothing but
  ``metadata.resourceVersion``: an update the syncs cannot tell from the version before it,
  since the slim pod is all they read of a pod (a kubelet's or KWOK's step that only moves
  timestamps, ``nodeName``, IPs, or a condition's transition time; the scheduler's binding,
  which sets ``nodeName`` and adds ``PodScheduled=True``).
* :func:`pod_informer` makes the one pod informer every kind's controller shares: pods whose
  ``training.kubeflow.org/operator-name`` is one of the kinds' operator names
  (:func:`pod_selector`), slimmed as above, indexed by controller uid.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypedDict, TypeVar

import msgspec

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import PODS
from mpi_controller.runtime.cache import CONTROLLER_UID_INDEX, controller_uid_index
from mpi_controller.runtime.codec import Codec
from mpi_controller.runtime.compact import Flyweights, intern_mapping, intern_str
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer

__all__ = [
    "OPERATOR_NAME_LABEL",
    "POD_CODEC",
    "SlimPod",
    "pod_informer",
    "pod_selector",
    "same_for_jobs",
    "slim_pod",
]

OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"

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
    reason: str
    message: str


class _Waiting(TypedDict, total=False):
    reason: str
    message: str


class _Terminated(TypedDict, total=False):
    exitCode: int
    reason: str
    message: str


class _Running(TypedDict, total=False):
    pass


class _State(TypedDict, total=False):
    waiting: _Waiting
    running: _Running
    terminated: _Terminated


class _ContainerStatus(TypedDict, total=False):
    name: str
    restartCount: int
    state: _State


class _PodStatus(TypedDict, total=False):
    phase: str
    reason: str
    message: str
    conditions: list[_PodCondition]
    containerStatuses: list[_ContainerStatus]
    initContainerStatuses: list[_ContainerStatus]


class SlimPod(TypedDict, total=False):
    """The fields of a pod that the shared pod cache keeps."""

    apiVersion: str
    kind: str
    metadata: _PodMeta
    status: _PodStatus


POD_CODEC = Codec(SlimPod)
_UNIQUE = ("name", "uid", "resourceVersion")
_REPEATED = ("namespace", "creationTimestamp", "deletionTimestamp")
_STATUS_TEXT = ("phase", "reason", "message")
_CONDITION_FIELDS = ("type", "status", "reason", "message")
_CONTAINER_LISTS = ("containerStatuses", "initContainerStatuses")
_WAITING_FIELDS = ("reason", "message")
_TERMINATED_FIELDS = ("exitCode", "reason", "message")
_ABSENT: Any = object()  # a field not set, in a sharing key (unlike a field set to null)
_shared = Flyweights()
_KEY_ENCODER = msgspec.json.Encoder()


def pod_selector(operator_names: Iterable[str]) -> str:
    """``training.kubeflow.org/operator-name in (<names>)`` (sorted, deduplicated)."""
    names = sorted(set(operator_names))
    if len(names) == 1:
        return f"{OPERATOR_NAME_LABEL}={names[0]}"
    return f"{OPERATOR_NAME_LABEL} in ({','.join(names)})"


def pod_informer(factory: InformerFactory, namespace: str | None,
                 operator_names: Iterable[str]) -> SharedIndexInformer:
    """The shared pod informer (see the module doc)."""
    return factory.informer_for(
        PODS, namespace, label_selector=pod_selector(operator_names), transform=slim_pod,
        codec=POD_CODEC, indexers={CONTROLLER_UID_INDEX: controller_uid_index})


def slim_pod(pod: Mapping[str, Any]) -> Obj:
    """The cached form of ``pod`` (see the module doc)."""
    meta = pod.get("metadata") or {}
    slim: Obj = {k: meta[k] for k in _UNIQUE if k in meta}
    for k in _REPEATED:
        if k in meta:
            slim[k] = intern_str(meta[k])
    labels = meta.get("labels")
    if isinstance(labels, dict):
        slim["labels"] = intern_mapping(labels)
    refs = meta.get("ownerReferences")
    if isinstance(refs, list):
        slim["ownerReferences"] = _share(("refs", _KEY_ENCODER.encode(refs)), lambda: [
            intern_mapping(r) if isinstance(r, dict) else r for r in refs])
    return {"metadata": slim, "status": _slim_status(pod.get("status") or {})}


def same_for_jobs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether pods ``old`` and ``new`` differ in nothing but the resourceVersion."""
    return (_equal_but(old, new, "metadata")
            and _equal_but(old.get("metadata") or {}, new.get("metadata") or {},
                           "resourceVersion"))


def _equal_but(a: Mapping[str, Any], b: Mapping[str, Any], skip: str) -> bool:
    """``a == b`` apart from the key ``skip``; shared values compare by identity first."""
    if len(a) != len(b):
        return False
    for key, value in b.items():
        if key != skip:
            before = a.get(key, _ABSENT)
            if before is not value and before != value:
                return False
    return skip in a or skip not in b


def _slim_status(status: Mapping[str, Any]) -> Obj:
    def make() -> Obj:
        out: Obj = {k: intern_str(status[k]) for k in _STATUS_TEXT if k in status}
        conditions = _read_conditions(status.get("conditions"))
        if conditions:
            out["conditions"] = conditions
        for key in _CONTAINER_LISTS:
            containers = [_container(c) for c in status.get(key) or ()
                          if isinstance(c, Mapping)]
            if containers:
                out[key] = containers
        return out

    # Equal encodings are equal statuses, so equal results of ``make``.
    shared: Obj = _share(_status_key(status), make)
    return shared


_READY: Obj = {"type": "Ready", "status": "True"}


def _read_conditions(conditions: Any) -> list[Obj]:
    """What the kinds read of a pod's conditions (module doc): ``Ready=True``, and the last
    condition when it is not ``True``."""
    given = [c for c in conditions or () if isinstance(c, Mapping)]
    out = [_READY] if any(c.get("type") == "Ready" and c.get("status") == "True"
                          for c in given) else []
    if given and given[-1].get("status") != "True":
        out.append(_pick(given[-1], _CONDITION_FIELDS))
    return out


def _status_key(status: Mapping[str, Any]) -> Hashable:
    return ("status", _KEY_ENCODER.encode(status))


def _pick(obj: Mapping[str, Any], keys: tuple[str, ...]) -> Obj:
    return {k: intern_str(obj[k]) for k in keys if k in obj}


def _container(status: Mapping[str, Any]) -> Obj:
    out = _pick(status, ("name", "restartCount"))
    state = status.get("state")
    if isinstance(state, Mapping):
        slim_state: Obj = {}
        if isinstance(state.get("running"), Mapping):
            slim_state["running"] = {}
        if isinstance(state.get("waiting"), Mapping):
            slim_state["waiting"] = _pick(state["waiting"], _WAITING_FIELDS)
        if isinstance(state.get("terminated"), Mapping):
            slim_state["terminated"] = _pick(state["terminated"], _TERMINATED_FIELDS)
        out["state"] = slim_state
    return out


def _share(key: Hashable, make: Callable[[], T]) -> T:
    try:
        return _shared.share(key, make)
    except TypeError:  # an unhashable value in a malformed object: keep it unshared
        return make()
