"""What a test does to the in-memory API server besides sending requests: fault rules
(:meth:`Controls.fail`, :meth:`Controls.delay`), the request log (:meth:`Controls.writes`), the
open watches (end, break, bookmark, compact the history), the garbage collector on demand
(:meth:`Controls.collect_garbage`) and direct access to the store (:meth:`Controls.add`,
:meth:`Controls.modify`, :meth:`Controls.remove`, :meth:`Controls.stored`,
:meth:`Controls.objects`: not logged, not intercepted, but they write and notify watches like
any change).
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable, Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.errors import ApiError
from mpi_controller.testing.server import Server
from mpi_controller.testing.store import (
    Collected,
    FaultRule,
    Key,
    Request,
    Table,
    content_of,
    drop_nulls,
    meta_of,
    object_key,
    roundtrip,
    set_or_drop,
    sort_key,
    table_key,
)
from mpi_controller.testing.watch import FakeWatch

__all__ = ["Controls"]


class Controls(Server):
    """The test's hands on the server (module doc)."""

    # -- faults and the request log -----------------------------------------------------------

    def fail(self, error: ApiError, *, verb: str | None = None, resource: Resource | None = None,
             namespace: str | None = None, name: str | None = None,
             subresource: str | None = None, times: int | None = 1) -> None:
        """Make the next ``times`` matching requests (``None``: all) fail with ``error``."""
        self._rules.append(FaultRule(verb, resource, namespace, name, subresource, error, 0.0,
                                     times))

    def delay(self, seconds: float, *, verb: str | None = None,
              resource: Resource | None = None, namespace: str | None = None,
              name: str | None = None, subresource: str | None = None,
              times: int | None = 1) -> None:
        """Hold the next ``times`` matching requests for ``seconds`` on the clock."""
        self._rules.append(FaultRule(verb, resource, namespace, name, subresource, None, seconds,
                                 times))

    def clear_faults(self) -> None:
        self._rules.clear()
        self.interceptor = None

    def writes(self) -> builtins.list[Request]:
        """The logged create, update, patch and delete requests, in order."""
        return [r for r in self.requests if r.is_write]

    def watches(self, resource: Resource | None = None) -> builtins.list[FakeWatch]:
        """The open watches (of ``resource``), oldest first."""
        return [w for w in self._watches
                if resource is None or table_key(w.resource) == table_key(resource)]

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
            if resource is None or table.type.key == table_key(resource):
                table.history.clear()
                table.floor = self._rv

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

    def _dependents(self, uid: str) -> builtins.list[tuple[Table, Key]]:
        return [(table, key) for table in self._tables.values()
                for key, obj in table.objects.items()
                if any(r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or ())]

    def _gc_delete(self, table: Table, key: Key, deleted: Collected) -> None:
        deleted.append((table.type.resource.plural, key[0], key[1]))
        self._delete(table, key, "Background")

    def _drop_owners(self, table: Table, key: Key, uids: set[str]) -> None:
        existing = table.objects[key]
        new = copy.deepcopy(existing)
        refs = [r for r in new["metadata"].get("ownerReferences") or ()
                if r.get("uid") not in uids]
        set_or_drop(new["metadata"], "ownerReferences", refs or None)
        self._write(table, key, existing, new)

    def _drop_finalizer(self, table: Table, key: Key, finalizer: str) -> None:
        existing = table.objects[key]
        new = copy.deepcopy(existing)
        finalizers = [f for f in new["metadata"].get("finalizers") or () if f != finalizer]
        set_or_drop(new["metadata"], "finalizers", finalizers or None)
        self._write(table, key, existing, new)

    # -- test-side access (not requests) ----------------------------------------------------------

    def add(self, resource: Resource, obj: Mapping[str, Any]) -> Obj:
        """Create ``obj`` as the server would, keeping its ``status`` (test setup)."""
        table = self._table(resource)
        body = roundtrip(obj)
        ns = str(meta_of(body).get("namespace") or "")
        if resource.namespaced and not ns:
            raise ValueError(f"{resource.group_resource}: add needs metadata.namespace")
        return roundtrip(self._create(table, body, ns, keep_status=True))

    def modify(self, resource: Resource, name: str, change: Callable[[Obj], object], *,
               namespace: str | None = None) -> Obj:
        """Apply ``change`` to a copy of the stored object and store it as another actor
        (a kubelet, a user) would: status included, no preconditions."""
        table = self._table(resource)
        key = object_key(resource, namespace, name)
        existing = self._existing(table, key)
        new = copy.deepcopy(existing)
        change(new)
        rtype = table.type
        if rtype.generation and content_of(rtype, new) != content_of(rtype, existing):
            new["metadata"]["generation"] = int(existing["metadata"].get("generation") or 0) + 1
        return roundtrip(self._write(table, key, existing, drop_nulls(new)))

    def remove(self, resource: Resource, name: str, *, namespace: str | None = None) -> None:
        """Delete at once, finalizers or not (like a force deletion from outside)."""
        table = self._table(resource)
        key = object_key(resource, namespace, name)
        self._existing(table, key)
        self._remove(table, key)

    def stored(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj | None:
        """A copy of the stored object, or ``None``."""
        table = self._table(resource)
        obj = table.objects.get(object_key(resource, namespace, name))
        return None if obj is None else roundtrip(obj)

    def objects(self, resource: Resource, namespace: str | None = None) -> builtins.list[Obj]:
        """Copies of the stored objects (in ``namespace``), in key order."""
        table = self._table(resource)
        keys = sorted((k for k in table.objects if namespace is None or k[0] == namespace),
                      key=sort_key)
        return [roundtrip(table.objects[k]) for k in keys]
