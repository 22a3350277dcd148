"""Conversion of MPIJobs between ``kubeflow.org/v2beta1`` (the hub, stored), ``v1`` and
``v1alpha2``, hub and spoke, losslessly. Pure.

How it keeps everything (see :mod:`.shapes`): the three versions share every common field at
the same path, so a conversion keeps the fields the target version has and sets the others
aside in annotations:

* each field the object's own version cannot hold in an annotation of its own,
  :data:`FIELD_PREFIX` + its path, holding the field's value as JSON
  (``conversion.mpi-controller.io/spec.mainContainer: '"mpi"'``). Converting again puts them
  back. One annotation per field keeps each field a field of its own for server-side apply:
  the API server prunes a field an applier dropped by comparing field sets converted to every
  manager's version, which cannot see a change inside one annotation's value. A field whose
  path cannot be an annotation name (a map key with characters other than letters, digits,
  ``-`` and ``_``, or a name longer than 63 characters) goes into :data:`ANNOTATION` instead.
  Objects written before this form keep every field there; both are read.

:data:`ANNOTATION` is a JSON object with up to three keys:

* ``fields``: fields set aside that have no annotation of their own, as a partial object
  (``{"spec": {"mpiReplicaSpecs": {"a.b": {...}}}}``).
* ``origin``: the version the job was created in, when it is not the object's own version. A
  job keeps its origin through every conversion; :func:`generation_of` reads it.
* ``unset`` (``v2beta1`` objects of jobs created as ``v1`` or ``v1alpha2`` only): the fields
  the hub's schema defaults (:data:`HUB_DEFAULTS`) that the spoke object left unset. The API
  server fills them in on every read from storage; a conversion back to a spoke leaves out
  such a field while it still holds its default, so a ``v1`` or ``v1alpha2`` job reads back
  as it was written.

The annotations are absent when they would be empty (a ``v2beta1`` job read as ``v2beta1``, a
``v1`` job read as ``v1``).

Guarantees (proved by the property tests in ``tests/unit/mpi/test_conversion_properties.py``):

* ``convert(convert(x, v), version_of(x)) == x`` for every object ``x`` of a version's schema
  whose annotation is what a conversion writes, with one exception: converting a hub object
  whose ``unset`` lists a field that holds its default drops that field (the API server puts
  it back on the next read).
* A partial object (server-side apply converts field sets) gains nothing but the conversion
  annotations and loses nothing: absent containers stay absent, present ones stay present,
  defaults are never added.
* Fields no version's schema has are dropped (the API server would prune them anyway).

Errors (:class:`ConversionError`, a ``ValueError``) name the problem: an ``apiVersion`` that is
not an MPIJob version, a malformed ``metadata``, or an annotation that is not what a conversion
writes (a field annotation naming no field of any version, or a value that is not JSON).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mpi_controller.kube.jsonvalue import json_copy
from mpi_controller.mpi.conversion.shapes import LEAF, SHAPES, UNION, Fields, MapOf, merge, split

__all__ = [
    "ANNOTATION",
    "FIELD_PREFIX",
    "GROUP",
    "HUB",
    "HUB_DEFAULTS",
    "VERSIONS",
    "ConversionError",
    "conversion_record",
    "convert",
    "generation_of",
    "set_aside",
    "version_of",
]

GROUP: Final = "kubeflow.org"
HUB: Final = "v2beta1"
VERSIONS: Final = ("v2beta1", "v1", "v1alpha2")
ANNOTATION: Final = "mpi-controller.io/conversion"
FIELD_PREFIX: Final = "conversion.mpi-controller.io/"
_SEGMENT = re.compile(r"[A-Za-z0-9_-]+")
_NAME_MAX = 63  # an annotation name after its prefix

HUB_DEFAULTS: Final[Mapping[str, object]] = {
    "spec.slotsPerWorker": 1,
    "spec.runLauncherAsWorker": False,
    "spec.sshAuthMountPath": "/root/.ssh",
    "spec.launcherCreationPolicy": "AtStartup",
    "spec.mpiImplementation": "OpenMPI",
    "spec.runPolicy.suspend": False,
}
"""The defaults in the ``v2beta1`` schema of the CRD (outside the pod template), by path."""

_BODY = ("spec", "status")
_KEYS = ("origin", "fields", "unset")


class ConversionError(ValueError):
    """The object cannot be converted; the message names the problem."""


@dataclass(frozen=True)
class _Record:
    """The content of :data:`ANNOTATION`."""

    origin: str | None = None
    fields: dict[str, Any] | None = None
    unset: list[str] = field(default_factory=list)

    def text(self) -> str | None:
        doc: dict[str, Any] = {}
        if self.origin is not None:
            doc["origin"] = self.origin
        if self.fields:
            doc["fields"] = self.fields
        if self.unset:
            doc["unset"] = self.unset
        return json.dumps(doc, sort_keys=True, separators=(",", ":")) if doc else None


def version_of(obj: Mapping[str, Any]) -> str:
    """The MPIJob version of ``obj`` from its ``apiVersion``; ConversionError if it has none."""
    api_version = obj.get("apiVersion")
    group, _, version = api_version.partition("/") if isinstance(api_version, str) else ("", "", "")
    if group != GROUP or version not in VERSIONS:
        supported = ", ".join(f"{GROUP}/{v}" for v in VERSIONS)
        raise ConversionError(
            f"apiVersion {json.dumps(api_version)} is not an MPIJob version ({supported})")
    return version


def _annotations(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise ConversionError("metadata: must be an object")
    annotations = meta.get("annotations")
    if annotations is None:
        return {}
    if not isinstance(annotations, dict):
        raise ConversionError("metadata.annotations: must be an object")
    return annotations


def _read_record(obj: Mapping[str, Any], version: str) -> _Record:
    record = _read_main(obj, version)
    fields = _read_fields(obj)
    if fields is None:
        return record
    return _Record(record.origin, merge(fields, record.fields or {}), record.unset)


def _read_fields(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The fields set aside in annotations of their own, as a partial object."""
    out: dict[str, Any] = {}
    for name, text in _annotations(obj).items():
        if not isinstance(name, str) or not name.startswith(FIELD_PREFIX):
            continue
        where = f"metadata.annotations[{name}]"
        path = name[len(FIELD_PREFIX):].split(".")
        if not _is_field_path(path):
            raise ConversionError(f"{where}: {'.'.join(path)} is not a field of any MPIJob "
                                  "version")
        if not isinstance(text, str):
            raise ConversionError(f"{where}: must be a string")
        value = _json_in(text, where)
        node = out
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return out or None


