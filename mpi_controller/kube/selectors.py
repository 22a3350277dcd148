"""Label selectors (apimachinery ``labels`` and ``metav1.LabelSelector``), pure.

Accepted forms (:func:`parse_selector`): a :class:`Selector`, a dict (``matchLabels``
equality), a set-based string (``a=b,c!=d,e in (x,y),f notin (z),!g,h``), or ``None`` for
everything. :func:`selector_from_label_selector` converts a ``metav1.LabelSelector``
(``matchLabels`` + ``matchExpressions``); :func:`label_selector_matches` applies one the way
``metav1.LabelSelectorAsSelector(s).Matches(labels)`` does: a nil (absent) selector matches
nothing, an empty one everything, and a malformed one nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Requirement",
    "Selector",
    "SelectorLike",
    "label_selector_matches",
    "parse_selector",
    "selector_from_label_selector",
]

@dataclass(frozen=True, slots=True)
class Requirement:
    """One clause: ``op`` is one of ``= != in notin exists !``."""

    key: str
    op: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        # A value of another type than str (a malformed object) equals none of the values.
        value = labels[self.key] if present else None
        listed = isinstance(value, str) and value in self.values
        if self.op in ("=", "in"):
            return listed
        return not listed  # != and notin


@dataclass(frozen=True, slots=True)
class Selector:
    """A conjunction of :class:`Requirement`; the empty selector matches everything.

    A selector of equalities only (the controllers' own: ``matchLabels``) keeps them as one
    dict and matches a dict of labels by comparing item views, in C."""

    requirements: tuple[Requirement, ...] = ()
    _equalities: dict[str, str] | None = field(default=None, init=False, repr=False,
                                               compare=False, hash=False)

    def __post_init__(self) -> None:
        if all(r.op == "=" and len(r.values) == 1 for r in self.requirements):
            equal = {r.key: next(iter(r.values)) for r in self.requirements}
            if len(equal) == len(self.requirements):  # no key required twice
                object.__setattr__(self, "_equalities", equal)

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        equal = self._equalities
        if equal is not None and type(labels) is dict:
            return equal.items() <= labels.items()
        return all(r.matches(labels) for r in self.requirements)

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj``'s ``metadata.labels`` match (absent or malformed labels: none)."""
        meta = obj.get("metadata")  # (a dict checked first: isinstance of an ABC is slow)
        labels = meta.get("labels") if type(meta) is dict or isinstance(meta, Mapping) else None
        return self.matches(labels if type(labels) is dict or isinstance(labels, Mapping)
                            else None)

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(_format_requirement(r) for r in self.requirements)


SelectorLike = Selector | Mapping[str, str] | str | None

_SPLIT_RE = re.compile(r",(?![^()]*\))")
_SET_RE = re.compile(r"^(?P<key>[^\s!=()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQ_RE = re.compile(r"^(?P<key>[^\s!=()]+)\s*(?P<op>==|!=|=)\s*(?P<value>[^\s!=(),]*)$")
_KEY_RE = re.compile(r"^(?P<neg>!?)\s*(?P<key>[^\s!=(),]+)$")


def parse_selector(selector: SelectorLike) -> Selector:
    """Build a :class:`Selector` from any accepted form (see the module docstring)."""
    if selector is None:
        return Selector()
    if isinstance(selector, Selector):
        return selector
    if isinstance(selector, str):
        return _parse_string(selector)
    return Selector(tuple(Requirement(k, "=", frozenset([v])) for k, v in selector.items()))


def _parse_string(text: str) -> Selector:
    reqs = [_parse_clause(part.strip()) for part in _SPLIT_RE.split(text) if part.strip()]
    return Selector(tuple(reqs))


def _parse_clause(clause: str) -> Requirement:
    if m := _SET_RE.match(clause):
        values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
        return Requirement(m["key"], m["op"], values)
    if m := _EQ_RE.match(clause):
        op = "!=" if m["op"] == "!=" else "="
        return Requirement(m["key"], op, frozenset([m["value"]]))
    if m := _KEY_RE.match(clause):
        return Requirement(m["key"], "!" if m["neg"] else "exists")
    raise ValueError(f"invalid label selector clause: {clause!r}")


def _format_requirement(r: Requirement) -> str:
    if r.op == "exists":
        return r.key
    if r.op == "!":
        return f"!{r.key}"
    if r.op in ("=", "!="):
        return f"{r.key}{r.op}{next(iter(r.values))}"
    return f"{r.key} {r.op} ({','.join(sorted(r.values))})"


def selector_from_label_selector(spec: Mapping[str, Any] | None) -> Selector:
    """Convert a ``metav1.LabelSelector`` (``matchLabels`` + ``matchExpressions``)."""
    if not spec:
        return Selector()
    reqs = [Requirement(k, "=", frozenset([v])) for k, v in (spec.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in spec.get("matchExpressions") or ():
        reqs.append(Requirement(expr["key"], ops[expr["operator"]],
                                frozenset(expr.get("values") or ())))
    return Selector(tuple(reqs))


_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_selector_matches(selector: object, labels: Mapping[str, Any]) -> bool:
    """Whether ``metav1.LabelSelector`` ``selector`` selects ``labels`` (see the module doc)."""
    if not isinstance(selector, Mapping):
        return False
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        return False
    reqs = [Requirement(str(k), "=", frozenset([v])) for k, v in match_labels.items()]
    for expr in expressions:
        if not isinstance(expr, Mapping) or expr.get("operator") not in _OPERATORS:
            return False
        values = expr.get("values") or []
        if not isinstance(values, list):
            return False
        reqs.append(Requirement(str(expr.get("key", "")), _OPERATORS[expr["operator"]],
                                frozenset(v for v in values if isinstance(v, str))))
    return Selector(tuple(reqs)).matches({k: v for k, v in labels.items() if isinstance(v, str)})
