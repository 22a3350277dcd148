"""Cache: keys, tombstones, the indexer and its indexes, selectors and listers.

Mirrors client-go ``tools/cache`` (``store.go`` keys, ``thread_safe_store.go`` index upkeep
incl. removal of empty index sets, ``listers.go``) and apimachinery label selector semantics.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from mpi_controller.kube.owners import controller_of
from mpi_controller.kube.resources import PODS, PRIORITY_CLASSES
from mpi_controller.kube.selectors import parse_selector, selector_from_label_selector
from mpi_controller.runtime.cache import (
    CONTROLLER_UID_INDEX,
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    Lister,
    controller_uid_index,
    deletion_handling_key,
    meta_namespace_key,
    namespace_index,
    split_key,
)
from mpi_controller.runtime.errors import ApiError

Obj = dict[str, Any]


def obj(name: str, ns: str | None = "ns", owner: str | None = None, **labels: str) -> Obj:
    meta: Obj = {"name": name, "labels": dict(labels)}
    if ns:
        meta["namespace"] = ns
    if owner:
        meta["ownerReferences"] = [
            {"kind": "Other", "uid": "not-controller", "controller": False},
            {"kind": "MPIJob", "uid": owner, "controller": True},
        ]
    return {"metadata": meta}


# -- keys ---------------------------------------------------------------------------------


def test_meta_namespace_key_and_split_key_round_trip() -> None:
    assert meta_namespace_key(obj("a")) == "ns/a"
    assert meta_namespace_key(obj("node-1", ns=None)) == "node-1"
    assert split_key("ns/a") == ("ns", "a")
    assert split_key("node-1") == ("", "node-1")


@pytest.mark.parametrize("bad", ["", "a/b/c", "/a", "a/"])
def test_split_key_rejects_malformed_keys(bad: str) -> None:
    with pytest.raises(ValueError, match="unexpected key format"):
        split_key(bad)


def test_deletion_handling_key_unwraps_tombstones() -> None:
    """DeletionHandlingMetaNamespaceKeyFunc returns the tombstone's key."""
    tomb = DeletedFinalStateUnknown("ns/gone", obj("gone"))
    assert deletion_handling_key(tomb) == "ns/gone"
    assert deletion_handling_key(obj("a")) == "ns/a"


# -- index functions ------------------------------------------------------------------------


def test_namespace_and_controller_uid_index_functions() -> None:
    assert namespace_index(obj("a")) == ["ns"]
    assert namespace_index(obj("n", ns=None)) == []
    assert controller_uid_index(obj("a", owner="u1")) == ["u1"]
    assert controller_uid_index(obj("a")) == []
    assert controller_of(obj("a", owner="u1"))["kind"] == "MPIJob"  # type: ignore[index]


# -- indexer ---------------------------------------------------------------------------------


@pytest.fixture
def indexer() -> Indexer:
    return Indexer({NAMESPACE_INDEX: namespace_index, CONTROLLER_UID_INDEX: controller_uid_index})


def test_add_get_list_and_delete(indexer: Indexer) -> None:
    a, b = obj("a"), obj("b", ns="other")
    indexer.add(a)
    indexer.add(b)
    assert indexer.get_by_key("ns/a") is a
    assert indexer.get(obj("b", ns="other")) is b
    assert sorted(indexer.list_keys()) == ["ns/a", "other/b"]
    assert len(indexer) == 2
    assert "ns/a" in indexer
    indexer.delete(a)
    assert indexer.get_by_key("ns/a") is None
    indexer.delete(DeletedFinalStateUnknown("other/b", b))
    assert indexer.list() == []


def test_indexes_follow_updates_and_drop_empty_values(indexer: Indexer) -> None:
    """updateIndices: moving an object between index values; empty sets are removed
    (kubernetes/kubernetes#84959)."""
    indexer.add(obj("p1", owner="u1"))
    indexer.add(obj("p2", owner="u1"))
    assert indexer.index_keys(CONTROLLER_UID_INDEX, "u1") == ["ns/p1", "ns/p2"]
    indexer.update(obj("p1", owner="u2"))
    assert indexer.index_keys(CONTROLLER_UID_INDEX, "u1") == ["ns/p2"]
    assert [o["metadata"]["name"] for o in indexer.by_index(CONTROLLER_UID_INDEX, "u2")] == ["p1"]
    indexer.delete(obj("p2"))
    assert "u1" not in indexer.list_index_values(CONTROLLER_UID_INDEX)
    assert indexer.by_index(CONTROLLER_UID_INDEX, "u1") == []


def test_replace_rebuilds_content_and_indexes(indexer: Indexer) -> None:
    indexer.add(obj("old", owner="u1"))
    indexer.replace([obj("n1", owner="u2"), obj("n2", ns="x")])
    assert sorted(indexer.list_keys()) == ["ns/n1", "x/n2"]
    assert indexer.index_keys(CONTROLLER_UID_INDEX, "u1") == []
    assert indexer.index_keys(NAMESPACE_INDEX, "x") == ["x/n2"]


def test_add_indexers_indexes_existing_items_and_rejects_clashes() -> None:
    idx = Indexer()
    idx.add(obj("a", app="web"))
    idx.add_indexers({"app": lambda o: [o["metadata"]["labels"]["app"]]})
    assert idx.index_keys("app", "web") == ["ns/a"]
    with pytest.raises(ValueError, match="indexer conflict"):
        idx.add_indexers({"app": namespace_index})


