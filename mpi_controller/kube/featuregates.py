"""Feature gates as Kubernetes components take them: ``--feature-gates=A=true,B=false``.

:func:`parse_feature_gates` reads the flag's text against the gates a component knows and
returns ``{name: enabled}`` for those named; an unknown gate, a value other than ``true`` or
``false`` (any case; also ``1``/``0``, ``t``/``f``), a missing ``=`` or a gate
named twice is a :class:`ValueError` whose message names the flag and the problem.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["parse_feature_gates"]

_TRUE = {"1", "t", "true"}
_FALSE = {"0", "f", "false"}


def parse_feature_gates(text: str, known: Iterable[str], *,
                        flag: str = "--feature-gates") -> dict[str, bool]:
    """The gates set in ``text`` (``Name=bool`` pairs separated by commas; spaces ignored)."""
    names = sorted(set(known))
    gates: dict[str, bool] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name, raw = name.strip(), raw.strip().lower()
        if not sep:
            raise ValueError(f'{flag}: missing "=<true|false>" after "{name}"')
        if name not in names:
            raise ValueError(f'{flag}: unknown feature gate "{name}"; known gates: '
                             + ", ".join(names))
        if name in gates:
            raise ValueError(f'{flag}: feature gate "{name}" is given twice')
        if raw not in _TRUE | _FALSE:
            raise ValueError(f'{flag}: invalid value "{raw}" for "{name}": want true or false')
        gates[name] = raw in _TRUE
    return gates
