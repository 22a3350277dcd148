"""Smaller cached objects: interned strings and shared, equal, read-only parts.

Cached objects are read-only (the rule of the cache), so equal parts of different objects can
be one object. Contract:

* :func:`intern_str` interns a string (``sys.intern``: freed again once nothing holds it).
* :func:`intern_mapping` copies a ``str -> str`` mapping with every key and value interned
  (label sets repeat the same keys and values across thousands of pods).
* :func:`intern_json` copies a JSON value (dicts, lists, scalars) with every dict key and every
  string interned; other values are kept as they are (the same objects).
* :func:`compact_object` is the informers' default transform: the object without
  ``metadata.managedFields``, through :func:`intern_json`. A job's children repeat its name and
  uid many times over (labels, selectors, owner references, volume and ConfigMap names: a
  launcher Job holds its own uid 4 times), and every object of a kind the same enum values,
  images and paths; decoded, each occurrence is a string of its own. Interned, a cached Job
  took 8.3 instead of 13.1 KB, an MPIJob 5.0 instead of 6.8, a Service 2.2 instead of 3.2 (200
  8-worker MPIJobs; docs/performance.md, "Memory") for 5-60 us per object.
* :class:`Flyweights` hands out one shared instance per distinct value: ``share(key, make)``
  returns the instance stored under the hashable ``key``, making it with ``make()`` the first
  time. The table holds at most ``max_entries`` values; when full it is emptied and starts
  again, so memory stays bounded whatever the values (sharing then resumes as values recur).
  Only use it for values that are never mutated.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

__all__ = ["Flyweights", "compact_object", "intern_json", "intern_mapping", "intern_str"]

T = TypeVar("T")
_MISSING: Any = object()


def intern_str(value: Any) -> Any:
    """``value`` interned when it is a string, else unchanged."""
    return sys.intern(value) if type(value) is str else value


def intern_mapping(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``mapping`` with its string keys and values interned."""
    intern = sys.intern
    try:  # the common case, every key and value a str: no call of ours per item
        return {intern(k): intern(v) for k, v in mapping.items()}
    except TypeError:  # a value of another type, or a str subclass (kept as it is)
        return {intern_str(k): intern_str(v) for k, v in mapping.items()}


def intern_json(value: Any) -> Any:
    """A copy of the JSON ``value`` with its dict keys and strings interned (see the module)."""
    kind = type(value)
    if kind is dict:
        return _interned_dict(value)
    if kind is list:
        return _interned_list(value)
    return sys.intern(value) if kind is str else value


def _interned_dict(obj: dict[str, Any]) -> dict[str, Any]:
    intern = sys.intern
    out: dict[str, Any] = {}
    for key, value in obj.items():
        kind = type(value)
        if kind is str:
            value = intern(value)
        elif kind is dict:
            value = _interned_dict(value)
        elif kind is list:
            value = _interned_list(value)
        out[intern(key) if type(key) is str else key] = value
    return out


def _interned_list(items: list[Any]) -> list[Any]:
    intern = sys.intern
    return [intern(v) if type(v) is str else _interned_dict(v) if type(v) is dict
            else _interned_list(v) if type(v) is list else v for v in items]


def compact_object(obj: dict[str, Any]) -> dict[str, Any]:
    """Transform: a copy of ``obj`` without ``metadata.managedFields``, interned (module)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    interned: dict[str, Any] = intern_json(obj)
    return interned


class Flyweights:
    """A bounded table of shared read-only values (see the module doc)."""

    def __init__(self, max_entries: int = 65536) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._table: dict[Hashable, Any] = {}

    def share(self, key: Hashable, make: Callable[[], T]) -> T:
        found = self._table.get(key, _MISSING)
        if found is _MISSING:
            if len(self._table) >= self.max_entries:
                self._table.clear()
            found = self._table[key] = make()
        return found  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self._table)
