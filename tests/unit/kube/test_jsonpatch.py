"""The JSON patch between two values (``mpi_controller/kube/jsonpatch.py``), checked by applying
it with the in-memory API server's RFC 6902 implementation."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.kube.jsonpatch import diff, pointer
from mpi_controller.testing.patches import json_patch

BEFORE: dict[str, Any] = {
    "metadata": {"name": "a", "labels": {"x/y": "1", "t~": "2"}},
    "spec": {"runtimePatches": [{"manager": "m", "time": "2026-01-01T00:00:00Z"},
                                {"manager": "n"}],
             "gone": 1, "list": [1, 2], "kind": {"a": 1}}}


def test_equal_values_need_no_operation() -> None:
    assert diff(BEFORE, copy.deepcopy(BEFORE)) == []


def test_each_change_is_one_operation_at_its_escaped_pointer() -> None:
    after = copy.deepcopy(BEFORE)
    after["spec"]["runtimePatches"][1]["time"] = "2026-02-02T00:00:00Z"
    after["metadata"]["labels"]["x/y"] = "3"
    del after["metadata"]["labels"]["t~"]
    del after["spec"]["gone"]
    after["spec"]["list"] = [1, 2, 3]
    after["spec"]["kind"] = "now a string"
    ops = diff(BEFORE, after)
    assert ops == [  # in an object, removes first
        {"op": "remove", "path": "/metadata/labels/t~0"},
        {"op": "replace", "path": "/metadata/labels/x~1y", "value": "3"},
        {"op": "remove", "path": "/spec/gone"},
        {"op": "add", "path": "/spec/runtimePatches/1/time", "value": "2026-02-02T00:00:00Z"},
        {"op": "replace", "path": "/spec/list", "value": [1, 2, 3]},
        {"op": "replace", "path": "/spec/kind", "value": "now a string"}]
    assert json_patch(copy.deepcopy(BEFORE), ops) == after


@pytest.mark.parametrize(("before", "after"), [
    (1, True), ({"a": 1}, {"a": 1.5}), ([], [None]), ({"a": {}}, {"a": []}), ("x", {"y": 1})])
def test_the_patch_applied_gives_the_new_value(before: Any, after: Any) -> None:
    doc = {"v": before}
    assert json_patch(copy.deepcopy(doc), diff(doc, {"v": after})) == {"v": after}


def test_pointers_escape_tilde_before_slash() -> None:
    assert pointer("spec", "a/~b", 0) == "/spec/a~1~0b/0"
