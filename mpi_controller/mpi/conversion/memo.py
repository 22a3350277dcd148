"""Each stored MPIJob as written in the API version it was created in, defaulted, converted once
per stored version: :class:`ConvertedJobs`, which the ``v1`` and ``v1alpha2`` modes of the
MPIJob kind read their jobs through (a sync sees the job in its own version, and the whole
object is converted again only when the stored one changed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import Obj, as_dict, as_str, json_copy
from mpi_controller.mpi.conversion.convert import convert

__all__ = ["ConvertedJobs"]


class ConvertedJobs:
    """Jobs converted to ``version`` and defaulted with ``set_defaults``, kept by job key with
    the ``(uid, resourceVersion)`` they were made from; :meth:`get` converts again when the
    stored job differs (a job without a resourceVersion is not kept) and returns a fresh copy
    each time, so a sync may change what it gets."""

    def __init__(self, version: str, set_defaults: Callable[[Obj], Obj]) -> None:
        self.version = version
        self.set_defaults = set_defaults
        self._known: dict[str, tuple[tuple[str, str], Obj]] = {}

    def get(self, stored: Mapping[str, Any]) -> Obj:
        """``stored`` (a cached object) as ``version``, defaulted."""
        meta = as_dict(stored.get("metadata"))
        key = f"{as_str(meta.get('namespace'))}/{as_str(meta.get('name'))}"
        made_from = (as_str(meta.get("uid")), as_str(meta.get("resourceVersion")))
        known = self._known.get(key)
        if known is None or known[0] != made_from:
            known = (made_from, self.set_defaults(convert(stored, self.version)))
            if made_from[1]:
                self._known[key] = known
        return json_copy(known[1])

    def forget(self, key: str) -> None:
        """Drop what is kept for the job ``key`` (``namespace/name``)."""
        self._known.pop(key, None)
