"""Properties of MPIJob conversion, over objects generated from the versions' schemas:
lossless round trips through any version and chain of versions, the API server's read-path
defaults invisible in the spoke views, the origin kept, partial objects neither gaining nor
losing fields, and no input that makes it raise anything but ConversionError."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_controller.mpi.conversion import (
    ANNOTATION,
    FIELD_PREFIX,
    HUB,
    HUB_DEFAULTS,
    VERSIONS,
    ConversionError,
    conversion_record,
    convert,
    generation_of,
)
from mpi_controller.mpi.conversion.convert import set_aside
from mpi_controller.mpi.conversion.shapes import LEAF, SHAPES, UNION, Fields, MapOf, Shape, merge

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_scalars = st.one_of(st.integers(-3, 10), st.booleans(), st.sampled_from(
    ["", "None", "All", "Running", "OpenMPI", "/root/.ssh", "AtStartup", "é"]))
_leaf = st.one_of(
    _scalars,
    st.lists(_scalars, max_size=2),
    st.dictionaries(st.sampled_from(["spec", "metadata", "cpu"]), _scalars, max_size=2),
)


def _value(shape: Shape) -> st.SearchStrategy[Any]:
    if shape is LEAF:
        return _leaf
    if isinstance(shape, MapOf):
        return st.dictionaries(st.sampled_from(["Launcher", "Worker", "Other"]),
                               _value(shape.item), max_size=2)
    assert isinstance(shape, Fields)
    return st.fixed_dictionaries({}, optional={k: _value(v) for k, v in shape.fields.items()})


_metadata = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "job"])},
    optional={"labels": st.dictionaries(st.sampled_from(["x", "y"]), st.just("v"), max_size=2),
              "annotations": st.dictionaries(st.sampled_from(["note", "other"]), st.just("v"),
                                             min_size=1, max_size=2),
              "uid": st.just("uid-1")})


@st.composite
def written(draw: st.DrawFn, version: str | None = None) -> dict[str, Any]:
    """An object as a user writes it in its own version (no conversion annotation)."""
    version = version or draw(st.sampled_from(VERSIONS))
    body = draw(_value(SHAPES[version]))
    return {"apiVersion": f"kubeflow.org/{version}", "kind": "MPIJob",
            "metadata": draw(_metadata), **body}


@st.composite
def held(draw: st.DrawFn) -> dict[str, Any]:
    """An object as the system holds it: written in its origin version, converted to another,
    then edited there (fields of that version set or changed)."""
    origin_obj = draw(written())
    version = draw(st.sampled_from(VERSIONS))
    obj = convert(origin_obj, version)
    edit = draw(_value(SHAPES[version]))
    body = merge(edit, {k: obj[k] for k in ("spec", "status") if k in obj})
    return {**{k: v for k, v in obj.items() if k not in ("spec", "status")}, **body}


def _record(obj: dict[str, Any]) -> dict[str, Any]:
    return conversion_record(obj)


def _walk(obj: dict[str, Any], path: str) -> tuple[dict[str, Any] | None, str]:
    *parents, last = path.split(".")
    node: Any = obj
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
    return (node if isinstance(node, dict) else None), last


def api_read(hub: dict[str, Any]) -> dict[str, Any]:
    """What the API server serves after reading ``hub`` from storage: the v2beta1 schema's
    defaults applied where the enclosing object exists."""
    out: dict[str, Any] = json.loads(json.dumps(hub))
    for path, default in HUB_DEFAULTS.items():
        parent, key = _walk(out, path)
        if parent is not None and key not in parent:
            parent[key] = default
    return out


def settled(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a hub object of a job created as a spoke) as a round trip leaves it: the hub
    fields its annotation lists as unset that hold their default are dropped, and the
    defaultable fields it lacks (where the enclosing object exists) are listed as unset. The
    API server reads both forms the same way (it restores the defaults on every read)."""
    out: dict[str, Any] = json.loads(json.dumps(obj))
    record = _record(obj)
    if not record.get("origin") or "metadata" not in out:
        return out
    unset = []
    for path, default in HUB_DEFAULTS.items():
        parent, key = _walk(out, path)
        if parent is None:
            continue
        if path in record.get("unset", []) and parent.get(key, default) == default:
            parent.pop(key, None)
        if key not in parent:
            unset.append(path)
    record["unset"] = unset
    if not unset:
        del record["unset"]
    # written as convert writes it: a field's own annotation where its path can be a name
    named, rest = set_aside(record.pop("fields", None))
    if rest:
        record["fields"] = rest
    annotations = {k: v for k, v in out["metadata"]["annotations"].items()
                   if not k.startswith(FIELD_PREFIX)}
    annotations.update(named)
    annotations[ANNOTATION] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    out["metadata"]["annotations"] = annotations
    return out


@SETTINGS
@given(written(), st.sampled_from(VERSIONS))
def test_written_objects_round_trip_through_every_version(obj: dict[str, Any], via: str) -> None:
    version = obj["apiVersion"].split("/")[1]
    assert convert(convert(obj, via), version) == obj


