"""Field-by-field comparison of two JSON values (pure).

:func:`compare` walks both values together and returns one :class:`Difference` per leaf that
differs: dicts by key (a key present on one side only is a difference with ``MISSING`` on the
other), lists by index (extra items on one side likewise), everything else by equality. Paths
read like ``status.conditions[1].reason`` or ``data["discover_hosts.sh"]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MISSING = "<absent>"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Difference:
    """One differing leaf: where (``case``, ``obj``, ``phase``, ``path``) and the two values."""

    case: str
    obj: str      # "ConfigMap/pi-config", "events", "create"
    phase: str    # "created", "final", "presence", "events", "create"
    path: str
    go: Any
    ours: Any
    context: str = ""  # what the comparison knew of the case, e.g. "running-unobserved-by-ours"

    def describe(self) -> str:
        where = f"{self.obj} {self.phase}" + (f" {self.path}" if self.path else "")
        note = f" [{self.context}]" if self.context else ""
        return f"{self.case}: {where}: go={_short(self.go)} ours={_short(self.ours)}{note}"

    def as_dict(self) -> dict[str, Any]:
        return {"case": self.case, "object": self.obj, "phase": self.phase, "path": self.path,
                "go": self.go, "ours": self.ours, "context": self.context}


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f'{path}["{key}"]'


def compare(go: Any, ours: Any, *, case: str, obj: str, phase: str,
            path: str = "") -> list[Difference]:
    out: list[Difference] = []
    _walk(go, ours, path, out, (case, obj, phase))
    return out


def _walk(a: Any, b: Any, path: str, out: list[Difference], where: tuple[str, str, str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            _walk(a.get(key, MISSING), b.get(key, MISSING), join(path, key), out, where)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            _walk(a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING,
                  join(path, i), out, where)
    elif a != b or type(a) is not type(b):
        out.append(Difference(*where, path=path, go=a, ours=b))
