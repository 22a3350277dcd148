"""Timestamps as the Kubernetes API writes them (UTC, RFC 3339).

``metav1.Time`` has second precision (``2026-01-02T03:04:05Z``); ``metav1.MicroTime`` (Leases,
events.k8s.io) microseconds (``2026-01-02T03:04:05.000006Z``). A naive ``datetime`` is taken as
UTC. :func:`parse_time` reads either back. :func:`utcnow` is the wall clock the controllers
inject where they need one.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["format_micro_time", "format_time", "parse_time", "utcnow"]


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
