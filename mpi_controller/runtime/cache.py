"""The informer cache: keys, an indexed store of plain dicts, and listers.

Contract:

* Objects are keyed by :func:`meta_namespace_key` (``"ns/name"``, or ``"name"`` when
  cluster-scoped). A deletion whose final state was missed (found absent on relist) is
  delivered as a :class:`DeletedFinalStateUnknown` tombstone carrying the last known object.
* :class:`Indexer` maps keys to objects and maintains secondary indexes
  (``{index name: {value: {keys}}}``) on every add/update/delete/replace; empty value sets are
  dropped. Index functions return a list of string values for an object.
* **Cached objects are shared and read-only.** Listers and the indexer hand out the stored
  dicts themselves (no copies, for speed). Never mutate one: ``copy.deepcopy`` it first.
* Listers read like the API: ``lister.namespaced(ns).get(name)`` raises the same not-found
  :class:`~mpi_controller.runtime.errors.ApiError` (404) the server would.
* Listers filter by any selector form :mod:`mpi_controller.kube.selectors` accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.owners import controller_of
from mpi_controller.kube.resources import Resource
from mpi_controller.kube.selectors import SelectorLike, parse_selector
from mpi_controller.runtime.errors import ApiError

__all__ = [
    "CONTROLLER_UID_INDEX",
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "IndexFunc",
    "Indexer",
    "Lister",
    "NamespaceLister",
    "controller_uid_index",
    "deletion_handling_key",
    "meta_namespace_key",
    "namespace_index",
    "split_key",
]

IndexFunc = Callable[[Obj], list[str]]
ObjList = list[Obj]
StrList = list[str]

NAMESPACE_INDEX = "namespace"
CONTROLLER_UID_INDEX = "controllerUID"


# -- keys ---------------------------------------------------------------------------------


def meta_namespace_key(obj: Mapping[str, Any]) -> str:
    """``"namespace/name"``, or ``"name"`` for a cluster-scoped object."""
    meta = obj["metadata"]
    namespace = meta.get("namespace")
    return f"{namespace}/{meta['name']}" if namespace else str(meta["name"])


def split_key(key: str) -> tuple[str, str]:
    """``"ns/name"`` → ``("ns", "name")``; ``"name"`` → ``("", "name")``."""
    parts = key.split("/")
    if len(parts) == 1 and parts[0]:
        return "", parts[0]
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """An object deleted while the watch was down: ``obj`` is its last known (cached) state."""

    key: str
    obj: Obj


def deletion_handling_key(obj: Mapping[str, Any] | DeletedFinalStateUnknown) -> str:
    """The key of an object or of the object inside a tombstone."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key(obj)


# -- index functions ----------------------------------------------------------------------


def namespace_index(obj: Obj) -> list[str]:
    """Index by ``metadata.namespace`` (cluster-scoped objects are not indexed)."""
    namespace = obj["metadata"].get("namespace")
    return [namespace] if namespace else []


def controller_uid_index(obj: Obj) -> list[str]:
    """Index by the controlling owner's UID: "all objects controlled by X" in O(1)."""
    ref = controller_of(obj)
    return [str(ref["uid"])] if ref and ref.get("uid") else []


# -- indexer ------------------------------------------------------------------------------


