"""api.jsonvalue: total accessors, and json_copy (a deep copy like copy.deepcopy)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mpi_controller.kube.jsonvalue import as_dict, as_int, as_list, as_record, as_str, json_copy

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=25)


@given(json_values)
def test_json_copy_equals_deepcopy(value: Any) -> None:
    assert json_copy(value) == copy.deepcopy(value)


def test_json_copy_shares_nothing_mutable() -> None:
    original = {"spec": {"list": [{"a": 1}], "d": {"x": "y"}}}
    copied = json_copy(original)
    copied["spec"]["list"][0]["a"] = 2
    copied["spec"]["d"]["z"] = "w"
    assert original == {"spec": {"list": [{"a": 1}], "d": {"x": "y"}}}


def test_json_copy_deep_copies_what_json_has_not() -> None:
    inner = [1]
    value = {"t": (inner,), "s": {1, 2}}
    copied = json_copy(value)
    assert copied == value
    assert copied["t"][0] is not inner
    assert copied["s"] is not value["s"]


def test_as_record_reads_fields_of_any_dict_and_nothing_else() -> None:
    odd = {1: "x", "name": "a"}
    assert as_record(odd) is odd  # a lookup by name is unaffected by the key 1
    assert as_record(odd).get("name") == "a"
    assert as_dict(odd) == {}  # iterating its keys would meet a non-string one
    for wrong in ([], "x", None, 3):
        empty = as_record(wrong)
        assert empty == {}
        empty["written"] = True  # a fresh dict each time: writing it changes nothing shared
    assert as_record(None) == {}


def test_accessors_read_wrong_types_as_absent() -> None:
    assert as_dict({1: "x"}) == {}
    assert as_dict([]) == {}
    assert as_list({}) == []
    assert as_str(3) == ""
    assert as_int(True) is None
    assert as_int(7) == 7
