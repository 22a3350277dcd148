"""Kubernetes resource quantities (``resource.Quantity``): parse, add, multiply, print.

Enough of apimachinery's semantics for PodGroup ``minResources``: a quantity keeps the format
of the text it was parsed from (binary ``Ki``..``Ei``, decimal ``n``..``E``, or exponent
``e<k>``), sums and products keep the format of the left operand, values are rounded up to
nano units, and :meth:`Quantity.__str__` prints the canonical form Go prints (``1536Mi``,
``1500m``, ``2``, ``1k``). Parsing never raises: :func:`parse_quantity` returns ``None`` for
text that is not a quantity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, localcontext
from typing import Literal

__all__ = ["Quantity", "parse_quantity"]

Format = Literal["BinarySI", "DecimalSI", "DecimalExponent"]

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v // 10: k for k, v in _BINARY.items()}
_RE = re.compile(
    r"(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
_NANO = Decimal("1e-9")


@dataclass(frozen=True)
class Quantity:
    """An exact value and the format it prints in."""

    value: Decimal
    format: Format = "DecimalSI"

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.format)

    def __mul__(self, factor: int) -> Quantity:
        return Quantity(self.value * factor, self.format)

    def __str__(self) -> str:
        if self.value == 0:
            return "0"
        fmt = self.format
        if fmt == "BinarySI" and (abs(self.value) < 1024 or self.value != self.value.to_integral()):
            fmt = "DecimalSI"
        if fmt == "BinarySI":
            return _binary_text(int(self.value))
        return _decimal_text(self.value, fmt)


def _binary_text(number: int) -> str:
    power = 0
    while number % 1024 == 0 and power < max(_BINARY_SUFFIX):
        number //= 1024
        power += 1
    return f"{number}{_BINARY_SUFFIX.get(power, '')}"


def _decimal_text(value: Decimal, fmt: Format) -> str:
    with localcontext() as ctx:
        ctx.prec = 200
        sign, digits, exponent = value.normalize().as_tuple()
        mantissa = int("".join(map(str, digits)) or "0")
        assert isinstance(exponent, int)
        shift = exponent % 3
        mantissa *= 10**shift
        exponent -= shift
    text = f"{'-' if sign else ''}{mantissa}"
    if fmt == "DecimalExponent":
        return text if exponent == 0 else f"{text}e{exponent}"
    suffix = _DECIMAL_SUFFIX.get(exponent)
    return text + suffix if suffix is not None else f"{text}e{exponent}"


def parse_quantity(value: object) -> Quantity | None:
    """The quantity of a JSON value (``"1Gi"``, ``"500m"``, ``2``), or ``None`` if invalid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Quantity(Decimal(value))
    if isinstance(value, float):
        return (
            parse_quantity(repr(value)) if value == value and abs(value) != float("inf") else None
        )
    if not isinstance(value, str):
        return None
    match = _RE.fullmatch(value.strip())
    if match is None:
        return None
    number, suffix = Decimal(match["num"]), match["suffix"] or ""
    fmt: Format
    with localcontext() as ctx:
        ctx.prec = 200
        if suffix in _BINARY:
            number, fmt = number * (2 ** _BINARY[suffix]), "BinarySI"
        elif suffix in _DECIMAL:
            number, fmt = number.scaleb(_DECIMAL[suffix]), "DecimalSI"
        else:
            power = int(suffix[1:])
            if abs(power) > 100:
                return None
            number, fmt = number.scaleb(power), "DecimalExponent"
        number = number.quantize(_NANO, rounding=ROUND_CEILING) if number % _NANO else number
    return Quantity(number, fmt)
