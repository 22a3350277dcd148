"""An in-memory Kubernetes API server for unit tests: :class:`FakeApi` is a
:class:`~mpi_controller.runtime.kubeclient.KubeClient`.

The real runtime (reflectors, informers with streaming or paged lists, the event recorder,
leader election, controllers) runs on it unchanged, with a
:class:`~mpi_controller.runtime.clock.ManualClock`. What it answers follows kube-apiserver
v1.36 (``k8s.io/apiserver`` registry, storage and watch cache; the ``metav1.Status`` shapes of
``k8s.io/apimachinery/pkg/api/errors``).

Contract:

* **Resources** must be known: the built-in ones of ``kube.resources`` (pods, services,
  configmaps, secrets, events, namespaces, leases, jobs, priorityclasses) are, anything else is
  added with :meth:`FakeApi.register` (a CRD: ``custom=True`` by default). A request for an
  unknown resource fails as the server's router does: 404 with the text
  ``404 page not found``. Objects are keyed by (group, version, plural, namespace, name).
* **Every request** is a fresh JSON round trip: bodies are encoded and decoded, never shared
  with the store. Map entries whose value is ``null`` are dropped on write (typed fields are
  ``omitempty``; structural CRDs prune them). Each request first yields to the event loop once,
  is appended to :attr:`FakeApi.requests` (:class:`Request`), then passes the fault rules
  (:meth:`FakeApi.fail`, :meth:`FakeApi.delay`) and :attr:`FakeApi.interceptor`, which may
  raise an :class:`ApiError`, return an awaitable (awaited first: a delay on the test's clock)
  or return ``None`` (go on).
* **resourceVersion** is one global counter (a decimal string) bumped by every write.
  ``uid`` (random, from ``seed``), ``creationTimestamp`` (``wall``, default 2024-01-01 plus the
  clock's time) are set on create; ``generateName`` gets 5 characters from the server's
  alphabet (8 attempts, then 409). ``metadata.generation`` is 1 on create and grows on any
  change outside ``metadata`` and ``status`` for resources with ``generation`` (custom ones,
  and built-ins that have it), and when deletion starts. An update that changes nothing is not
  written (same resourceVersion, no event), as in the API server.
* **Errors** are :class:`ApiError` built from the server's ``Status`` bodies: 404 NotFound
  ``pods "a" not found``; 409 AlreadyExists; 409 Conflict ``Operation cannot be fulfilled on
  <plural.group> "<name>": the object has been modified; ...`` for a stale resourceVersion,
  and a precondition text (``StorageError: invalid object ...``) for a uid/resourceVersion
  precondition; 410 Expired for a list, continue token or watch from a compacted
  resourceVersion; 422 Invalid for a missing or malformed name or bad list/watch options; 400
  for bad selectors or tokens; 500 for a resourceVersion on create; 504 for a resourceVersion
  from the future. :func:`not_found`, :func:`conflict` and friends build them for fault rules.
* **Status subresource** (``status_subresource=True``): create drops ``status``, update keeps
  the stored ``status``, :meth:`~FakeApi.update_status` (and patch with
  ``subresource="status"``) changes only ``status``. Without it, ``/status`` is 404.
* **Delete**: preconditions (uid, resourceVersion) give 409. An object with finalizers (after
  the propagation policy added ``orphan`` or ``foregroundDeletion``; ``jobs`` default to
  Orphan as batch/v1 does) gets ``deletionTimestamp`` and ``deletionGracePeriodSeconds: 0``
  and stays until an update removes its last finalizer. Otherwise it is removed at once: the
  answer is the object for pods (``ReturnDeletedObject``), else a ``Success`` Status. There is
  no garbage collector and no graceful pod deletion (pods go at once, like unscheduled ones):
  :meth:`FakeApi.collect_garbage` does the collector's work when a test calls it.
* **Patch**: ``merge`` (RFC 7386), ``json`` (RFC 6902), ``strategic`` treated as merge (lists
  are replaced, not merged by key; ``$patch``-style directives raise NotImplementedError),
  ``apply`` raises NotImplementedError. A patched ``metadata.resourceVersion`` is a
  precondition.
* **List**: label selectors (``=``, ``==``, ``!=``, ``in``, ``notin``, ``key``, ``!key``),
  field selectors (``metadata.name``, ``metadata.namespace`` and the resource's selectable
  fields; others: 400 ``field label not supported``), ``limit``/``continue`` (the server's
  token format; every page is from the first page's snapshot; ``remainingItemCount`` when
  nothing is filtered). ``resourceVersion`` ``""``/``"0"``/``NotOlderThan``: the current
  state; ``Exact``, or an RV with ``limit`` and no match: the state at that RV (410 when
  compacted). Items are decoded by ``codec`` exactly as ``RestClient`` does
  (``codec.decode_list`` of the encoded page); built-in lists carry no per-item kind.
* **Watch** (opened on first iteration, like ``RestClient``): from an RV, the stored history
  after it (410 ``too old resource version: R (F)`` as an ``ERROR`` event when compacted); from
  ``""``/``"0"`` synthetic ``ADDED`` events of the current state first; with
  ``sendInitialEvents=true`` (needs ``resourceVersionMatch=NotOlderThan``) the current state
  then a ``BOOKMARK`` annotated ``k8s.io/initial-events-end: "true"`` at the current RV.
  Selectors are applied to the old and new object of each change: an object that stops
  matching is sent as ``DELETED`` (its previous content at the new RV), one that starts
  matching as ``ADDED``. ``timeoutSeconds`` ends the watch on the clock; a watch that allows
  bookmarks gets one every ``bookmark_interval`` (60 s) and 2 s before its timeout. Events
  are decoded by ``codec.decode_event``. Test controls: :meth:`FakeApi.watches`,
  :meth:`FakeWatch.end`, :meth:`FakeWatch.fail` (raise from the iteration),
  :meth:`FakeWatch.send_error` (an ``ERROR`` event, then the end), :meth:`FakeApi.bookmark`,
  :meth:`FakeApi.compact`.
  ``watch_list=False`` makes ``sendInitialEvents`` a 422, as a server without WatchList.
* **History** is kept per resource, ``history_limit`` changes deep; :meth:`FakeApi.compact`
  drops it, so watches, exact lists and continue tokens from before that point get 410.
* **Test-side access** (not requests: not logged, not intercepted, but they write and notify
  watches like any change): :meth:`~FakeApi.add`, :meth:`~FakeApi.modify`,
  :meth:`~FakeApi.remove`, :meth:`~FakeApi.stored`, :meth:`~FakeApi.objects`.
* Not modelled: admission (namespaces need not exist), managedFields, server-side apply,
  defaulting and schema validation beyond names, graceful pod deletion, per-resource quotas.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import copy
import inspect
import random
import re
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any

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
from mpi_controller.runtime.clock import Clock, LoopClock, TimerHandle
from mpi_controller.runtime.codec import Codec, dumps, loads
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.kubeclient import KubeClient, PatchType

__all__ = [
    "INITIAL_EVENTS_END",
    "OPTIMISTIC_LOCK_MESSAGE",
    "FakeApi",
    "FakeWatch",
    "Request",
    "ResourceType",
    "already_exists",
    "conflict",
    "connection_error",
    "expired",
    "internal_error",
    "not_found",
    "status_error",
    "too_many_requests",
]

Obj = dict[str, Any]
Interceptor = Callable[["Request"], Awaitable[object] | None]
_Key = tuple[str, str]  # (namespace, name); namespace "" when cluster-scoped
_TableKey = tuple[str, str, str]  # (group, version, plural)
Collected = list[tuple[str, str, str]]  # (plural, namespace, name)

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
OPTIMISTIC_LOCK_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
_GENERATE_ATTEMPTS = 8
_MAX_GENERATED_PREFIX = 58
_GC_FINALIZERS = ("orphan", "foregroundDeletion")
_WRITE_VERBS = frozenset(("create", "update", "patch", "delete"))
_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or"
    " '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used"
    r" for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_DNS1035_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an"
    " alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or"
    " 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


# -- errors: the API server's Status bodies ----------------------------------------------------


def status_error(code: int, reason: str, message: str, details: Obj | None = None,
                 **extra: Any) -> ApiError:
    """An :class:`ApiError` carrying a ``metav1.Status`` body as the server sends it."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": extra.pop("metadata", {}),
                 "status": "Failure", "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    body.update(extra)
    return ApiError.from_status(body, code)


