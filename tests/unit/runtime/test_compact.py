"""runtime.compact: interning, and a bounded table of shared read-only values."""

from __future__ import annotations

import pytest

from mpi_controller.runtime.compact import (
    Flyweights,
    compact_object,
    intern_json,
    intern_mapping,
    intern_str,
)


def test_intern_str_returns_one_object_per_string_value() -> None:
    a = "".join(["mpi-", "operator"])
    b = "".join(["mpi-oper", "ator"])
    assert a is not b
    assert intern_str(a) is intern_str(b)
    assert intern_str(5) == 5


def test_intern_mapping_copies_with_interned_keys_and_values() -> None:
    labels = {"".join(["ro", "le"]): "".join(["wor", "ker"]), "n": 1}
    out = intern_mapping(labels)
    assert out == labels
    assert out is not labels
    key = next(iter(out))
    assert key is intern_str("role")
    assert out[key] is intern_str("worker")


def test_intern_mapping_of_strings_alone_and_with_a_str_subclass() -> None:
    class Text(str):
        pass

    out = intern_mapping({_fresh("job-name"): _fresh("pi")})
    assert out == {"job-name": "pi"}
    key = next(iter(out))
    assert key is intern_str("job-name")
    assert out[key] is intern_str("pi")
    odd = intern_mapping({_fresh("k"): Text("v")})
    assert type(odd["k"]) is Text  # a str subclass cannot be interned: kept as it is
    assert next(iter(odd)) is intern_str("k")


def _fresh(text: str) -> str:
    """An equal string that is a new object (not the literal's)."""
    return "".join(list(text))


def test_intern_json_copies_nested_values_with_every_key_and_string_interned() -> None:
    uid = _fresh("0123-uid")
    value = {"metadata": {_fresh("uid"): uid, "labels": {"a": _fresh("x")}},
             "spec": {"items": [_fresh("x"), {"n": 1.5}, [None, True, _fresh("0123-uid")]]}}
    out = intern_json(value)
    assert out == value
    assert out is not value
    assert out["spec"]["items"] is not value["spec"]["items"]
    assert out["metadata"]["labels"]["a"] is out["spec"]["items"][0] is intern_str("x")
    assert out["metadata"]["uid"] is out["spec"]["items"][2][2] is intern_str("0123-uid")
    assert next(iter(out["metadata"])) is intern_str("uid")
    assert intern_json(7) == 7
    assert intern_json(None) is None


def test_compact_object_drops_managed_fields_and_leaves_the_input_as_it_was() -> None:
    obj = {"metadata": {"name": "a", "managedFields": [{"manager": "m"}]}, "data": {"k": "v"}}
    out = compact_object(obj)
    assert out == {"metadata": {"name": "a"}, "data": {"k": "v"}}
    assert obj["metadata"]["managedFields"] == [{"manager": "m"}]
    assert compact_object({"kind": "List"}) == {"kind": "List"}


def test_flyweights_share_one_instance_per_key() -> None:
    table = Flyweights()
    made: list[int] = []

    def make() -> dict[str, int]:
        made.append(1)
        return {"a": 1}

    first = table.share(("k", 1), make)
    assert table.share(("k", 1), make) is first
    assert table.share(("k", 2), make) is not first
    assert len(made) == 2
    assert len(table) == 2


def test_flyweights_empty_when_full() -> None:
    table = Flyweights(max_entries=2)
    a = table.share("a", lambda: ["a"])
    table.share("b", lambda: ["b"])
    table.share("c", lambda: ["c"])  # full: emptied, then "c" stored
    assert len(table) == 1
    assert table.share("a", lambda: ["a"]) is not a
    with pytest.raises(ValueError, match="at least 1"):
        Flyweights(max_entries=0)


def test_flyweights_keep_a_made_none() -> None:
    table = Flyweights()
    calls: list[int] = []
    assert table.share("n", lambda: calls.append(1)) is None
    assert table.share("n", lambda: calls.append(1)) is None
    assert calls == [1]