class Indexer:
    """A keyed store of dicts with secondary indexes (client-go ``threadSafeStore``).

    Single event loop, no awaits inside: no locks are needed.
    """

    def __init__(
        self,
        indexers: Mapping[str, IndexFunc] | None = None,
        *,
        key_func: Callable[[Obj], str] = meta_namespace_key,
    ) -> None:
        self.key_func = key_func
        self._items: dict[str, Obj] = {}
        self._index_funcs: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}
        self.add_indexers(indexers or {})

    # writes

    def add(self, obj: Obj) -> None:
        key = self.key_func(obj)
        old = self._items.get(key)
        self._items[key] = obj
        self._update_indices(old, obj, key)

    update = add

    def delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        key = deletion_handling_key(obj) if isinstance(obj, DeletedFinalStateUnknown) else (
            self.key_func(obj))
        self.delete_key(key)

    def delete_key(self, key: str) -> Obj | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._update_indices(old, None, key)
        return old

    def replace(self, objs: Iterable[Obj]) -> None:
        """Swap the whole content and rebuild every index."""
        self._items = {self.key_func(o): o for o in objs}
        self._rebuild()

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions (the existing content is indexed at once); names must be new."""
        clash = set(indexers) & set(self._index_funcs)
        if clash:
            raise ValueError(f"indexer conflict: {sorted(clash)}")
        self._index_funcs.update(indexers)
        for name in indexers:
            self._indices[name] = {}
            for key, obj in self._items.items():
                self._index_one(name, obj, key)

    # reads

    def get(self, obj: Obj) -> Obj | None:
        return self._items.get(self.key_func(obj))

    def get_by_key(self, key: str) -> Obj | None:
        return self._items.get(key)

    def list(self) -> ObjList:
        return list(self._items.values())

    def list_keys(self) -> StrList:
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    @property
    def indexers(self) -> dict[str, IndexFunc]:
        return dict(self._index_funcs)

    def has_index(self, name: str) -> bool:
        return name in self._index_funcs

    def index_keys(self, index_name: str, value: str) -> StrList:
        """Keys of the objects whose ``index_name`` values include ``value``."""
        return sorted(self._index(index_name).get(value, ()))

    def by_index(self, index_name: str, value: str) -> ObjList:
        keys = self._index(index_name).get(value, ())
        return [self._items[k] for k in keys]

    def list_index_values(self, index_name: str) -> StrList:
        return list(self._index(index_name))

    def _index(self, name: str) -> dict[str, set[str]]:
        try:
            return self._indices[name]
        except KeyError:
            raise KeyError(f"index {name!r} does not exist") from None

    # index maintenance

    def _rebuild(self) -> None:
        self._indices = {name: {} for name in self._index_funcs}
        for key, obj in self._items.items():
            for name in self._index_funcs:
                self._index_one(name, obj, key)

    def _index_one(self, name: str, obj: Obj, key: str) -> None:
        index = self._indices[name]
        for value in self._index_funcs[name](obj):
            index.setdefault(value, set()).add(key)

    def _update_indices(self, old: Obj | None, new: Obj | None, key: str) -> None:
        for name, func in self._index_funcs.items():
            old_values: StrList = func(old) if old is not None else []
            new_values: StrList = func(new) if new is not None else []
            if old_values == new_values:
                continue  # the common case: an update that leaves the index value alone
            index = self._indices[name]
            for value in old_values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in new_values:
                index.setdefault(value, set()).add(key)


# -- listers ------------------------------------------------------------------------------


def _select(objs: Iterable[Obj], selector: SelectorLike) -> ObjList:
    sel = parse_selector(selector)
    if sel.empty():
        return list(objs)
    return [o for o in objs if sel.matches_object(o)]


class Lister:
    """Read-only, API-shaped access to an :class:`Indexer` (objects are shared: don't mutate)."""

    def __init__(self, indexer: Indexer, resource: Resource | None = None) -> None:
        self.indexer = indexer
        self.resource = resource

    def list(self, selector: SelectorLike = None) -> ObjList:
        return _select(self.indexer.list(), selector)

    def get(self, name: str) -> Obj:
        """A cluster-scoped object by name; raises a 404 :class:`ApiError` if absent."""
        obj = self.indexer.get_by_key(name)
        if obj is None:
            raise ApiError.not_found(self.resource, name)
        return obj

    def namespaced(self, namespace: str) -> NamespaceLister:
        return NamespaceLister(self, namespace)


class NamespaceLister:
    """The objects of one namespace."""

    def __init__(self, lister: Lister, namespace: str) -> None:
        self._lister = lister
        self.namespace = namespace

    def get(self, name: str) -> Obj:
        """The object ``namespace/name``; raises a 404 :class:`ApiError` if absent."""
        obj = self._lister.indexer.get_by_key(f"{self.namespace}/{name}")
        if obj is None:
            raise ApiError.not_found(self._lister.resource, name)
        return obj

    def list(self, selector: SelectorLike = None) -> ObjList:
        indexer = self._lister.indexer
        if indexer.has_index(NAMESPACE_INDEX):
            objs = indexer.by_index(NAMESPACE_INDEX, self.namespace)
        else:
            objs = [o for o in indexer.list() if o["metadata"].get("namespace") == self.namespace]
        return _select(objs, selector)