def _details(resource: Resource, name: str, **more: Any) -> Obj:
    out: Obj = {"name": name} if name else {}
    if resource.group:
        out["group"] = resource.group
    out["kind"] = resource.plural
    out.update(more)
    return out


def not_found(resource: Resource, name: str) -> ApiError:
    """``NewNotFound``: 404 ``<plural.group> "<name>" not found``."""
    return status_error(404, "NotFound", f'{resource.group_resource} "{name}" not found',
                        _details(resource, name))


def already_exists(resource: Resource, name: str) -> ApiError:
    """``NewAlreadyExists``: 409 ``<plural.group> "<name>" already exists``."""
    return status_error(409, "AlreadyExists", f'{resource.group_resource} "{name}" already exists',
                        _details(resource, name))


def conflict(resource: Resource, name: str, cause: str = OPTIMISTIC_LOCK_MESSAGE) -> ApiError:
    """``NewConflict``: 409 ``Operation cannot be fulfilled on <plural.group> "<name>": ...``."""
    message = f'Operation cannot be fulfilled on {resource.group_resource} "{name}": {cause}'
    return status_error(409, "Conflict", message, _details(resource, name))


def expired(message: str, **extra: Any) -> ApiError:
    """``NewResourceExpired``: 410 Expired."""
    return status_error(410, "Expired", message, **extra)


def internal_error(message: str) -> ApiError:
    """``NewInternalError``: 500 ``Internal error occurred: ...``."""
    return status_error(500, "InternalError", f"Internal error occurred: {message}",
                        {"causes": [{"message": message}]})


def too_many_requests(message: str = "please try again later", retry_after: int = 1) -> ApiError:
    """``NewTooManyRequests``: 429."""
    return status_error(429, "TooManyRequests", message, {"retryAfterSeconds": retry_after})


def connection_error(message: str = "connection reset by peer") -> ApiError:
    """What ``RestClient`` raises when no response arrives (status 0, retriable)."""
    return ApiError(0, "ConnectionError", message)


def _bad_request(message: str) -> ApiError:
    return status_error(400, "BadRequest", message)


def _page_not_found() -> ApiError:
    """The router's answer for a path nothing serves (text, not a Status), as RestClient
    reports it."""
    return ApiError(404, "NotFound", "404 page not found\n")


def _method_not_allowed() -> ApiError:
    return status_error(405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource", {})


def _too_large(rv: int, current: int) -> ApiError:
    return status_error(
        504, "Timeout", f"Timeout: Too large resource version: {rv}, current: {current}",
        {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
         "retryAfterSeconds": 1})


@dataclass(frozen=True, slots=True)
class _FieldError:
    """One ``field.Error``: ``type`` is Required, Invalid, Forbidden or Unsupported."""

    path: str
    type: str
    detail: str
    value: str | None = None

    _REASONS = {"Required": "FieldValueRequired", "Invalid": "FieldValueInvalid",
                "Forbidden": "FieldValueForbidden", "Unsupported": "FieldValueNotSupported"}

    def body(self) -> str:
        head = {"Required": "Required value", "Invalid": "Invalid value",
                "Forbidden": "Forbidden", "Unsupported": "Unsupported value"}[self.type]
        if self.value is not None:
            head += f': "{self.value}"'
        return f"{head}: {self.detail}"

    def cause(self) -> Obj:
        return {"reason": self._REASONS[self.type], "message": self.body(), "field": self.path}


def _invalid(kind: str, group: str, name: str, errors: list[_FieldError]) -> ApiError:
    """``NewInvalid``: 422 ``<Kind.group> "<name>" is invalid: <errors>``."""
    texts = [f"{e.path}: {e.body()}" for e in errors]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details: Obj = {"name": name} if name else {}
    if group:
        details["group"] = group
    details.update(kind=kind, causes=[e.cause() for e in errors])
    return status_error(422, "Invalid", f'{qualified} "{name}" is invalid: {joined}', details)


def _invalid_options(errors: list[_FieldError]) -> ApiError:
    return _invalid("ListOptions", "meta.k8s.io", "", errors)


# -- resource types ---------------------------------------------------------------------------


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
    def key(self) -> _TableKey:
        return _table_key(self.resource)


def _table_key(resource: Resource) -> _TableKey:
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


# -- requests and faults ----------------------------------------------------------------------


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
class _Rule:
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
                     or _table_key(self.resource) == _table_key(req.resource))
                and (self.namespace is None or self.namespace == (req.namespace or ""))
                and (self.name is None or self.name == req.name)
                and (self.subresource is None or self.subresource == req.subresource)
                and self.remaining != 0)


# -- selectors ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Filter:
    """Which objects a list or watch sees: namespace, labels and fields."""

    namespace: str
    labels: Selector
    fields: tuple[tuple[str, bool, str], ...]  # (path, equal, value)

    def matches(self, key: _Key, obj: Obj) -> bool:
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


def _make_filter(rtype: ResourceType, namespace: str | None, label_selector: str | None,
                 field_selector: str | None) -> _Filter:
    try:
        labels = parse_selector(label_selector or None)
    except ValueError as exc:
        raise _bad_request(f"unable to parse requirement: {exc}") from exc
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
            raise _bad_request(f"invalid selector: '{field_selector}'; can't understand '{term}'")
        path, op, value = match.groups()
        if path not in allowed:
            raise _bad_request(f"field label not supported: {path}")
        terms.append((path, op != "!=", value))
    ns = (namespace or "") if rtype.resource.namespaced else ""
    return _Filter(ns, labels, tuple(terms))