def test_unknown_index_is_an_error(indexer: Indexer) -> None:
    with pytest.raises(KeyError, match="nope"):
        indexer.by_index("nope", "x")


# -- selectors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        (None, {}, True),
        ("", {"a": "b"}, True),
        ({"a": "b"}, {"a": "b", "x": "y"}, True),
        ({"a": "b"}, {"a": "c"}, False),
        ("a=b", {"a": "b"}, True),
        ("a==b", {"a": "b"}, True),
        ("a!=b", {}, True),  # != matches when the key is absent
        ("a!=b", {"a": "b"}, False),
        ("e in (x, y)", {"e": "y"}, True),
        ("e in (x,y)", {"e": "z"}, False),
        ("e in (x,y)", {}, False),
        ("e notin (x,y)", {}, True),
        ("e notin (x,y)", {"e": "x"}, False),
        ("!f", {"g": "1"}, True),
        ("!f", {"f": ""}, False),
        ("g", {"g": ""}, True),
        ("g", {}, False),
        ("a=b,c!=d,e in (x,y),!f,g", {"a": "b", "c": "x", "e": "x", "g": "1"}, True),
        ("a=b,c!=d,e in (x,y),!f,g", {"a": "b", "c": "d", "e": "x", "g": "1"}, False),
        ("app.kubernetes.io/name=mpi", {"app.kubernetes.io/name": "mpi"}, True),
    ],
)
def test_selector_matching(selector: Any, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(selector).matches(labels) is expected


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ({"a": "b", "c": "d"}, {"a": "b", "c": "d", "x": "y"}, True),
        ({"a": "b", "c": "d"}, {"a": "b"}, False),
        ({"a": "b", "c": "d"}, {"a": "b", "c": "e"}, False),
        ({"a": "b"}, {"a": ["b"]}, False),  # a malformed label value: no match, no error
        ("a=b,a=c", {"a": "b"}, False),  # one key required twice: never both
        ("a=b,a=b", {"a": "b"}, True),
        ("a=b,e in (x,y)", {"a": "b", "e": "y"}, True),  # not equalities only
    ],
)
def test_equality_selectors_match_as_the_requirements_do(
        selector: Any, labels: dict[str, Any], expected: bool) -> None:
    """Selectors of equalities only match dicts by their items in one comparison (issue 29);
    any other mapping, and any other selector, requirement by requirement: the same answers."""
    parsed = parse_selector(selector)
    assert parsed.matches(labels) is expected
    assert parsed.matches(MappingProxyType(labels)) is expected
    assert all(r.matches(labels) for r in parsed.requirements) is expected
    assert parsed.matches_object({"metadata": {"labels": labels}}) is expected
    assert parsed.matches_object({"metadata": MappingProxyType({"labels": labels})}) is expected
    assert parsed == parse_selector(selector)  # the kept dict is not part of equality


def test_selector_string_round_trip_and_errors() -> None:
    text = "a=b,c!=d,e in (x,y),!f,g"
    assert str(parse_selector(text)) == text
    with pytest.raises(ValueError, match="invalid label selector"):
        parse_selector("a=(b")


def test_label_selector_spec_conversion() -> None:
    sel = selector_from_label_selector({
        "matchLabels": {"app": "x"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                             {"key": "gone", "operator": "DoesNotExist"}],
    })
    assert sel.matches({"app": "x", "tier": "a"})
    assert not sel.matches({"app": "x", "tier": "a", "gone": "1"})
    assert selector_from_label_selector(None).matches({"anything": "1"})


# -- listers -------------------------------------------------------------------------------------


def test_listers_filter_by_namespace_and_selector(indexer: Indexer) -> None:
    pods = (obj("w0", role="worker"), obj("l", role="launcher"), obj("w1", ns="x", role="worker"))
    for o in pods:
        indexer.add(o)
    lister = Lister(indexer, PODS)
    assert sorted(o["metadata"]["name"] for o in lister.list("role=worker")) == ["w0", "w1"]
    ns = lister.namespaced("ns")
    assert [o["metadata"]["name"] for o in ns.list({"role": "launcher"})] == ["l"]
    assert len(ns.list()) == 2
    assert ns.get("w0") is indexer.get_by_key("ns/w0")


def test_namespace_lister_works_without_namespace_index() -> None:
    idx = Indexer()
    idx.add(obj("a"))
    idx.add(obj("b", ns="x"))
    assert [o["metadata"]["name"] for o in Lister(idx).namespaced("x").list()] == ["b"]


def test_lister_get_raises_not_found_like_the_api(indexer: Indexer) -> None:
    with pytest.raises(ApiError) as err:
        Lister(indexer, PODS).namespaced("ns").get("missing")
    assert err.value.is_not_found()
    assert err.value.message == 'pods "missing" not found'
    with pytest.raises(ApiError) as err:
        Lister(Indexer(), PRIORITY_CLASSES).get("high")
    assert err.value.message == 'priorityclasses.scheduling.k8s.io "high" not found'
    assert err.value.body is not None
    assert err.value.body["reason"] == "NotFound"
