"""Field errors in the format of Kubernetes apimachinery (``k8s.io/apimachinery/.../field``).

``str(FieldError)`` reproduces ``field.Error.Error()`` exactly for the error types the job kinds'
validations use::

    spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1
    spec.slotsPerWorker: Required value: must have number of slots per worker
    spec.mpiImplementation: Unsupported value: "Foo": supported values: "Intel", "MPICH", "OpenMPI"
    spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role

:func:`aggregate_message` reproduces ``ErrorList.ToAggregate().Error()``: the single message,
or ``[msg1, msg2, ...]`` with duplicates removed.

A composite bad value is printed as Go's ``json.Marshal`` of it, which follows the Go type's
field order; where that order matters, the caller renders it (:func:`go_json`) and passes the
text as :class:`Rendered`.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "ErrorType",
    "FieldError",
    "Rendered",
    "aggregate_message",
    "forbidden",
    "go_json",
    "go_quote",
    "internal",
    "invalid",
    "not_supported",
    "required",
]


class ErrorType(enum.Enum):
    """The apimachinery error types used here; the value is the text Go prints."""

    REQUIRED = "Required value"
    INVALID = "Invalid value"
    NOT_SUPPORTED = "Unsupported value"
    FORBIDDEN = "Forbidden"
    INTERNAL = "Internal error"


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def go_quote(text: str) -> str:
    """Quote ``text`` like Go's ``strconv.Quote`` / ``%q``."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


class Rendered(str):
    """A bad value already rendered as Go prints it (printed as is, not quoted)."""


def go_json(value: object) -> str:
    """Compact JSON as Go's ``json.Marshal`` writes it (no spaces; keys in the given order,
    so order them as the Go type's fields; ``<``, ``>`` and ``&`` escaped as Go does)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _format_value(value: object) -> str:
    """Format a bad value like ``field.Error.ErrorBody`` (JSON for composite values)."""
    if isinstance(value, Rendered):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return go_quote(value)
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # pragma: no cover - e.g. circular structures
        return repr(value)


@dataclass(frozen=True)
class FieldError:
    """One validation error: its type, field path, the bad value (Invalid/NotSupported) and
    the detail text."""

    type: ErrorType
    field: str
    bad_value: object = None
    detail: str = ""

    def body(self) -> str:
        """The message without the field path (``field.Error.ErrorBody``)."""
        if self.type in (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.INTERNAL):
            text = self.type.value
        else:
            text = f"{self.type.value}: {_format_value(self.bad_value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def required(path: str, detail: str) -> FieldError:
    return FieldError(ErrorType.REQUIRED, path, None, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, path, None, detail)


def internal(path: str, detail: str) -> FieldError:
    """``field.InternalError``: ``detail`` is the error's text."""
    return FieldError(ErrorType.INTERNAL, path, None, detail)


def invalid(path: str, value: object, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, path, value, detail)


def not_supported(path: str, value: object, supported: Iterable[str]) -> FieldError:
    """``field.NotSupported``; ``supported`` is printed in the given order (Go sorts it)."""
    quoted = [go_quote(v) for v in supported]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return FieldError(ErrorType.NOT_SUPPORTED, path, value, detail)


def aggregate_message(errors: Sequence[FieldError | str]) -> str:
    """``errs.ToAggregate().Error()``: "" for none, the message for one, else ``[a, b]``
    (errors may also be plain messages)."""
    messages: list[str] = []
    for err in errors:
        text = str(err)
        if text not in messages:
            messages.append(text)
    if not messages:
        return ""
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(messages) + "]"
