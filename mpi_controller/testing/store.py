"""What the in-memory API server keeps and how it selects (no I/O): how a resource is served
(:class:`ResourceType`, :data:`BUILTIN_TYPES`), the request log (:class:`Request`) and fault
rules (:class:`FaultRule`), the objects and history of one resource (:class:`Table`,
:class:`Change`), list and watch filters (:func:`make_filter`), continue tokens, and the JSON
round trips every request makes (:func:`wire`, :func:`roundtrip`).
"""

from __future__ import annotations

import base64
import re
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import (
    CONFIGMAPS,
    EVENTS,
    JOBS,
    LEASES,
    NAMESPACES,
    PODS,
    PRIORITY_CLASSES,
    ROLE_BINDINGS,
    ROLES,
    SECRETS,
    SERVICE_ACCOUNTS,
    SERVICES,
    STATEFUL_SETS,
    Resource,
)
from mpi_controller.kube.selectors import Selector, parse_selector
from mpi_controller.runtime.codec import dumps, loads
from mpi_controller.runtime.errors import ApiError
from mpi_controller.testing.errors import bad_request

__all__ = [
    "BUILTIN_TYPES",
    "EPOCH",
    "INCONSISTENT_CONTINUE",
    "INITIAL_EVENTS_END",
    "Change",
    "Collected",
    "FaultRule",
    "Filter",
    "Interceptor",
    "Key",
    "Request",
    "ResourceType",
    "Table",
    "TableKey",
    "check_name",
    "content_of",
    "decode_continue",
    "drop_nulls",
    "encode_continue",
    "make_filter",
    "meta_of",
    "object_key",
    "parse_rv",
    "roundtrip",
    "set_or_drop",
    "sort_key",
    "table_key",
    "wire",
]

Interceptor = Callable[["Request"], Awaitable[object] | None]
Key = tuple[str, str]  # (namespace, name); namespace "" when cluster-scoped
TableKey = tuple[str, str, str]  # (group, version, plural)
Collected = list[tuple[str, str, str]]  # (plural, namespace, name)


INITIAL_EVENTS_END = "k8s.io/initial-events-end"
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
_WRITE_VERBS = frozenset(("create", "update", "patch", "delete"))


@dataclass(frozen=True, slots=True)
class ResourceType:
    """How the fake server stores one resource (see the module doc)."""

    resource: Resource
    status_subresource: bool = False
    generation: bool = False
    custom: bool = False
    return_deleted_object: bool = False
    selectable_fields: tuple[str, ...] = ()
    default_propagation: str = "Background"
    dns1035_names: bool = False

    @property
    def key(self) -> TableKey:
        return table_key(self.resource)


def table_key(resource: Resource) -> TableKey:
    return (resource.group, resource.version, resource.plural)


