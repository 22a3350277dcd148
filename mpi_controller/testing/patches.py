"""The patches the in-memory API server applies: RFC 7386 JSON merge patch
(:func:`merge_patch`, also what a strategic merge patch is treated as) and RFC 6902 JSON patch
(:func:`json_patch`); :class:`PatchFailed` when one cannot be decoded (400) or applied (422).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from mpi_controller.kube.jsonvalue import Obj

__all__ = ["PatchFailed", "has_strategic_directive", "json_patch", "merge_patch"]


class PatchFailed(Exception):
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
        raise PatchFailed(f"JSON pointer must be empty or start with a \"/\": {path!r}", True)
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def _index(container: list[Any], token: str, *, append: bool) -> int:
    if append and token == "-":
        return len(container)
    if not token.isdigit():
        raise PatchFailed(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not append):
        raise PatchFailed(f"array index {index} out of bounds")
    return index


def _parent(doc: Any, tokens: list[str]) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, append=False)]
        else:
            raise PatchFailed(f"missing path segment {token!r}")
    return node


def _get(doc: Any, tokens: list[str]) -> Any:
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, append=False)]
    raise PatchFailed(f"missing value at {'/'.join(tokens)!r}")


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
        raise PatchFailed(f"cannot add to a {type(parent).__name__}")
    return doc


def json_patch(doc: Any, operations: Any) -> Any:
    """RFC 6902 JSON patch (add, remove, replace, move, copy, test) applied to a copy."""
    if not isinstance(operations, list):
        raise PatchFailed("a JSON patch must be a list of operations", True)
    doc = copy.deepcopy(doc)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchFailed(f"malformed operation {op!r}", True)
        kind, tokens = op["op"], _pointer(op["path"])
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchFailed(f"operation {kind} needs a value", True)
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
                raise PatchFailed(f"test failed at {op['path']!r}")
        else:
            raise PatchFailed(f"unexpected operation {kind!r}", True)
    return doc


_STRATEGIC_DIRECTIVE = re.compile(r"^\$(patch|retainKeys|deleteFromPrimitiveList|setElementOrder)")


def has_strategic_directive(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_STRATEGIC_DIRECTIVE.match(str(k)) or has_strategic_directive(v)
                   for k, v in value.items())
    if isinstance(value, list):
        return any(has_strategic_directive(v) for v in value)
    return False