@SETTINGS
@given(written(), st.lists(st.sampled_from(VERSIONS), min_size=1, max_size=5))
def test_any_chain_of_conversions_returns_the_object(obj: dict[str, Any],
                                                     chain: list[str]) -> None:
    version = obj["apiVersion"].split("/")[1]
    current = obj
    for step in chain:
        current = convert(current, step)
        assert generation_of(current) == version
    assert convert(current, version) == obj


@SETTINGS
@given(st.sampled_from(["v1", "v1alpha2"]).flatmap(written), st.sampled_from(VERSIONS))
def test_spoke_jobs_read_back_unchanged_after_the_api_servers_defaults(
        obj: dict[str, Any], view: str) -> None:
    """Stored as v2beta1, defaulted by the API server on read, converted back: the spoke
    object as written (and every other view as if nothing had been defaulted)."""
    version = obj["apiVersion"].split("/")[1]
    stored = convert(obj, HUB)
    assert convert(api_read(stored), version) == obj
    if view != HUB:
        assert convert(api_read(stored), view) == convert(stored, view)


@SETTINGS
@given(held(), st.sampled_from(VERSIONS))
def test_held_objects_round_trip(obj: dict[str, Any], via: str) -> None:
    version = obj["apiVersion"].split("/")[1]
    back = convert(convert(obj, via), version)
    assert back == (settled(obj) if version == HUB and via != HUB else obj)
    assert generation_of(back) == generation_of(obj)


@SETTINGS
@given(written(version=HUB), st.sampled_from(["v1", "v1alpha2"]))
def test_v2beta1_jobs_round_trip_exactly(obj: dict[str, Any], via: str) -> None:
    assert convert(convert(api_read(obj), via), HUB) == api_read(obj)


@st.composite
def stored_spoke(draw: st.DrawFn) -> dict[str, Any]:
    """A v1 or v1alpha2 job as the API server reads it from storage: v2beta1 with the
    conversion's ``unset`` list, and the defaults it lists filled in."""
    return api_read(convert(draw(st.sampled_from(["v1", "v1alpha2"]).flatmap(written)), HUB))


@SETTINGS
@given(st.one_of(written(), held(), stored_spoke()), st.sampled_from(VERSIONS))
def test_converting_without_a_copy_gives_the_same_object_and_changes_nothing(
        obj: dict[str, Any], target: str) -> None:
    """``copy=False`` (the webhook's) shares values with its input instead of copying them:
    the same result, and the input as it was, whichever version each is in."""
    before = json.loads(json.dumps(obj))
    shared = convert(obj, target, copy=False)
    assert obj == before
    assert shared == convert(obj, target)
    assert obj == before


def _leaves(value: Any, shape: Shape, path: tuple[str, ...] = ()) -> set[tuple[Any, ...]]:
    if not isinstance(value, dict) or shape is LEAF:
        return {(*path, json.dumps(value, sort_keys=True))}
    out: set[tuple[Any, ...]] = set()
    for key, item in value.items():
        child = shape.item if isinstance(shape, MapOf) else shape.fields.get(key)  # type: ignore[union-attr]
        if child is not None:
            out |= _leaves(item, child, (*path, key))
    return out


def _containers(value: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    if not isinstance(value, dict) or path[-1:] in (("template",), ("minResources",)):
        return set()
    return {path}.union(*(_containers(v, (*path, k)) for k, v in value.items()))


@st.composite
def partial(draw: st.DrawFn) -> dict[str, Any]:
    """A field set as server-side apply converts it: any subset, metadata and spec optional."""
    obj = draw(held())
    for key in ("metadata", "spec", "status"):
        if key in obj and draw(st.booleans()):
            del obj[key]
    return obj


@SETTINGS
@given(partial(), st.sampled_from(VERSIONS))
def test_partial_objects_gain_and_lose_nothing(obj: dict[str, Any], target: str) -> None:
    out = convert(obj, target)
    if obj["apiVersion"] == f"kubeflow.org/{HUB}" and target != HUB:
        obj = settled(obj)  # the one loss allowed: defaults the API server restores on read
    body_in = {k: obj[k] for k in ("spec", "status") if k in obj}
    body_out = {k: out[k] for k in ("spec", "status") if k in out}
    moved_in = _record(obj).get("fields", {})
    moved_out = _record(out).get("fields", {})
    assert (_leaves(body_out, UNION) | _leaves(moved_out, UNION)
            == _leaves(body_in, UNION) | _leaves(moved_in, UNION))
    assert _containers(body_out) <= _containers(body_in) | _containers(moved_in)
    assert set(body_in) <= set(body_out) <= set(body_in) | set(moved_in)


_json = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=12)


@SETTINGS
@given(st.sampled_from(VERSIONS), st.sampled_from(VERSIONS), _json, _json, _json,
       st.one_of(st.none(), st.text(max_size=20), _json.map(json.dumps)))
def test_any_input_converts_or_raises_conversion_error(
        source: str, target: str, spec: Any, status: Any, meta: Any, note: Any) -> None:
    obj: dict[str, Any] = {"apiVersion": f"kubeflow.org/{source}", "spec": spec,
                           "status": status, "metadata": meta}
    if note is not None and isinstance(meta, dict):
        meta["annotations"] = {ANNOTATION: note}
    try:
        out = convert(obj, target)
    except ConversionError:
        return
    assert out["apiVersion"] == f"kubeflow.org/{target}"