BUILTIN_TYPES: tuple[ResourceType, ...] = (
    ResourceType(PODS, status_subresource=True, generation=True, return_deleted_object=True,
                 selectable_fields=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                                    "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                                    "status.podIP", "status.nominatedNodeName")),
    ResourceType(SERVICES, status_subresource=True, selectable_fields=("spec.clusterIP",
                                                                       "spec.type"),
                 dns1035_names=True),
    ResourceType(CONFIGMAPS),
    ResourceType(SECRETS, selectable_fields=("type",)),
    ResourceType(EVENTS, selectable_fields=(
        "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "type")),
    ResourceType(NAMESPACES, status_subresource=True, selectable_fields=("status.phase",)),
    ResourceType(LEASES),
    ResourceType(JOBS, status_subresource=True, generation=True, default_propagation="Orphan",
                 selectable_fields=("status.successful",)),
    ResourceType(PRIORITY_CLASSES),
    ResourceType(SERVICE_ACCOUNTS),
    ResourceType(ROLES),
    ResourceType(ROLE_BINDINGS),
    ResourceType(STATEFUL_SETS, status_subresource=True, generation=True),
)



@dataclass(frozen=True, slots=True)
class Request:
    """One call as the server saw it. ``verb``: create, get, list, watch, update, patch or
    delete; ``subresource`` is ``"status"`` for ``update_status`` and status patches; ``name``
    is ``""`` for list, watch and a create by ``generateName``; ``params`` holds a list's or
    watch's options (the keyword arguments that were not ``None``)."""

    verb: str
    resource: Resource
    namespace: str | None
    name: str
    subresource: str = ""
    body: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_write(self) -> bool:
        return self.verb in _WRITE_VERBS

    def describe(self) -> tuple[str, str, str, str]:
        """``(verb, plural[/subresource], namespace, name)``: compact for assertions."""
        what = self.resource.plural + (f"/{self.subresource}" if self.subresource else "")
        return (self.verb, what, self.namespace or "", self.name)


@dataclass(slots=True)
class FaultRule:
    """A fault rule: requests it matches (``None`` matches anything) fail or wait."""

    verb: str | None
    resource: Resource | None
    namespace: str | None
    name: str | None
    subresource: str | None
    error: ApiError | None
    delay: float
    remaining: int | None

    def matches(self, req: Request) -> bool:
        return ((self.verb is None or self.verb == req.verb)
                and (self.resource is None
                     or table_key(self.resource) == table_key(req.resource))
                and (self.namespace is None or self.namespace == (req.namespace or ""))
                and (self.name is None or self.name == req.name)
                and (self.subresource is None or self.subresource == req.subresource)
                and self.remaining != 0)



@dataclass(frozen=True, slots=True)
class Filter:
    """Which objects a list or watch sees: namespace, labels and fields."""

    namespace: str
    labels: Selector
    fields: tuple[tuple[str, bool, str], ...]  # (path, equal, value)

    def matches(self, key: Key, obj: Obj) -> bool:
        if self.namespace and key[0] != self.namespace:
            return False
        if not self.labels.matches_object(obj):
            return False
        return all((_field_value(obj, path) == value) == equal
                   for path, equal, value in self.fields)

    @property
    def selects(self) -> bool:
        return not self.labels.empty() or bool(self.fields)


def _field_value(obj: Obj, path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def make_filter(rtype: ResourceType, namespace: str | None, label_selector: str | None,
                 field_selector: str | None) -> Filter:
    try:
        labels = parse_selector(label_selector or None)
    except ValueError as exc:
        raise bad_request(f"unable to parse requirement: {exc}") from exc
    allowed = {"metadata.name", *rtype.selectable_fields}
    if rtype.resource.namespaced:
        allowed.add("metadata.namespace")
    terms: list[tuple[str, bool, str]] = []
    for term in (field_selector or "").split(","):
        term = term.strip()
        if not term:
            continue
        match = re.fullmatch(r"([^=!\s]+)\s*(!=|==|=)\s*(.*)", term)
        if match is None:
            raise bad_request(f"invalid selector: '{field_selector}'; can't understand '{term}'")
        path, op, value = match.groups()
        if path not in allowed:
            raise bad_request(f"field label not supported: {path}")
        terms.append((path, op != "!=", value))
    ns = (namespace or "") if rtype.resource.namespaced else ""
    return Filter(ns, labels, tuple(terms))



def wire(obj: Any) -> Any:
    """A JSON round trip: a deep, unshared copy of what the wire would carry."""
    return loads(dumps(obj))


def roundtrip(obj: Mapping[str, Any]) -> Obj:
    """An object's JSON round trip."""
    result: Obj = loads(dumps(obj))
    return result


def drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def meta_of(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def object_key(resource: Resource, namespace: str | None, name: str) -> Key:
    return ((namespace or "") if resource.namespaced else "", name)


def sort_key(key: Key) -> str:
    return f"{key[0]}/{key[1]}" if key[0] else key[1]


@dataclass(frozen=True, slots=True)
class Change:
    """One write: ``old`` is ``None`` for a create, ``new`` is ``None`` for a delete."""

    rv: int
    key: Key
    old: Obj | None
    new: Obj | None


@dataclass(slots=True)
class Table:
    """The objects of one resource and the history of their changes after ``floor``."""

    type: ResourceType
    objects: dict[Key, Obj] = field(default_factory=dict)
    history: deque[Change] = field(default_factory=deque)
    floor: int = 0

    def state_at(self, rv: int) -> dict[Key, Obj]:
        """The objects as they were at ``rv`` (``rv >= floor``: undo the later changes)."""
        state = dict(self.objects)
        for change in reversed(self.history):
            if change.rv <= rv:
                break
            if change.old is None:
                state.pop(change.key, None)
            else:
                state[change.key] = change.old
        return state


def encode_continue(rv: int, start: str) -> str:
    """The server's continue token: where the next page starts, in the snapshot at ``rv``
    (``-1``: the latest state)."""
    token = {"v": "meta.k8s.io/v1", "rv": rv, "start": start}
    return base64.b64encode(dumps(token)).decode()


def decode_continue(token: str) -> tuple[int, str]:
    try:
        data = loads(base64.b64decode(token, validate=True))
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("continue key is not valid: incorrect encoded start resourceVersion"
                             " (version meta.k8s.io/v1)")
        return int(data["rv"]), str(data["start"])
    except (ValueError, TypeError, KeyError) as exc:
        raise bad_request(f"invalid continue token: {exc}") from exc


def parse_rv(value: str) -> int:
    try:
        rv = int(value)
    except ValueError:
        rv = -1
    if rv < 0:
        raise bad_request(f"invalid resource version: {value!r}")
    return rv



INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can"
    " start a new list without the continue parameter, or use the continue token in this"
    " response to retrieve the remainder of the results. Continuing with the provided token"
    " results in an inconsistent list - objects that were created, modified, or deleted between"
    " the time the first chunk was returned and now may show up in the list."
)


def check_name(resource: Resource, name: str) -> None:
    """What ``RestClient`` raises, before sending anything, for a request without a name."""
    if not name:
        raise ValueError(f"empty name for {resource.group_resource}")


def set_or_drop(mapping: Obj, key: str, value: Any) -> None:
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def content_of(rtype: ResourceType, obj: Obj) -> Obj:
    """What counts for ``metadata.generation``: all but metadata (and a subresource's status)."""
    skip = ("metadata", "status") if rtype.status_subresource else ("metadata",)
    return {k: v for k, v in obj.items() if k not in skip}