# -- patches ------------------------------------------------------------------------------------


class _PatchFailed(Exception):
    """A JSON patch that cannot be applied (422) or decoded (400)."""

    def __init__(self, message: str, decoding: bool = False) -> None:
        super().__init__(message)
        self.decoding = decoding


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: ``null`` removes a key, objects merge, anything else
    replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result: Obj = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise _PatchFailed(f"JSON pointer must be empty or start with a \"/\": {path!r}", True)
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def _index(container: list[Any], token: str, *, append: bool) -> int:
    if append and token == "-":
        return len(container)
    if not token.isdigit():
        raise _PatchFailed(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not append):
        raise _PatchFailed(f"array index {index} out of bounds")
    return index


def _parent(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, append=False)]
        else:
            raise _PatchFailed(f"missing path segment {token!r}")
    return node


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, append=False)]
    raise _PatchFailed(f"missing value at {'/'.join(tokens)!r}")


def _remove(doc: Any, tokens: list[str]) -> Any:
    value = _get(doc, tokens)
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict):
        del parent[last]
    else:
        del parent[_index(parent, last, append=False)]
    return value


def _add(doc: Any, tokens: list[str], value: Any, *, replace: bool = False) -> Any:
    if not tokens:
        return value
    if replace:
        _get(doc, tokens)  # must exist
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        index = _index(parent, last, append=not replace)
        if replace:
            parent[index] = value
        else:
            parent.insert(index, value)
    else:
        raise _PatchFailed(f"cannot add to a {type(parent).__name__}")
    return doc


def json_patch(doc: Any, operations: Any) -> Any:
    """RFC 6902 JSON patch (add, remove, replace, move, copy, test) applied to a copy."""
    if not isinstance(operations, list):
        raise _PatchFailed("a JSON patch must be a list of operations", True)
    doc = copy.deepcopy(doc)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise _PatchFailed(f"malformed operation {op!r}", True)
        kind, tokens = op["op"], _pointer(op["path"])
        if kind in ("add", "replace", "test") and "value" not in op:
            raise _PatchFailed(f"operation {kind} needs a value", True)
        if kind == "add":
            doc = _add(doc, tokens, copy.deepcopy(op["value"]))
        elif kind == "replace":
            doc = _add(doc, tokens, copy.deepcopy(op["value"]), replace=True)
        elif kind == "remove":
            _remove(doc, tokens)
        elif kind in ("move", "copy"):
            source = _pointer(op.get("from"))
            value = _remove(doc, source) if kind == "move" else copy.deepcopy(_get(doc, source))
            doc = _add(doc, tokens, value)
        elif kind == "test":
            if _get(doc, tokens) != op["value"]:
                raise _PatchFailed(f"test failed at {op['path']!r}")
        else:
            raise _PatchFailed(f"unexpected operation {kind!r}", True)
    return doc


_STRATEGIC_DIRECTIVE = re.compile(r"^\$(patch|retainKeys|deleteFromPrimitiveList|setElementOrder)")


def _has_directive(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_STRATEGIC_DIRECTIVE.match(str(k)) or _has_directive(v)
                   for k, v in value.items())
    if isinstance(value, list):
        return any(_has_directive(v) for v in value)
    return False


# -- store internals ----------------------------------------------------------------------------


def _wire(obj: Any) -> Any:
    """A JSON round trip: a deep, unshared copy of what the wire would carry."""
    return loads(dumps(obj))


def _copy(obj: Mapping[str, Any]) -> Obj:
    """An object's JSON round trip."""
    result: Obj = loads(dumps(obj))
    return result


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def _key(resource: Resource, namespace: str | None, name: str) -> _Key:
    return ((namespace or "") if resource.namespaced else "", name)


def _sort_key(key: _Key) -> str:
    return f"{key[0]}/{key[1]}" if key[0] else key[1]


@dataclass(frozen=True, slots=True)
class _Change:
    """One write: ``old`` is ``None`` for a create, ``new`` is ``None`` for a delete."""

    rv: int
    key: _Key
    old: Obj | None
    new: Obj | None


@dataclass(slots=True)
class _Table:
    """The objects of one resource and the history of their changes after ``floor``."""

    type: ResourceType
    objects: dict[_Key, Obj] = field(default_factory=dict)
    history: deque[_Change] = field(default_factory=deque)
    floor: int = 0

    def state_at(self, rv: int) -> dict[_Key, Obj]:
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


def _encode_continue(rv: int, start: str) -> str:
    """The server's continue token: where the next page starts, in the snapshot at ``rv``
    (``-1``: the latest state)."""
    token = {"v": "meta.k8s.io/v1", "rv": rv, "start": start}
    return base64.b64encode(dumps(token)).decode()


def _decode_continue(token: str) -> tuple[int, str]:
    try:
        data = loads(base64.b64decode(token, validate=True))
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("continue key is not valid: incorrect encoded start resourceVersion"
                             " (version meta.k8s.io/v1)")
        return int(data["rv"]), str(data["start"])
    except (ValueError, TypeError, KeyError) as exc:
        raise _bad_request(f"invalid continue token: {exc}") from exc


def _parse_rv(value: str) -> int:
    try:
        rv = int(value)
    except ValueError:
        rv = -1
    if rv < 0:
        raise _bad_request(f"invalid resource version: {value!r}")
    return rv


# -- watches ------------------------------------------------------------------------------------


class _End:
    """Queue marker: the server closed the stream."""


_END = _End()


