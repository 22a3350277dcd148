"""JSON bodies of the API, decoded and encoded with msgspec.

Contract:

* :func:`loads` decodes any JSON document to plain dicts, lists, strings, numbers, booleans and
  ``None``, exactly as ``json.loads`` would (several times faster; short dict keys are shared
  between documents, so cached objects cost less). :func:`dumps` encodes to compact UTF-8 JSON.
* :class:`Codec` decodes LIST pages and WATCH event lines for one kind of object. Without an
  ``item_type`` it is :func:`loads`. With one (a ``TypedDict``, ``total=False``, naming only
  the fields a cache keeps), list items and the objects of ``ADDED``/``MODIFIED``/``DELETED``
  events are decoded to that type: undeclared fields are skipped without ever being built, so
  a big object costs little memory and time on its way to a slim cache entry. ``BOOKMARK`` and
  ``ERROR`` objects are always decoded in full (an ``ERROR`` carries a ``Status``).
* A body that does not fit ``item_type`` (``msgspec.ValidationError``: a field of another JSON
  type than declared) is decoded in full instead: a surprise costs time, never data. Only
  malformed JSON raises (``msgspec.DecodeError``, a ``ValueError``).
"""

from __future__ import annotations

from typing import Any, TypedDict

import msgspec

__all__ = ["Codec", "dumps", "loads"]

_ANY = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()
_OBJECT_EVENTS = frozenset(("ADDED", "MODIFIED", "DELETED"))


def loads(data: bytes | str) -> Any:
    """Decode one JSON document (like ``json.loads``)."""
    return _ANY.decode(data)


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` as compact JSON."""
    return _ENCODER.encode(obj)


class _RawEvent(TypedDict, total=False):
    type: str
    object: msgspec.Raw


_RAW_EVENT = msgspec.json.Decoder(_RawEvent)


class Codec:
    """Decoder of one resource's LIST pages and WATCH events (see the module doc)."""

    def __init__(self, item_type: Any = None) -> None:
        self.item_type = item_type
        self._item: msgspec.json.Decoder[Any] | None = None
        self._list: msgspec.json.Decoder[Any] | None = None
        if item_type is not None:
            typed_dict: Any = TypedDict
            page = typed_dict("TypedList", {
                "kind": str, "apiVersion": str, "metadata": dict[str, Any],
                "items": list[item_type]}, total=False)
            self._item = msgspec.json.Decoder(item_type)
            self._list = msgspec.json.Decoder(page)

    def decode_list(self, data: bytes) -> Any:
        """One LIST page: ``{"kind", "apiVersion", "metadata", "items"}``."""
        if self._list is not None:
            try:
                return self._list.decode(data)
            except msgspec.ValidationError:
                pass
        return loads(data)

    def decode_event(self, line: bytes) -> Any:
        """One WATCH event: ``{"type": ..., "object": {...}}``."""
        if self._item is None:
            return loads(line)
        event = _RAW_EVENT.decode(line)
        kind = event.get("type", "")
        raw = event.get("object")
        obj: Any = None
        if raw is not None:
            obj = self._decode_object(raw) if kind in _OBJECT_EVENTS else loads(raw)
        return {"type": kind, "object": obj}

    def _decode_object(self, raw: msgspec.Raw) -> Any:
        assert self._item is not None
        try:
            return self._item.decode(raw)
        except msgspec.ValidationError:
            return loads(raw)

    def __repr__(self) -> str:
        name = getattr(self.item_type, "__name__", None)
        return f"Codec({name})" if name else "Codec()"
