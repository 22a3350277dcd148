"""What a status write changes of an object, for code that keeps what it read of an object's
earlier version (pure, read-only).

* :func:`same_but_status`: two versions of an object differ in nothing but ``status`` and the
  metadata a status write changes (:data:`VOLATILE_METADATA`: ``resourceVersion`` and
  ``managedFields``); a missing ``status`` counts as any other.
* :func:`renew`: ``derived``, a copy of an earlier version whose ``spec`` was derived from it
  (defaulted), made in place a copy of a version :func:`same_but_status` as that one: every
  part but ``spec`` copied anew (deep, as :func:`~.jsonvalue.json_copy` makes it).
* :class:`KeptJobs`: the two together, for a controller that keeps what it derives from an
  object between its syncs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from mpi_controller.kube.jsonvalue import Obj, json_copy

__all__ = ["VOLATILE_METADATA", "KeptJobs", "renew", "same_but_status"]

T = TypeVar("T")

VOLATILE_METADATA = ("resourceVersion", "managedFields")
"""What of an object's metadata a status write changes."""


def _stable_metadata(meta: object) -> object:
    if not isinstance(meta, dict):
        return meta
    return {k: v for k, v in meta.items() if k not in VOLATILE_METADATA}


def same_but_status(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """``new`` equals ``old`` but for ``status`` and :data:`VOLATILE_METADATA`."""
    if len(old) - ("status" in old) != len(new) - ("status" in new):
        return False
    for key, value in new.items():
        if key == "status":
            continue
        if key not in old:
            return False
        if key == "metadata":
            if _stable_metadata(value) != _stable_metadata(old[key]):
                return False
        elif value != old[key]:
            return False
    return True


def renew(derived: Obj, new: Mapping[str, Any]) -> None:
    """Make ``derived`` (changed in place) a deep copy of ``new`` but for its ``spec``, kept
    as it is."""
    for key in [k for k in derived if k != "spec" and k not in new]:
        del derived[key]
    for key, value in new.items():
        if key != "spec":
            derived[key] = json_copy(value)


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return "", ""
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


@dataclass
class _Entry:
    cached: Mapping[str, Any]
    job: Obj
    handed: Obj
    reads: dict[str, Any] = field(default_factory=dict)


class KeptJobs:
    """Per object (namespace and name), the copy ``derive`` made of its cached version (a
    defaulted deep copy) and what is read of that copy, kept for the next version that is the
    same object or :func:`same_but_status` as it (then :func:`renew`-ed in place: the same
    copy, its ``spec`` and the reads kept, the rest copied anew).

    :meth:`prepare` gives the copy (``shallow``: a shallow copy of it, for a caller that sets
    top-level fields of it, e.g. ``status``, and changes nothing inside); :meth:`read` computes
    a named read of what :meth:`prepare` gave last, once; :meth:`kept` is the copy kept for an
    object; :meth:`drop` forgets an object.
    Sound only if ``derive`` changes nothing outside ``spec``, ``derive`` and the reads read
    nothing of ``status``, ``metadata.resourceVersion`` and ``metadata.managedFields``, and
    nobody changes what :meth:`prepare` gives (or, ``shallow``, anything inside it), nor reads
    it after the next :meth:`prepare` of its object expecting it unchanged."""

    def __init__(self, derive: Callable[[Mapping[str, Any]], Obj], *,
                 shallow: bool = False) -> None:
        self._derive = derive
        self._shallow = shallow
        self._entries: dict[tuple[str, str], _Entry] = {}

    def prepare(self, cached: Mapping[str, Any]) -> Obj:
        """The derived copy of ``cached`` (made once per version, see the class doc)."""
        key = _key(cached)
        entry = self._entries.get(key)
        if entry is None or entry.cached is not cached:
            if entry is not None and same_but_status(entry.cached, cached):
                renew(entry.job, cached)
                entry.cached, entry.handed = cached, entry.job
            else:
                job = self._derive(cached)
                entry = self._entries[key] = _Entry(cached, job, job)
        if self._shallow:
            entry.handed = {**entry.job}
        return entry.handed

    def read(self, job: Mapping[str, Any], name: str, compute: Callable[[], T]) -> T:
        """``compute()``, kept under ``name`` when ``job`` is what :meth:`prepare` gave last
        for its object (else computed afresh)."""
        entry = self._entries.get(_key(job))
        if entry is None or entry.handed is not job:
            return compute()
        if name not in entry.reads:
            entry.reads[name] = compute()
        return cast(T, entry.reads[name])

    def kept(self, namespace: str, name: str) -> Obj | None:
        """The copy kept for the object ``namespace/name`` (``None``: none)."""
        entry = self._entries.get((namespace, name))
        return entry.job if entry is not None else None

    def drop(self, namespace: str, name: str) -> None:
        """Forget the object ``namespace/name`` (deleted, or no longer worth keeping)."""
        self._entries.pop((namespace, name), None)

    def __contains__(self, key: object) -> bool:
        """Whether ``(namespace, name)`` is kept."""
        return key in self._entries