class FakeWatch:
    """An open watch on a :class:`FakeApi` (see the module doc); the test drives its end."""

    def __init__(self, api: FakeApi, resource: Resource, params: Obj, codec: Codec | None) -> None:
        self._api = api
        self.resource = resource
        self.params = params
        self._codec = codec
        self._queue: asyncio.Queue[Obj | _End | ApiError] = asyncio.Queue()
        self._filter: _Filter | None = None
        self._timers: list[TimerHandle] = []
        self._deadline: float | None = None
        self.opened = False
        self.closed = False

    # -- test controls --------------------------------------------------------------------

    def end(self) -> None:
        """End the stream normally after the events already sent."""
        self._queue.put_nowait(_END)

    def fail(self, error: ApiError | None = None) -> None:
        """Break the stream: the iteration raises ``error`` (default: a lost connection)."""
        self._queue.put_nowait(error or connection_error())

    def send_error(self, error: ApiError) -> None:
        """Send an ``ERROR`` event carrying ``error``'s Status, then end the stream."""
        status = error.body or {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                "status": "Failure", "message": error.message,
                                "reason": error.reason, "code": error.status}
        self._queue.put_nowait({"type": "ERROR", "object": status})
        self.end()

    # -- server side ----------------------------------------------------------------------

    def _start(self, filter_: _Filter) -> None:
        self._filter = filter_
        self.opened = True

    def _arm(self, timeout: int | None, bookmarks: bool) -> None:
        """Schedule the end at ``timeout`` and, with ``bookmarks``, the server's heartbeat."""
        clock = self._api.clock
        if timeout:
            self._deadline = clock.now() + timeout
            self._timers.append(clock.call_at(self._deadline, self.end))
        if bookmarks and self._api.bookmark_interval:
            self._schedule_heartbeat()

    def _schedule_heartbeat(self) -> None:
        """The next periodic BOOKMARK: ``bookmark_interval`` from now, or 2 s before the
        deadline if that comes first (``cacheWatcher.nextBookmarkTime``)."""
        clock, interval = self._api.clock, self._api.bookmark_interval
        assert interval
        when = clock.now() + interval
        if self._deadline is not None and self._deadline - 2.0 > clock.now():
            when = min(when, self._deadline - 2.0)
        self._timers.append(clock.call_at(when, self._heartbeat))

    def _heartbeat(self) -> None:
        if not self.closed:
            self._bookmark(self._api._rv)
            self._schedule_heartbeat()

    def _send(self, kind: str, obj: Obj) -> None:
        self._queue.put_nowait({"type": kind, "object": obj})

    def _offer(self, change: _Change) -> None:
        """Send what this watcher sees of ``change`` (nothing, ADDED, MODIFIED or DELETED)."""
        assert self._filter is not None
        new_passes = change.new is not None and self._filter.matches(change.key, change.new)
        old_passes = change.old is not None and self._filter.matches(change.key, change.old)
        if new_passes and change.new is not None:
            self._send("MODIFIED" if old_passes else "ADDED", change.new)
        elif old_passes and change.old is not None:
            gone = copy.copy(change.old)
            gone["metadata"] = {**change.old["metadata"], "resourceVersion": str(change.rv)}
            self._send("DELETED", gone)

    def _bookmark(self, rv: int, initial_end: bool = False) -> None:
        meta: Obj = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        self._send("BOOKMARK", {"kind": self.resource.kind,
                                "apiVersion": self.resource.api_version, "metadata": meta})

    def _stop(self) -> None:
        if not self.closed:
            self.closed = True
            for timer in self._timers:
                timer.cancel()
            self._api._forget(self)

    # -- client side ----------------------------------------------------------------------

    def __aiter__(self) -> FakeWatch:
        return self

    async def open(self) -> None:
        """Send the watch request now (the first read does it otherwise); raises what the
        server answers instead of a stream."""
        if self.opened or self.closed:
            return
        try:
            await self._api._open(self)
        except BaseException:
            self._stop()
            raise

    async def __anext__(self) -> Obj:
        if self.closed:
            raise StopAsyncIteration
        await self.open()
        item = await self._queue.get()
        if self.closed or isinstance(item, _End):
            self._stop()
            raise StopAsyncIteration
        if isinstance(item, ApiError):
            self._stop()
            raise item
        data = dumps(item)
        event: Obj = self._codec.decode_event(data) if self._codec else loads(data)
        return event

    async def aclose(self) -> None:
        """Stop the watch (idempotent); a pending or later read ends the iteration."""
        self._stop()
        self._queue.put_nowait(_END)

    async def __aenter__(self) -> FakeWatch:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


# -- the server ---------------------------------------------------------------------------------