def _json_in(text: str, where: str) -> Any:
    """The JSON value ``text`` holds; a :class:`ConversionError` naming ``where`` when it is not
    valid JSON."""
    try:
        return json.loads(text)
    except ValueError as err:
        raise ConversionError(f"{where}: not valid JSON: {err}") from None


def _is_field_path(path: list[str]) -> bool:
    """``path`` leads to a field of :data:`UNION` (a leaf, or an object in one)."""
    shape: Any = UNION
    for key in path:
        if not _SEGMENT.fullmatch(key):
            return False
        if isinstance(shape, Fields):
            if key not in shape.fields:
                return False
            shape = shape.fields[key]
        elif isinstance(shape, MapOf):
            shape = shape.item
        else:
            return False
    return shape is not UNION


def set_aside(fields: Mapping[str, Any] | None) -> tuple[dict[str, str], dict[str, Any] | None]:
    """``fields`` (a partial object of fields set aside) as annotations of their own, by
    name, and what cannot be named so (a partial object, ``None`` when nothing)."""
    named: dict[str, str] = {}
    rest = _name_leaves(dict(fields or {}), UNION, [], named)
    return named, rest


def _name_leaves(value: dict[str, Any], shape: Any, path: list[str],
                 named: dict[str, str]) -> dict[str, Any] | None:
    rest: dict[str, Any] = {}
    for key, item in value.items():
        child = shape.item if isinstance(shape, MapOf) else shape.fields.get(key)
        inner = [*path, key]
        if (child is not None and child is not LEAF and isinstance(item, dict) and item
                and isinstance(key, str) and _SEGMENT.fullmatch(key)):
            left = _name_leaves(item, child, inner, named)
            if left is not None:
                rest[key] = left
            continue
        name = ".".join(inner) if all(isinstance(k, str) for k in inner) else ""
        if (child is not None and all(_SEGMENT.fullmatch(k) for k in inner)
                and len(name) <= _NAME_MAX):
            named[FIELD_PREFIX + name] = json.dumps(item, sort_keys=True,
                                                    separators=(",", ":"))
        else:
            rest[key] = item
    return rest or None


def _read_main(obj: Mapping[str, Any], version: str) -> _Record:
    where = f"metadata.annotations[{ANNOTATION}]"
    text = _annotations(obj).get(ANNOTATION)
    if text is None:
        return _Record()
    doc = _json_in(text, where) if isinstance(text, str) else None
    if not isinstance(doc, dict):
        raise ConversionError(f"{where}: must be a JSON object")
    unknown = sorted(set(doc) - set(_KEYS))
    if unknown:
        raise ConversionError(f"{where}: unknown key {json.dumps(unknown[0])} (known: "
                              + ", ".join(_KEYS) + ")")
    origin, fields, unset = doc.get("origin"), doc.get("fields"), doc.get("unset", [])
    if origin is not None and origin not in VERSIONS:
        raise ConversionError(f"{where}: origin {json.dumps(origin)} is not one of "
                              + ", ".join(VERSIONS))
    if fields is not None and not isinstance(fields, dict):
        raise ConversionError(f"{where}: fields must be an object")
    if not isinstance(unset, list) or any(p not in HUB_DEFAULTS for p in unset):
        raise ConversionError(f"{where}: unset must be a list of " + ", ".join(HUB_DEFAULTS))
    if unset and version != HUB:
        raise ConversionError(f"{where}: unset is kept only in {GROUP}/{HUB} objects")
    return _Record(origin, fields, list(unset))


