"""Timestamps as the Kubernetes API writes them (UTC, RFC 3339), and Go durations.

``metav1.Time`` has second precision (``2026-01-02T03:04:05Z``); ``metav1.MicroTime`` (Leases,
events.k8s.io) microseconds (``2026-01-02T03:04:05.000006Z``). A naive ``datetime`` is taken as
UTC. :func:`parse_time` reads either back. :func:`utcnow` is the wall clock the controllers
inject where they need one. :func:`parse_duration` reads a duration as Go's
``time.ParseDuration`` does (``90s``, ``1h30m``, ``87600h``, ``1.5h``; units ns, us, µs, ms, s,
m, h).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["format_micro_time", "format_time", "parse_duration", "parse_time", "utcnow"]

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
          "h": 3600.0}
_TERM = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def format_time(moment: datetime) -> str:
    """``metav1.Time`` JSON: RFC 3339 in UTC with second precision."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(moment: datetime) -> str:
    """``metav1.MicroTime`` JSON: RFC 3339 in UTC with microseconds."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: object) -> datetime | None:
    """A ``metav1.Time`` or ``MicroTime`` string as an aware UTC datetime; ``None`` for
    anything else (absent, malformed)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return _utc(moment)


def utcnow() -> datetime:
    """The current wall-clock time, timezone-aware (UTC)."""
    return datetime.now(UTC)


def parse_duration(text: str) -> timedelta:
    """``text`` as Go's ``time.ParseDuration`` reads it; ValueError naming the text."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return timedelta(0)
    terms = _TERM.findall(body)
    if not body or "".join(n + u for n, u in terms) != body:
        raise ValueError(f"time: invalid duration {text!r}")
    seconds = sum(float(n) * _UNITS[u] for n, u in terms)
    return timedelta(seconds=-seconds if text.startswith("-") else seconds)
