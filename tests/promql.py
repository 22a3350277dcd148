"""A PromQL syntax check for the shipped dashboard and alert rules (``promtool`` is not built
here): :func:`metric_names` parses an expression (selectors, label matchers, ranges,
functions, aggregations with ``by``/``without``, binary operators with ``bool``, ``on``,
``ignoring``, ``group_left``/``group_right``) and returns the metric names it reads; a syntax
error raises ValueError naming the position."""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["FUNCTIONS", "metric_names"]

AGGREGATIONS = {"sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk",
                "quantile", "count_values", "group"}
FUNCTIONS = {"rate", "irate", "increase", "delta", "idelta", "deriv", "changes", "resets",
             "abs", "absent", "absent_over_time", "ceil", "floor", "round", "clamp",
             "clamp_min", "clamp_max", "exp", "ln", "log2", "log10", "sqrt", "vector", "scalar",
             "time", "timestamp", "histogram_quantile", "label_replace", "label_join", "sort",
             "sort_desc", "avg_over_time", "min_over_time", "max_over_time", "sum_over_time",
             "count_over_time", "last_over_time", "quantile_over_time", "predict_linear"}
BINARY = {"+", "-", "*", "/", "%", "^", "==", "!=", ">", "<", ">=", "<=", "and", "or",
          "unless"}
_TOKEN = re.compile(r"""\s*(?:
    (?P<duration>\d+(?:ms|s|m|h|d|w|y))(?![\w.])
  | (?P<number>\d+(?:\.\d*)?(?:e[+-]?\d+)?)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<ident>[a-zA-Z_:][\w:]*)
  | (?P<op>==|!=|>=|<=|=~|!~|[-+*/%^=<>(){}\[\],:])
)""", re.VERBOSE)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ValueError(f"unexpected character at {pos}: {text[pos:pos + 10]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind), match.start(kind)))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0
        self.names: set[str] = set()

    def peek(self) -> str:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else ""

    def kind(self) -> str:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        if self.i >= len(self.tokens):
            raise ValueError(f"unexpected end, expected {expected or 'more'}")
        value = self.tokens[self.i][1]
        if expected is not None and value != expected:
            raise ValueError(f"expected {expected!r} at {self.tokens[self.i][2]}, got {value!r}")
        self.i += 1
        return value

    def listed(self, opening: str, closing: str, item: Callable[[], None]) -> None:
        """``opening item, item, ... closing`` (possibly empty)."""
        self.take(opening)
        while self.peek() != closing:
            item()
            if self.peek() != ",":
                break
            self.take(",")
        self.take(closing)

    def label(self) -> None:
        if self.kind() != "ident":
            raise ValueError(f"expected a label name, got {self.peek()!r}")
        self.take()

    def labels(self) -> None:
        self.listed("(", ")", self.label)

    def expr(self) -> None:
        self.unary()
        while self.peek() in BINARY:
            self.take()
            if self.peek() == "bool":
                self.take()
            if self.peek() in ("on", "ignoring"):
                self.take()
                self.labels()
            if self.peek() in ("group_left", "group_right"):
                self.take()
                if self.peek() == "(":
                    self.labels()
            self.unary()

    def unary(self) -> None:
        if self.peek() in ("-", "+"):
            self.take()
        self.primary()
        if self.peek() == "[":
            self.range()
        if self.peek() == "offset":
            self.take()
            if self.kind() != "duration":
                raise ValueError("offset needs a duration")
            self.take()

    def range(self) -> None:
        self.take("[")
        if self.kind() != "duration":
            raise ValueError(f"expected a duration in [], got {self.peek()!r}")
        self.take()
        if self.peek() == ":":
            self.take()
            if self.kind() == "duration":
                self.take()
        self.take("]")

    def args(self) -> None:
        self.listed("(", ")", self.expr)

    def primary(self) -> None:
        kind, value = self.kind(), self.peek()
        if kind in ("number", "string"):
            self.take()
        elif value == "(":
            self.take()
            self.expr()
            self.take(")")
        elif value == "{":
            self.matchers()
        elif kind == "ident" and value in AGGREGATIONS:
            self.take()
            if self.peek() in ("by", "without"):
                self.take()
                self.labels()
            self.args()
            if self.peek() in ("by", "without"):
                self.take()
                self.labels()
        elif kind == "ident" and value in FUNCTIONS:
            self.take()
            self.args()
        elif kind == "ident" and value not in BINARY:
            self.names.add(self.take())
            if self.peek() == "(":
                raise ValueError(f"unknown function {value!r}")
            if self.peek() == "{":
                self.matchers()
        else:
            raise ValueError(f"unexpected {value!r}")

    def matcher(self) -> None:
        self.label()
        if self.peek() not in ("=", "!=", "=~", "!~"):
            raise ValueError(f"expected a matcher operator, got {self.peek()!r}")
        self.take()
        if self.kind() != "string":
            raise ValueError(f"expected a quoted label value, got {self.peek()!r}")
        self.take()

    def matchers(self) -> None:
        self.listed("{", "}", self.matcher)


def metric_names(expr: str) -> set[str]:
    """The metric names ``expr`` reads; ValueError when it is not valid PromQL (the subset
    above)."""
    parser = _Parser(expr)
    parser.expr()
    if parser.i != len(parser.tokens):
        raise ValueError(f"unexpected {parser.peek()!r} at {parser.tokens[parser.i][2]}")
    return parser.names
