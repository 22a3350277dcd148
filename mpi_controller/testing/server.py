"""The in-memory API server's state and storage rules, below its verbs: one global
resourceVersion, a :class:`~mpi_controller.testing.store.Table` per resource, the request
log, fault rules and interceptor every request passes (``_admit``), and how a create, an update,
a delete and a finalizer-held deletion change the store and notify the watches (``_commit``).
:class:`~mpi_controller.testing.FakeApi` adds the test's controls and the requests on top.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import inspect
import random
import re
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.testing.errors import (
    FieldProblem,
    already_exists,
    bad_request,
    conflict,
    connection_error,
    internal_error,
    invalid,
    not_found,
    page_not_found,
    status_details,
    status_error,
)
from mpi_controller.testing.store import (
    BUILTIN_TYPES,
    EPOCH,
    Change,
    FaultRule,
    Interceptor,
    Key,
    Request,
    ResourceType,
    Table,
    TableKey,
    content_of,
    drop_nulls,
    meta_of,
    set_or_drop,
    sort_key,
    table_key,
)
from mpi_controller.testing.watch import FakeWatch

__all__ = ["Server"]

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
_GENERATE_ATTEMPTS = 8
_MAX_GENERATED_PREFIX = 58
_GC_FINALIZERS = ("orphan", "foregroundDeletion")
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


class Server:
    """The store and its rules (module doc); :class:`~mpi_controller.testing.FakeApi` is the
    server."""

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
        self._rules: builtins.list[FaultRule] = []
        self._rv = 0
        self._tables: dict[TableKey, Table] = {}
        self._watches: builtins.list[FakeWatch] = []
        self._closed = False
        for rtype in types:
            self._tables[rtype.key] = Table(rtype)

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
            self._tables[rtype.key] = Table(rtype)
        else:
            table.type = rtype
        return rtype

    @property
    def resource_version(self) -> str:
        """The current (last written) resourceVersion."""
        return str(self._rv)

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

    def _table(self, resource: Resource) -> Table:
        table = self._tables.get(table_key(resource))
        if table is None:
            raise page_not_found()
        return table

    def _namespace(self, table: Table, namespace: str | None) -> str:
        """The namespace a name-addressed request is for (``""`` when cluster-scoped)."""
        if not table.type.resource.namespaced:
            return ""
        if not namespace:
            raise page_not_found()
        return namespace

    def _existing(self, table: Table, key: Key) -> Obj:
        obj = table.objects.get(key)
        if obj is None:
            raise not_found(table.type.resource, key[1])
        return obj

    def _commit(self, table: Table, key: Key, new: Obj | None) -> Obj | None:
        """Store ``new`` (``None`` deletes) under a fresh resourceVersion and tell watchers."""
        self._rv += 1
        old = table.objects.get(key)
        if new is None:
            table.objects.pop(key, None)
        else:
            meta_of(new)["resourceVersion"] = str(self._rv)
            table.objects[key] = new
        change = Change(self._rv, key, old, new)
        table.history.append(change)
        while len(table.history) > self.history_limit:
            table.floor = table.history.popleft().rv
        for watch in list(self._watches):
            if watch._filter is not None and table_key(watch.resource) == table.type.key:
                watch._offer(change)
        return new

    def _now(self) -> str:
        return self._wall().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _storage_key(self, rtype: ResourceType, key: Key) -> str:
        group = f"{rtype.resource.group}/" if rtype.custom and rtype.resource.group else ""
        return f"/registry/{group}{rtype.resource.plural}/{sort_key(key)}"

    def _precondition_failed(self, table: Table, key: Key, what: str, wanted: str,
                             actual: str) -> ApiError:
        cause = (f"StorageError: invalid object, Code: 4, Key: {self._storage_key(table.type, key)}"
                 f", ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: {what} in"
                 f" precondition: {wanted}, {what} in object meta: {actual}")
        return conflict(table.type.resource, key[1], cause)


    def _create(self, table: Table, obj: Obj, namespace: str, *, keep_status: bool) -> Obj:
        rtype = table.type
        res = rtype.resource
        meta = meta_of(obj)
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise bad_request("the namespace of the provided object does not match the"
                                   " namespace sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if meta.get("resourceVersion"):
            raise internal_error("resourceVersion should not be set on objects to be created")
        generate = str(meta.get("generateName") or "")
        name = str(meta.get("name") or "")
        if not name and not generate:
            raise invalid(res.kind, res.group, "", [FieldProblem(
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
        stored = self._commit(table, key, drop_nulls(obj))
        assert stored is not None
        return stored

    def _generate_name(self, table: Table, namespace: str, prefix: str) -> str:
        for _ in range(_GENERATE_ATTEMPTS):
            name = prefix[:_MAX_GENERATED_PREFIX] + "".join(
                self.rng.choice(_NAME_ALPHABET) for _ in range(5))
            if (namespace, name) not in table.objects:
                return name
        res = table.type.resource
        raise status_error(
            409, "AlreadyExists", f'{res.group_resource} "{name}" already exists, the server was'
            " not able to generate a unique name for the object",
            status_details(res, name, retryAfterSeconds=1))

    def _validate_name(self, rtype: ResourceType, name: str) -> None:
        res = rtype.resource
        pattern, message, limit = ((_DNS1035_RE, _DNS1035_MSG, 63) if rtype.dns1035_names
                                   else (_SUBDOMAIN_RE, _SUBDOMAIN_MSG, 253))
        errors = []
        if len(name) > limit:
            errors.append(FieldProblem("metadata.name", "Invalid",
                                      f"must be no more than {limit} characters", name))
        if not pattern.fullmatch(name):
            errors.append(FieldProblem("metadata.name", "Invalid", message, name))
        if errors:
            raise invalid(res.kind, res.group, name, errors)


    def _update(self, table: Table, key: Key, incoming: Obj, subresource: str) -> Obj:
        """Write ``incoming`` over the stored object as PUT (``subresource`` ``"status"``:
        its status only); preconditions from its resourceVersion and uid."""
        rtype, existing = table.type, self._existing(table, key)
        old_meta, in_meta = existing["metadata"], meta_of(incoming)
        rv = in_meta.get("resourceVersion")
        if rv and rv != old_meta["resourceVersion"]:
            raise conflict(rtype.resource, key[1])
        uid = in_meta.get("uid")
        if uid and uid != old_meta["uid"]:
            raise self._precondition_failed(table, key, "UID", uid, old_meta["uid"])
        if subresource == "status":
            new = copy.deepcopy(existing)
            set_or_drop(new, "status", incoming.get("status"))
        else:
            new = incoming
            new["apiVersion"], new["kind"] = rtype.resource.api_version, rtype.resource.kind
            meta = meta_of(new)
            for kept in ("uid", "creationTimestamp", "deletionTimestamp",
                         "deletionGracePeriodSeconds", "generation", "namespace"):
                set_or_drop(meta, kept, old_meta.get(kept))
            meta["name"] = key[1]
            meta.pop("managedFields", None)
            if rtype.status_subresource:
                set_or_drop(new, "status", existing.get("status"))
            if rtype.generation and content_of(rtype, new) != content_of(rtype, existing):
                meta["generation"] = int(old_meta.get("generation") or 0) + 1
        return self._write(table, key, existing, drop_nulls(new))

    def _write(self, table: Table, key: Key, existing: Obj, new: Obj) -> Obj:
        """Store an update unless it changes nothing; a terminating object whose last
        finalizer went is deleted instead (the deletion's answer is returned)."""
        meta_of(new)["resourceVersion"] = existing["metadata"]["resourceVersion"]
        if new == existing:
            return existing
        meta = new["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            return self._remove(table, key)
        stored = self._commit(table, key, new)
        assert stored is not None
        return stored

    def _remove(self, table: Table, key: Key) -> Obj:
        existing = table.objects[key]
        self._commit(table, key, None)
        if table.type.return_deleted_object:
            return existing
        meta = existing["metadata"]
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "details": status_details(table.type.resource, key[1], uid=meta["uid"])}

    def _delete(self, table: Table, key: Key, policy: str | None) -> Obj:
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
