"""Text limits of the API: messages cut to a byte budget without breaking UTF-8."""

from __future__ import annotations

__all__ = ["MESSAGE_LIMIT", "truncate_message"]

MESSAGE_LIMIT = 1024
"""Bytes the API server keeps of an Event message (and the Kubeflow operators of any message)."""


def truncate_message(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` if it fits in ``limit`` UTF-8 bytes, else cut at a character boundary to
    ``limit - 3`` bytes and ended with ``...`` (the Kubeflow operators' ``truncateMessage``,
    which may split a character; this never does)."""
    raw = message.encode()
    if len(raw) <= limit:
        return message
    return raw[: max(limit - 3, 0)].decode(errors="ignore") + "..."