def conversion_record(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What the conversion annotations of ``obj`` hold, as one JSON object: ``origin``,
    ``fields`` (from the field annotations and :data:`ANNOTATION` together) and ``unset``,
    each left out when empty. Raises :class:`ConversionError` as :func:`convert` does."""
    text = _read_record(obj, version_of(obj)).text()
    return dict(json.loads(text)) if text else {}


def generation_of(job: Mapping[str, Any]) -> str:
    """The API version ``job`` was created in: ``"v2beta1"``, ``"v1"`` or ``"v1alpha2"``.

    Read from the object's own version and :data:`ANNOTATION`; it survives every conversion.
    Never raises: an object that is not an MPIJob version counts as ``v2beta1``, and an
    unreadable annotation as none."""
    try:
        version = version_of(job)
    except ConversionError:
        return HUB
    try:
        return _read_record(job, version).origin or version
    except ConversionError:
        return version


def _union(obj: Mapping[str, Any], version: str, record: _Record) -> dict[str, Any]:
    """Every field the job has, in the union of the versions' shapes."""
    body, _ = split({k: obj[k] for k in _BODY if k in obj}, SHAPES[version])
    extra, _ = split(record.fields or {}, UNION)
    union: dict[str, Any] = merge(body, extra)
    return union


def _walk(obj: dict[str, Any], path: str) -> tuple[dict[str, Any] | None, str]:
    """The object holding the last key of ``path``, if every step is an object, and that key."""
    *parents, last = path.split(".")
    node: Any = obj
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
    return (node if isinstance(node, dict) else None), last


def _assemble(obj: Mapping[str, Any], version: str, body: Mapping[str, Any],
              record: _Record) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": f"{GROUP}/{version}"}
    if "kind" in obj:
        out["kind"] = obj["kind"]
    if "metadata" in obj:  # a copy of its own: the annotations below are set in it
        meta = obj["metadata"]
        out["metadata"] = dict(meta) if isinstance(meta, dict) else meta
    out.update(body)
    annotations = _annotations(obj)
    kept = {k: v for k, v in annotations.items() if not _is_conversion_annotation(k)}
    named, rest = set_aside(record.fields)
    text = _Record(record.origin, rest, record.unset).text()
    ours = {**named, **({ANNOTATION: text} if text is not None else {})}
    if ours or len(kept) != len(annotations):
        if ours or kept:
            out.setdefault("metadata", {})["annotations"] = {**kept, **ours}
        else:
            del out["metadata"]["annotations"]
    return out


def _is_conversion_annotation(name: object) -> bool:
    return name == ANNOTATION or (isinstance(name, str) and name.startswith(FIELD_PREFIX))


def _to_hub(obj: dict[str, Any], version: str) -> dict[str, Any]:
    record = _read_record(obj, version)
    origin = record.origin or version
    hub, rest = split(_union(obj, version, record), SHAPES[HUB])
    unset = []
    for path in HUB_DEFAULTS if origin != HUB else ():
        parent, key = _walk(hub, path)
        if parent is not None and key not in parent:
            unset.append(path)
    return _assemble(obj, HUB, hub, _Record(None if origin == HUB else origin, rest, unset))


def _from_hub(obj: dict[str, Any], version: str) -> dict[str, Any]:
    record = _read_record(obj, HUB)
    origin = record.origin or HUB
    union = _union(obj, HUB, record)
    for path in record.unset:
        parent, key = _walk(union, path)
        if parent is not None and key in parent and parent[key] == HUB_DEFAULTS[path]:
            del parent[key]
    body, rest = split(union, SHAPES[version])
    return _assemble(obj, version, body, _Record(None if origin == version else origin, rest))


def convert(obj: Mapping[str, Any], version: str, *, copy: bool = True) -> dict[str, Any]:
    """``obj`` (an MPIJob of any served version, possibly partial) as ``kubeflow.org/<version>``.

    Returns a new object; ``obj`` is not changed. An object already in ``version`` is returned
    as a copy, unchanged. With ``copy=False`` the result shares the values the conversion
    leaves as they are (a pod template, ``metadata.managedFields``) with ``obj``, instead of
    copies: for a caller that changes neither afterwards (the conversion webhook encodes the
    result and drops both); about half the cost of a job with its managed fields. Raises
    :class:`ConversionError`."""
    if version not in VERSIONS:
        raise ConversionError(f"version {json.dumps(version)} is not one of "
                              + ", ".join(VERSIONS))
    source = version_of(obj)
    out: dict[str, Any] = json_copy(dict(obj)) if copy else dict(obj)
    if source == version:
        return out
    if not isinstance(out.get("metadata", {}), dict):
        raise ConversionError("metadata: must be an object")
    if source != HUB:
        out = _to_hub(out, source)
    if version != HUB:
        out = _from_hub(out, version)
    return out