class FakeApi:
    """An in-memory API server behind the :class:`KubeClient` verbs (see the module doc)."""

    def __init__(self, *, clock: Clock | None = None, seed: int = 0,
                 wall: Callable[[], datetime] | None = None, history_limit: int = 10_000,
                 watch_list: bool = True, bookmark_interval: float | None = 60.0,
                 types: Iterable[ResourceType] = BUILTIN_TYPES) -> None:
        self.clock: Clock = clock or LoopClock()
        self.rng = random.Random(seed)
        self._wall = wall or (lambda: EPOCH + timedelta(seconds=self.clock.now()))
        self.history_limit = history_limit
        self.watch_list = watch_list
        self.bookmark_interval = bookmark_interval
        self.requests: builtins.list[Request] = []
        self.interceptor: Interceptor | None = None
        self._rules: builtins.list[_Rule] = []
        self._rv = 0
        self._tables: dict[_TableKey, _Table] = {}
        self._watches: builtins.list[FakeWatch] = []
        self._closed = False
        for rtype in types:
            self._tables[rtype.key] = _Table(rtype)

    # -- setup ------------------------------------------------------------------------------

    def register(self, resource: Resource, *, status_subresource: bool = False,
                 custom: bool = True, generation: bool | None = None,
                 selectable_fields: Iterable[str] = (), default_propagation: str = "Background",
                 return_deleted_object: bool = False) -> ResourceType:
        """Serve ``resource`` (a CRD when ``custom``: generation tracked, list items keep
        their kind). Re-registering replaces the type and keeps the objects."""
        if not resource.kind:
            raise ValueError(f"{resource.group_resource}: a registered Resource needs a kind")
        rtype = ResourceType(
            resource, status_subresource=status_subresource,
            generation=custom if generation is None else generation, custom=custom,
            return_deleted_object=return_deleted_object,
            selectable_fields=tuple(selectable_fields), default_propagation=default_propagation)
        table = self._tables.get(rtype.key)
        if table is None:
            self._tables[rtype.key] = _Table(rtype)
        else:
            table.type = rtype
        return rtype

    @property
    def resource_version(self) -> str:
        """The current (last written) resourceVersion."""
        return str(self._rv)

    # -- faults and the request log -----------------------------------------------------------

    def fail(self, error: ApiError, *, verb: str | None = None, resource: Resource | None = None,
             namespace: str | None = None, name: str | None = None,
             subresource: str | None = None, times: int | None = 1) -> None:
        """Make the next ``times`` matching requests (``None``: all) fail with ``error``."""
        self._rules.append(_Rule(verb, resource, namespace, name, subresource, error, 0.0, times))

    def delay(self, seconds: float, *, verb: str | None = None,
              resource: Resource | None = None, namespace: str | None = None,
              name: str | None = None, subresource: str | None = None,
              times: int | None = 1) -> None:
        """Hold the next ``times`` matching requests for ``seconds`` on the clock."""
        self._rules.append(_Rule(verb, resource, namespace, name, subresource, None, seconds,
                                 times))

    def clear_faults(self) -> None:
        self._rules.clear()
        self.interceptor = None

    def writes(self) -> builtins.list[Request]:
        """The logged create, update, patch and delete requests, in order."""
        return [r for r in self.requests if r.is_write]

    async def _admit(self, req: Request) -> None:
        await asyncio.sleep(0)  # a request is never answered synchronously
        self.requests.append(req)
        if self._closed:
            raise connection_error("the client is closed")
        for rule in self._rules:
            if rule.matches(req):
                if rule.remaining is not None:
                    rule.remaining -= 1
                if rule.delay:
                    await self.clock.sleep(rule.delay)
                if rule.error is not None:
                    raise rule.error
                break
        if self.interceptor is not None:
            outcome = self.interceptor(req)
            if inspect.isawaitable(outcome):
                await outcome

    # -- tables -----------------------------------------------------------------------------

    def _table(self, resource: Resource) -> _Table:
        table = self._tables.get(_table_key(resource))
        if table is None:
            raise _page_not_found()
        return table

    def _namespace(self, table: _Table, namespace: str | None) -> str:
        """The namespace a name-addressed request is for (``""`` when cluster-scoped)."""
        if not table.type.resource.namespaced:
            return ""
        if not namespace:
            raise _page_not_found()
        return namespace

    def _existing(self, table: _Table, key: _Key) -> Obj:
        obj = table.objects.get(key)
        if obj is None:
            raise not_found(table.type.resource, key[1])
        return obj

    def _commit(self, table: _Table, key: _Key, new: Obj | None) -> Obj | None:
        """Store ``new`` (``None`` deletes) under a fresh resourceVersion and tell watchers."""
        self._rv += 1
        old = table.objects.get(key)
        if new is None:
            table.objects.pop(key, None)
        else:
            _meta(new)["resourceVersion"] = str(self._rv)
            table.objects[key] = new
        change = _Change(self._rv, key, old, new)
        table.history.append(change)
        while len(table.history) > self.history_limit:
            table.floor = table.history.popleft().rv
        for watch in list(self._watches):
            if watch._filter is not None and _table_key(watch.resource) == table.type.key:
                watch._offer(change)
        return new

    def _now(self) -> str:
        return self._wall().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _storage_key(self, rtype: ResourceType, key: _Key) -> str:
        group = f"{rtype.resource.group}/" if rtype.custom and rtype.resource.group else ""
        return f"/registry/{group}{rtype.resource.plural}/{_sort_key(key)}"

    def _precondition_failed(self, table: _Table, key: _Key, what: str, wanted: str,
                             actual: str) -> ApiError:
        cause = (f"StorageError: invalid object, Code: 4, Key: {self._storage_key(table.type, key)}"
                 f", ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: {what} in"
                 f" precondition: {wanted}, {what} in object meta: {actual}")
        return conflict(table.type.resource, key[1], cause)

    # -- create -----------------------------------------------------------------------------

    async def create(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None) -> Obj:
        meta_in = body.get("metadata") or {}
        ns = namespace or meta_in.get("namespace")
        await self._admit(Request("create", resource, ns, str(meta_in.get("name") or ""),
                                  body=_wire(body)))
        table = self._table(resource)
        if resource.namespaced and not ns:
            raise _method_not_allowed()
        return _copy(self._create(table, _copy(body), _key(resource, ns, "")[0],
                                  keep_status=False))

    def _create(self, table: _Table, obj: Obj, namespace: str, *, keep_status: bool) -> Obj:
        rtype = table.type
        res = rtype.resource
        meta = _meta(obj)
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise _bad_request("the namespace of the provided object does not match the"
                                   " namespace sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if meta.get("resourceVersion"):
            raise internal_error("resourceVersion should not be set on objects to be created")
        generate = str(meta.get("generateName") or "")
        name = str(meta.get("name") or "")
        if not name and not generate:
            raise _invalid(res.kind, res.group, "", [_FieldError(
                "metadata.name", "Required", "name or generateName is required")])
        if not name:
            name = self._generate_name(table, namespace, generate)
        self._validate_name(rtype, name)
        key = (namespace, name)
        if key in table.objects:
            raise already_exists(res, name)
        obj["apiVersion"], obj["kind"] = res.api_version, res.kind
        meta["name"] = name
        meta["uid"] = self._new_uid()
        meta["creationTimestamp"] = self._now()
        for server_field in ("deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                             "selfLink", "managedFields"):
            meta.pop(server_field, None)
        if rtype.generation:
            meta["generation"] = 1
        if rtype.status_subresource and not keep_status:
            obj.pop("status", None)
        stored = self._commit(table, key, _drop_nulls(obj))
        assert stored is not None
        return stored

    def _generate_name(self, table: _Table, namespace: str, prefix: str) -> str:
        for _ in range(_GENERATE_ATTEMPTS):
            name = prefix[:_MAX_GENERATED_PREFIX] + "".join(
                self.rng.choice(_NAME_ALPHABET) for _ in range(5))
            if (namespace, name) not in table.objects:
                return name
        res = table.type.resource
        raise status_error(
            409, "AlreadyExists", f'{res.group_resource} "{name}" already exists, the server was'
            " not able to generate a unique name for the object",
            _details(res, name, retryAfterSeconds=1))

    def _validate_name(self, rtype: ResourceType, name: str) -> None:
        res = rtype.resource
        pattern, message, limit = ((_DNS1035_RE, _DNS1035_MSG, 63) if rtype.dns1035_names
                                   else (_SUBDOMAIN_RE, _SUBDOMAIN_MSG, 253))
        errors = []
        if len(name) > limit:
            errors.append(_FieldError("metadata.name", "Invalid",
                                      f"must be no more than {limit} characters", name))
        if not pattern.fullmatch(name):
            errors.append(_FieldError("metadata.name", "Invalid", message, name))
        if errors:
            raise _invalid(res.kind, res.group, name, errors)

    # -- get and list -----------------------------------------------------------------------

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        _check_name(resource, name)
        await self._admit(Request("get", resource, namespace, name))
        table = self._table(resource)
        return _copy(self._existing(table, (self._namespace(table, namespace), name)))

    async def list(self, resource: Resource, *, namespace: str | None = None,
                   label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None,
                   resource_version_match: str | None = None,
                   timeout_seconds: int | None = None, codec: Codec | None = None) -> Obj:
        params = {"label_selector": label_selector, "field_selector": field_selector,
                  "limit": limit, "continue_": continue_, "resource_version": resource_version,
                  "resource_version_match": resource_version_match}
        await self._admit(Request("list", resource, namespace, "",
                                  params={k: v for k, v in params.items() if v is not None}))
        table = self._table(resource)
        rv_text, match = resource_version or "", resource_version_match or ""
        self._validate_list_options(rv_text, match, continue_ or "")
        filter_ = _make_filter(table.type, namespace, label_selector, field_selector)
        start = ""
        if continue_:
            if rv_text not in ("", "0"):
                raise _bad_request("specifying resource version is not allowed when using"
                                   " continue")
            snapshot_rv, start = _decode_continue(continue_)
            if snapshot_rv < 0:
                snapshot_rv = self._rv
            elif snapshot_rv < table.floor:
                fresh = _encode_continue(-1, start)
                raise expired(_INCONSISTENT_CONTINUE, metadata={"continue": fresh})
        else:
            snapshot_rv = self._list_rv(table, rv_text, match, limit)
        state = table.objects if snapshot_rv == self._rv else table.state_at(snapshot_rv)
        keys = sorted((k for k, o in state.items() if filter_.matches(k, o)), key=_sort_key)
        if start:
            keys = [k for k in keys if _sort_key(k) >= start]
        metadata: Obj = {"resourceVersion": str(snapshot_rv)}
        if limit and len(keys) > limit:
            start = _sort_key(keys[limit - 1]) + "\x00"
            metadata["continue"] = _encode_continue(snapshot_rv, start)
            if not filter_.selects:
                metadata["remainingItemCount"] = len(keys) - limit
            keys = keys[:limit]
        items = [self._list_item(table.type, state[k]) for k in keys]
        page = {"kind": f"{resource.kind}List", "apiVersion": resource.api_version,
                "metadata": metadata, "items": items}
        data = dumps(page)
        result: Obj = codec.decode_list(data) if codec is not None else loads(data)
        return result

    @staticmethod
    def _list_item(rtype: ResourceType, obj: Obj) -> Obj:
        if rtype.custom:
            return obj
        return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}

    def _list_rv(self, table: _Table, rv_text: str, match: str, limit: int | None) -> int:
        """The resourceVersion whose state a list (without continue) shows."""
        if rv_text in ("", "0"):
            return self._rv
        rv = _parse_rv(rv_text)
        if rv > self._rv:
            raise _too_large(rv, self._rv)
        exact = match == "Exact" or (not match and bool(limit))
        if not exact:
            return self._rv
        if rv < table.floor:
            raise expired("The resourceVersion for the provided list is too old.")
        return rv

    @staticmethod
    def _validate_list_options(rv: str, match: str, continue_: str) -> None:
        errors: builtins.list[_FieldError] = []
        if match:
            if not rv:
                errors.append(_FieldError("resourceVersionMatch", "Forbidden",
                                          "resourceVersionMatch is forbidden unless"
                                          " resourceVersion is provided"))
            if continue_:
                errors.append(_FieldError("resourceVersionMatch", "Forbidden",
                                          "resourceVersionMatch is forbidden when continue is"
                                          " provided"))
            if match not in ("Exact", "NotOlderThan"):
                errors.append(_FieldError("resourceVersionMatch", "Unsupported",
                                          'supported values: "Exact", "NotOlderThan", ""',
                                          match))
            if match == "Exact" and rv == "0":
                errors.append(_FieldError("resourceVersionMatch", "Forbidden",
                                          'resourceVersionMatch "exact" is forbidden for'
                                          ' resourceVersion "0"'))
        if errors:
            raise _invalid_options(errors)

    # -- watch ------------------------------------------------------------------------------

    def watch(self, resource: Resource, *, namespace: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None,
              resource_version: str | None = None, allow_watch_bookmarks: bool = True,
              timeout_seconds: int | None = None, send_initial_events: bool | None = None,
              resource_version_match: str | None = None,
              codec: Codec | None = None) -> FakeWatch:
        params: Obj = {
            "namespace": namespace, "label_selector": label_selector,
            "field_selector": field_selector, "resource_version": resource_version,
            "allow_watch_bookmarks": allow_watch_bookmarks, "timeout_seconds": timeout_seconds,
            "send_initial_events": send_initial_events,
            "resource_version_match": resource_version_match,
        }
        return FakeWatch(self, resource, params, codec)

    async def _open(self, watch: FakeWatch) -> None:
        """Serve a watch's opening: validate, register, queue its first events."""
        p = watch.params
        await self._admit(Request("watch", watch.resource, p["namespace"], "", params={
            k: v for k, v in p.items() if v is not None and k != "namespace"}))
        table = self._table(watch.resource)
        rv_text, send_initial = p["resource_version"] or "", p["send_initial_events"]
        self._validate_watch_options(p["resource_version_match"] or "", send_initial)
        filter_ = _make_filter(table.type, p["namespace"], p["label_selector"],
                               p["field_selector"])
        rv = _parse_rv(rv_text) if rv_text else 0
        watch._start(filter_)
        if send_initial is not True and 0 < rv < table.floor:
            watch.send_error(expired(f"too old resource version: {rv} ({table.floor})"))
            return
        self._watches.append(watch)
        watch._arm(p["timeout_seconds"], p["allow_watch_bookmarks"])
        if send_initial is not True and rv > 0:
            for change in table.history:
                if change.rv > rv:
                    watch._offer(change)
            return
        if send_initial is True or send_initial is None:
            for key in sorted(table.objects, key=_sort_key):
                obj = table.objects[key]
                if filter_.matches(key, obj):
                    watch._send("ADDED", obj)
        if send_initial is True and p["allow_watch_bookmarks"]:
            watch._bookmark(self._rv, initial_end=True)

    def _validate_watch_options(self, match: str, send_initial: bool | None) -> None:
        errors: builtins.list[_FieldError] = []
        if send_initial is not None:
            if match != "NotOlderThan":
                errors.append(_FieldError("resourceVersionMatch", "Forbidden",
                                          "sendInitialEvents requires setting"
                                          " resourceVersionMatch to NotOlderThan"))
            if not self.watch_list:
                errors.append(_FieldError("sendInitialEvents", "Forbidden",
                                          "sendInitialEvents is forbidden for watch unless the"
                                          " WatchList feature gate is enabled"))
        if match:
            if send_initial is None:
                errors.append(_FieldError("resourceVersionMatch", "Forbidden",
                                          "resourceVersionMatch is forbidden for watch unless"
                                          " sendInitialEvents is provided"))
            if match != "NotOlderThan":
                errors.append(_FieldError("resourceVersionMatch", "Unsupported",
                                          'supported values: "NotOlderThan"', match))
        if errors:
            raise _invalid_options(errors)

    def _forget(self, watch: FakeWatch) -> None:
        if watch in self._watches:
            self._watches.remove(watch)

    def watches(self, resource: Resource | None = None) -> builtins.list[FakeWatch]:
        """The open watches (of ``resource``), oldest first."""
        return [w for w in self._watches
                if resource is None or _table_key(w.resource) == _table_key(resource)]

    def end_watches(self, resource: Resource | None = None) -> int:
        """End every open watch (of ``resource``) normally; how many."""
        found = self.watches(resource)
        for watch in found:
            watch.end()
        return len(found)

    def fail_watches(self, error: ApiError | None = None,
                     resource: Resource | None = None) -> int:
        """Break every open watch (of ``resource``) with ``error``; how many."""
        found = self.watches(resource)
        for watch in found:
            watch.fail(error)
        return len(found)

    def bookmark(self, resource: Resource | None = None) -> None:
        """Send a BOOKMARK at the current resourceVersion to every watch that allows them."""
        for watch in self.watches(resource):
            if watch.params["allow_watch_bookmarks"]:
                watch._bookmark(self._rv)

    def compact(self, resource: Resource | None = None) -> None:
        """Forget the history up to now (of ``resource``): older resourceVersions get 410."""
        for table in self._tables.values():
            if resource is None or table.type.key == _table_key(resource):
                table.history.clear()
                table.floor = self._rv

    # -- update -------------------------------------------------------------------------------

    async def update(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None) -> Obj:
        return await self._put(resource, body, namespace, "")

    async def update_status(self, resource: Resource, body: Mapping[str, Any], *,
                            namespace: str | None = None,
                            field_manager: str | None = None) -> Obj:
        return await self._put(resource, body, namespace, "status")

    async def _put(self, resource: Resource, body: Mapping[str, Any], namespace: str | None,
                   subresource: str) -> Obj:
        meta_in = body.get("metadata") or {}
        ns = namespace or meta_in.get("namespace")
        name = str(meta_in.get("name") or "")
        _check_name(resource, name)
        await self._admit(Request("update", resource, ns, name, subresource, _wire(body)))
        table = self._table(resource)
        if subresource and not table.type.status_subresource:
            raise _page_not_found()
        key = (self._namespace(table, ns), name)
        incoming = _copy(body)
        if table.type.resource.namespaced and _meta(incoming).get("namespace", key[0]) != key[0]:
            raise _bad_request("the namespace of the provided object does not match the"
                               " namespace sent on the request")
        return _copy(self._update(table, key, incoming, subresource))

    def _update(self, table: _Table, key: _Key, incoming: Obj, subresource: str) -> Obj:
        """Write ``incoming`` over the stored object as PUT (``subresource`` ``"status"``:
        its status only); preconditions from its resourceVersion and uid."""
        rtype, existing = table.type, self._existing(table, key)
        old_meta, in_meta = existing["metadata"], _meta(incoming)
        rv = in_meta.get("resourceVersion")
        if rv and rv != old_meta["resourceVersion"]:
            raise conflict(rtype.resource, key[1])
        uid = in_meta.get("uid")
        if uid and uid != old_meta["uid"]:
            raise self._precondition_failed(table, key, "UID", uid, old_meta["uid"])
        if subresource == "status":
            new = copy.deepcopy(existing)
            _set_or_drop(new, "status", incoming.get("status"))
        else:
            new = incoming
            new["apiVersion"], new["kind"] = rtype.resource.api_version, rtype.resource.kind
            meta = _meta(new)
            for kept in ("uid", "creationTimestamp", "deletionTimestamp",
                         "deletionGracePeriodSeconds", "generation", "namespace"):
                _set_or_drop(meta, kept, old_meta.get(kept))
            meta["name"] = key[1]
            meta.pop("managedFields", None)
            if rtype.status_subresource:
                _set_or_drop(new, "status", existing.get("status"))
            if rtype.generation and _content(rtype, new) != _content(rtype, existing):
                meta["generation"] = int(old_meta.get("generation") or 0) + 1
        return self._write(table, key, existing, _drop_nulls(new))

    def _write(self, table: _Table, key: _Key, existing: Obj, new: Obj) -> Obj:
        """Store an update unless it changes nothing; a terminating object whose last
        finalizer went is deleted instead (the deletion's answer is returned)."""
        _meta(new)["resourceVersion"] = existing["metadata"]["resourceVersion"]
        if new == existing:
            return existing
        meta = new["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            return self._remove(table, key)
        stored = self._commit(table, key, new)
        assert stored is not None
        return stored

    def _remove(self, table: _Table, key: _Key) -> Obj:
        existing = table.objects[key]
        self._commit(table, key, None)
        if table.type.return_deleted_object:
            return existing
        meta = existing["metadata"]
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "details": _details(table.type.resource, key[1], uid=meta["uid"])}

    # -- patch ----------------------------------------------------------------------------------

    async def patch(self, resource: Resource, name: str, body: Any, *,
                    namespace: str | None = None, patch_type: PatchType = "merge",
                    field_manager: str | None = None, force: bool | None = None,
                    subresource: str | None = None) -> Obj:
        _check_name(resource, name)
        await self._admit(Request("patch", resource, namespace, name, subresource or "",
                                  _wire(body)))
        if patch_type == "apply":
            raise NotImplementedError("FakeApi does not implement server-side apply")
        if subresource not in (None, "", "status"):
            raise NotImplementedError(f"FakeApi does not serve the {subresource} subresource")
        if patch_type == "strategic" and _has_directive(body):
            raise NotImplementedError("FakeApi treats strategic merge patches as merge patches;"
                                      " $-directives are not implemented")
        table = self._table(resource)
        if subresource and not table.type.status_subresource:
            raise _page_not_found()
        key = (self._namespace(table, namespace), name)
        existing = self._existing(table, key)
        try:
            patched = (json_patch(existing, _wire(body)) if patch_type == "json"
                       else merge_patch(_copy(existing), _wire(body)))
        except _PatchFailed as exc:
            if exc.decoding:
                raise _bad_request(str(exc)) from exc
            raise status_error(422, "Invalid", "the server rejected our request due to an error"
                               " in our request", {}) from exc
        if not isinstance(patched, dict):
            raise _bad_request("the patched object is not a JSON object")
        return _copy(self._update(table, key, patched, subresource or ""))

    # -- delete ---------------------------------------------------------------------------------

    async def delete(self, resource: Resource, name: str, *, namespace: str | None = None,
                     propagation_policy: str | None = None,
                     preconditions: Mapping[str, str] | None = None,
                     grace_period_seconds: int | None = None) -> Obj:
        _check_name(resource, name)
        await self._admit(Request("delete", resource, namespace, name))
        table = self._table(resource)
        key = (self._namespace(table, namespace), name)
        existing = self._existing(table, key)
        meta = existing["metadata"]
        for field_name, what in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            wanted = (preconditions or {}).get(field_name)
            if wanted is not None and wanted != meta[field_name]:
                raise self._precondition_failed(table, key, what, wanted, meta[field_name])
        if propagation_policy not in (None, "Orphan", "Background", "Foreground"):
            raise _invalid("DeleteOptions", "meta.k8s.io", "", [_FieldError(
                "propagationPolicy", "Unsupported",
                'supported values: "Foreground", "Background", "Orphan", "nil"',
                propagation_policy)])
        return _copy(self._delete(table, key, propagation_policy))

    def _delete(self, table: _Table, key: _Key, policy: str | None) -> Obj:
        existing = table.objects[key]
        meta = existing["metadata"]
        finalizers = [f for f in meta.get("finalizers") or () if f not in _GC_FINALIZERS]
        kept = [f for f in meta.get("finalizers") or () if f in _GC_FINALIZERS]
        if policy is None and not kept:
            policy = table.type.default_propagation
        if policy == "Orphan":
            kept = ["orphan"]
        elif policy == "Foreground":
            kept = ["foregroundDeletion"]
        elif policy == "Background":
            kept = []
        finalizers += kept
        if not finalizers:
            return self._remove(table, key)
        new = copy.deepcopy(existing)
        new_meta = new["metadata"]
        new_meta["finalizers"] = finalizers
        if not new_meta.get("deletionTimestamp") and new_meta.get("generation"):
            new_meta["generation"] += 1
        new_meta.setdefault("deletionTimestamp", self._now())
        new_meta["deletionGracePeriodSeconds"] = 0
        return self._write(table, key, existing, new)

    async def close(self) -> None:
        """End every watch; later requests fail like a closed connection."""
        self._closed = True
        for watch in list(self._watches):
            await watch.aclose()

    # -- the garbage collector, on demand -------------------------------------------------------

    def collect_garbage(self) -> Collected:
        """Do the garbage collector's work until nothing is left to do: for an owner being
        deleted with ``orphan``, drop the dependents' references to it, then the finalizer;
        with ``foregroundDeletion``, delete its dependents, then (none left) the finalizer;
        delete objects whose owners are all gone (in the background); drop references to
        owners that are gone from objects that still have one. Returns the objects whose
        deletion it asked for, as ``(plural, namespace, name)``, in order."""
        deleted: Collected = []
        while self._gc_step(deleted):
            pass
        return deleted

    def _gc_step(self, deleted: Collected) -> bool:
        """One collector action; False when there is none to take."""
        alive = {obj["metadata"]["uid"] for table in self._tables.values()
                 for obj in table.objects.values()}
        for table in self._tables.values():
            for key, obj in list(table.objects.items()):
                meta = obj["metadata"]
                terminating = bool(meta.get("deletionTimestamp"))
                finalizers = meta.get("finalizers") or []
                if terminating and "orphan" in finalizers:
                    for dep_table, dep_key in self._dependents(meta["uid"]):
                        self._drop_owners(dep_table, dep_key, {meta["uid"]})
                    self._drop_finalizer(table, key, "orphan")
                    return True
                if terminating and "foregroundDeletion" in finalizers:
                    dependents = self._dependents(meta["uid"])
                    for dep_table, dep_key in dependents:
                        if not dep_table.objects[dep_key]["metadata"].get("deletionTimestamp"):
                            self._gc_delete(dep_table, dep_key, deleted)
                            return True
                    if not dependents:
                        self._drop_finalizer(table, key, "foregroundDeletion")
                        return True
                refs = meta.get("ownerReferences") or []
                gone = {ref.get("uid") for ref in refs} - alive
                if refs and len(gone) == len({ref.get("uid") for ref in refs}):
                    if not terminating:
                        self._gc_delete(table, key, deleted)
                        return True
                elif gone:
                    self._drop_owners(table, key, gone)
                    return True
        return False

    def _dependents(self, uid: str) -> builtins.list[tuple[_Table, _Key]]:
        return [(table, key) for table in self._tables.values()
                for key, obj in table.objects.items()
                if any(r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or ())]

    def _gc_delete(self, table: _Table, key: _Key, deleted: Collected) -> None:
        deleted.append((table.type.resource.plural, key[0], key[1]))
        self._delete(table, key, "Background")

    def _drop_owners(self, table: _Table, key: _Key, uids: set[str]) -> None:
        existing = table.objects[key]
        new = copy.deepcopy(existing)
        refs = [r for r in new["metadata"].get("ownerReferences") or ()
                if r.get("uid") not in uids]
        _set_or_drop(new["metadata"], "ownerReferences", refs or None)
        self._write(table, key, existing, new)

    def _drop_finalizer(self, table: _Table, key: _Key, finalizer: str) -> None:
        existing = table.objects[key]
        new = copy.deepcopy(existing)
        finalizers = [f for f in new["metadata"].get("finalizers") or () if f != finalizer]
        _set_or_drop(new["metadata"], "finalizers", finalizers or None)
        self._write(table, key, existing, new)

    # -- test-side access (not requests) ----------------------------------------------------------

    def add(self, resource: Resource, obj: Mapping[str, Any]) -> Obj:
        """Create ``obj`` as the server would, keeping its ``status`` (test setup)."""
        table = self._table(resource)
        body = _copy(obj)
        ns = str(_meta(body).get("namespace") or "")
        if resource.namespaced and not ns:
            raise ValueError(f"{resource.group_resource}: add needs metadata.namespace")
        return _copy(self._create(table, body, ns, keep_status=True))

    def modify(self, resource: Resource, name: str, change: Callable[[Obj], object], *,
               namespace: str | None = None) -> Obj:
        """Apply ``change`` to a copy of the stored object and store it as another actor
        (a kubelet, a user) would: status included, no preconditions."""
        table = self._table(resource)
        key = _key(resource, namespace, name)
        existing = self._existing(table, key)
        new = copy.deepcopy(existing)
        change(new)
        rtype = table.type
        if rtype.generation and _content(rtype, new) != _content(rtype, existing):
            new["metadata"]["generation"] = int(existing["metadata"].get("generation") or 0) + 1
        return _copy(self._write(table, key, existing, _drop_nulls(new)))

    def remove(self, resource: Resource, name: str, *, namespace: str | None = None) -> None:
        """Delete at once, finalizers or not (like a force deletion from outside)."""
        table = self._table(resource)
        key = _key(resource, namespace, name)
        self._existing(table, key)
        self._remove(table, key)

    def stored(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj | None:
        """A copy of the stored object, or ``None``."""
        table = self._table(resource)
        obj = table.objects.get(_key(resource, namespace, name))
        return None if obj is None else _copy(obj)

    def objects(self, resource: Resource, namespace: str | None = None) -> builtins.list[Obj]:
        """Copies of the stored objects (in ``namespace``), in key order."""
        table = self._table(resource)
        keys = sorted((k for k in table.objects if namespace is None or k[0] == namespace),
                      key=_sort_key)
        return [_copy(table.objects[k]) for k in keys]


_INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can"
    " start a new list without the continue parameter, or use the continue token in this"
    " response to retrieve the remainder of the results. Continuing with the provided token"
    " results in an inconsistent list - objects that were created, modified, or deleted between"
    " the time the first chunk was returned and now may show up in the list."
)


def _check_name(resource: Resource, name: str) -> None:
    """What ``RestClient`` raises, before sending anything, for a request without a name."""
    if not name:
        raise ValueError(f"empty name for {resource.group_resource}")


def _set_or_drop(mapping: Obj, key: str, value: Any) -> None:
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def _content(rtype: ResourceType, obj: Obj) -> Obj:
    """What counts for ``metadata.generation``: all but metadata (and a subresource's status)."""
    skip = ("metadata", "status") if rtype.status_subresource else ("metadata",)
    return {k: v for k, v in obj.items() if k not in skip}


def _as_kube_client(api: FakeApi) -> KubeClient:
    """Checked by mypy: :class:`FakeApi` satisfies the :class:`KubeClient` protocol."""
    return api
