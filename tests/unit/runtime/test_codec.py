"""runtime.codec: msgspec decoding equal to json.loads, and typed decoding of list pages and
watch events that keeps only the declared fields, with a full decode as the fallback."""

from __future__ import annotations

import json
from typing import Any, TypedDict

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpi_controller.runtime.codec import Codec, dumps, loads

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)


@given(json_values)
def test_loads_and_dumps_agree_with_the_json_module(value: Any) -> None:
    text = json.dumps(value)
    assert loads(text.encode()) == json.loads(text)
    assert json.loads(dumps(value)) == json.loads(text)


class _Meta(TypedDict, total=False):
    name: str
    labels: dict[str, str]


class _Thing(TypedDict, total=False):
    metadata: _Meta
    count: int


THING = {"apiVersion": "v1", "kind": "Thing",
         "metadata": {"name": "a", "labels": {"x": "y"}, "annotations": {"big": "z" * 100}},
         "spec": {"deep": [{"a": 1}]}, "count": 3}


def test_typed_list_keeps_only_declared_fields() -> None:
    page = {"kind": "ThingList", "apiVersion": "v1",
            "metadata": {"resourceVersion": "9", "continue": "tok"}, "items": [THING]}
    decoded = Codec(_Thing).decode_list(json.dumps(page).encode())
    assert decoded == {"kind": "ThingList", "apiVersion": "v1",
                       "metadata": {"resourceVersion": "9", "continue": "tok"},
                       "items": [{"metadata": {"name": "a", "labels": {"x": "y"}}, "count": 3}]}


def test_typed_list_falls_back_to_a_full_decode_when_a_field_has_another_type() -> None:
    odd = {**THING, "count": "three"}
    page = {"kind": "ThingList", "metadata": {}, "items": [odd]}
    assert Codec(_Thing).decode_list(json.dumps(page).encode()) == page


@pytest.mark.parametrize("kind", ["ADDED", "MODIFIED", "DELETED"])
def test_typed_object_events(kind: str) -> None:
    line = json.dumps({"type": kind, "object": THING}).encode()
    assert Codec(_Thing).decode_event(line) == {
        "type": kind, "object": {"metadata": {"name": "a", "labels": {"x": "y"}}, "count": 3}}


def test_bookmark_and_error_events_are_decoded_in_full() -> None:
    bookmark = {"type": "BOOKMARK", "object": {"kind": "Thing", "metadata": {
        "resourceVersion": "12", "annotations": {"k8s.io/initial-events-end": "true"}}}}
    error = {"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1",
                                         "status": "Failure", "code": 410, "reason": "Expired",
                                         "message": "too old resource version"}}
    codec = Codec(_Thing)
    for event in (bookmark, error):
        assert codec.decode_event(json.dumps(event).encode()) == event


def test_typed_event_falls_back_to_a_full_decode() -> None:
    odd = {"type": "ADDED", "object": {**THING, "metadata": {"name": 5}}}
    assert Codec(_Thing).decode_event(json.dumps(odd).encode()) == odd


def test_untyped_codec_decodes_everything() -> None:
    event = {"type": "ADDED", "object": THING}
    codec = Codec()
    assert codec.decode_event(json.dumps(event).encode()) == event
    assert codec.decode_list(json.dumps({"items": [THING]}).encode()) == {"items": [THING]}


def test_malformed_json_raises_a_value_error() -> None:
    with pytest.raises(msgspec.DecodeError):
        Codec(_Thing).decode_event(b'{"type": "ADDED", "object": {')
    assert issubclass(msgspec.DecodeError, ValueError)
