"""Total accessors for untrusted JSON values (objects decoded from the API or from YAML), and
:data:`Obj`, the one name of a JSON object (a Kubernetes object as the API sends it).

Every function returns a value of the promised type and never raises: a value of the wrong
type reads as "absent" (``None``, ``{}``, ``[]`` or ``""``). ``bool`` is not an integer here,
although Python says it is, because JSON says it is not.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, TypeVar, cast

__all__ = [
    "Obj", "as_bool", "as_dict", "as_int", "as_list", "as_opt_str", "as_record", "as_str",
    "as_str_map", "is_int", "json_copy",
]

Obj = dict[str, Any]
"""A Kubernetes object (or any JSON object) as the API sends it: a plain dict."""

_SCALARS = (str, int, float, bool, type(None))
_IS_STR = str.__instancecheck__  # isinstance(k, str) without a Python frame per key
T = TypeVar("T")


def is_int(value: object) -> bool:
    """True for a JSON integer (a Python ``int`` that is not a ``bool``)."""
    return isinstance(value, int) and not isinstance(value, bool)


def json_copy(value: T) -> T:
    """A deep copy of ``value``, as ``copy.deepcopy`` makes it, ~3x faster for JSON-shaped data
    (dicts and lists are rebuilt, JSON scalars shared; anything else is ``copy.deepcopy``-ed)."""
    return cast(T, _copy(value))


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


def as_dict(value: object) -> dict[str, Any]:
    """``value`` if it is a mapping with string keys, else ``{}`` (never a copy)."""
    if isinstance(value, dict) and all(map(_IS_STR, value)):
        return value
    return {}


def as_record(value: object) -> dict[str, Any]:
    """``value`` if it is a dict, else ``{}`` (never a copy): for reading fields by name.

    Unlike :func:`as_dict` the keys are not checked, which costs a pass over them: a key of
    another type can answer no ``get`` of a string, so a lookup reads the same either way (and
    objects decoded from the API's JSON have only string keys). Iterate the keys of
    :func:`as_dict`'s result, never of this one's."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` if it is a list, else ``[]`` (never a copy)."""
    return value if isinstance(value, list) else []


def as_str(value: object, default: str = "") -> str:
    """``value`` if it is a string, else ``default``."""
    return value if isinstance(value, str) else default


def as_opt_str(value: object) -> str | None:
    """``value`` if it is a string, else ``None`` (an unset optional string)."""
    return value if isinstance(value, str) else None


def as_int(value: object) -> int | None:
    """``value`` if it is a JSON integer, else ``None``."""
    return value if is_int(value) else None  # type: ignore[return-value]


def as_bool(value: object) -> bool | None:
    """``value`` if it is a boolean, else ``None``."""
    return value if isinstance(value, bool) else None


def as_str_map(value: object) -> dict[str, str]:
    """A copy of the string-to-string entries of ``value`` (labels, annotations, selectors)."""
    if not isinstance(value, Mapping):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
