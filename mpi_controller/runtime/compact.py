"""Smaller cached objects: interned strings and shared, equal, read-only parts.

Cached objects are read-only (the rule of the cache), so equal parts of different objects can
be one object. Contract:

* :func:`intern_str` interns a string (``sys.intern``: freed again once nothing holds it).
* :func:`intern_mapping` copies a ``str -> str`` mapping with every key and value interned
  (label sets repeat the same keys and values across thousands of pods).
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

__all__ = ["Flyweights", "intern_mapping", "intern_str"]

T = TypeVar("T")
_MISSING: Any = object()


def intern_str(value: Any) -> Any:
    """``value`` interned when it is a string, else unchanged."""
    return sys.intern(value) if type(value) is str else value


def intern_mapping(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``mapping`` with its string keys and values interned."""
    return {intern_str(k): intern_str(v) for k, v in mapping.items()}


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
