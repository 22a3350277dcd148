"""The RFC 6902 JSON patch that turns one JSON value into another (:func:`diff`), as a
mutating admission webhook answers: objects are compared key by key (``remove`` of a gone key
first, then ``add`` of a new one), arrays of equal length element by element; a changed
scalar, an array whose length changed or a value whose type changed is replaced whole. Keys
are escaped as RFC 6901 pointers (``~0``, ``~1``). Pure.
"""

from __future__ import annotations

from typing import Any

__all__ = ["diff", "pointer"]


def pointer(*tokens: str | int) -> str:
    """The RFC 6901 pointer of ``tokens`` (``/spec/a~1b/0``)."""
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def diff(before: Any, after: Any, *, at: tuple[str | int, ...] = ()) -> list[dict[str, Any]]:
    """The operations that make ``before`` equal to ``after`` (empty when they are equal)."""
    if before == after and type(before) is type(after):
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[dict[str, Any]] = []
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": pointer(*at, key)})
        for key, value in after.items():
            if key not in before:
                ops.append({"op": "add", "path": pointer(*at, key), "value": value})
            else:
                ops += diff(before[key], value, at=(*at, key))
        return ops
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [op for i, (old, new) in enumerate(zip(before, after, strict=True))
                for op in diff(old, new, at=(*at, i))]
    return [{"op": "replace", "path": pointer(*at), "value": after}]
