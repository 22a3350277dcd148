"""The field shapes of the three MPIJob API versions, and the two operations conversion needs
on them. Pure.

A shape says which fields a version's schema has: :class:`Fields` (an object with these named
fields), :class:`MapOf` (an object with any keys, every value of one shape) or :data:`LEAF`
(a value taken whole: scalars, lists, the pod template, resource maps). All three versions
place every field they share at the same path with the same meaning, so converting is a
projection: the fields the target version has stay where they are, the others are set aside.

* :func:`split` divides a value into the part inside a shape and the part outside it.
* :func:`merge` puts set-aside parts back (the base wins where both have a value).

A value whose JSON type does not fit its shape (a string where an object is expected) is taken
whole, like a leaf: conversion moves data, validation judges it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "LEAF",
    "SHAPES",
    "UNION",
    "Fields",
    "MapOf",
    "Shape",
    "merge",
    "split",
]


class _Leaf:
    def __repr__(self) -> str:
        return "LEAF"


LEAF: Final = _Leaf()


@dataclass(frozen=True)
class Fields:
    """An object with exactly these fields (others are outside the shape)."""

    fields: Mapping[str, Shape]


@dataclass(frozen=True)
class MapOf:
    """An object with any keys, each value of shape ``item``."""

    item: Shape


Shape = Fields | MapOf | _Leaf


def _fields(**fields: Shape) -> Fields:
    return Fields(fields)


def _leaves(*names: str) -> dict[str, Shape]:
    return dict.fromkeys(names, LEAF)


_REPLICA_SPEC = _fields(**_leaves("replicas", "restartPolicy", "template"))
_CONDITIONS_ETC = _leaves("conditions", "startTime", "completionTime", "lastReconcileTime")

_SCHEDULING_POLICY = _fields(**_leaves(
    "minAvailable", "queue", "minResources", "priorityClass", "scheduleTimeoutSeconds"))
_RUN_POLICY = _fields(
    **_leaves("cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds",
              "backoffLimit", "suspend", "managedBy"),
    schedulingPolicy=_SCHEDULING_POLICY,
)
_STATUS = _fields(
    **_CONDITIONS_ETC,
    replicaStatuses=MapOf(_fields(**_leaves(
        "active", "succeeded", "failed", "labelSelector", "selector"))),
)

V2BETA1 = _fields(
    spec=_fields(
        **_leaves("slotsPerWorker", "runLauncherAsWorker", "sshAuthMountPath",
                  "launcherCreationPolicy", "mpiImplementation"),
        runPolicy=_RUN_POLICY,
        mpiReplicaSpecs=MapOf(_REPLICA_SPEC),
    ),
    status=_STATUS,
)
"""mpi-operator v0.8.2's ``kubeflow.org/v2beta1``."""

V1 = _fields(
    spec=_fields(
        **_leaves("slotsPerWorker", "cleanPodPolicy", "mainContainer"),
        runPolicy=_RUN_POLICY,
        mpiReplicaSpecs=MapOf(_REPLICA_SPEC),
    ),
    status=_STATUS,
)
"""training-operator v1.9's ``kubeflow.org/v1`` (``RunPolicy`` as in ``v2beta1``)."""

V1ALPHA2 = _fields(
    spec=_fields(
        **_leaves("slotsPerWorker", "backoffLimit", "activeDeadlineSeconds", "cleanPodPolicy",
                  "mainContainer"),
        runPolicy=_fields(
            **_leaves("cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds",
                      "backoffLimit"),
            schedulingPolicy=_fields(minAvailable=LEAF),
        ),
        mpiReplicaSpecs=MapOf(_REPLICA_SPEC),
    ),
    status=_fields(
        **_CONDITIONS_ETC,
        replicaStatuses=MapOf(_fields(**_leaves("active", "succeeded", "failed"))),
    ),
)
"""mpi-operator v0.2.3's ``kubeflow.org/v1alpha2`` (kubeflow/common ``64f9430``: ``RunPolicy``
without ``suspend``/``managedBy``, ``SchedulingPolicy`` with ``minAvailable`` only,
``ReplicaStatus`` without selectors)."""

SHAPES: Final[Mapping[str, Fields]] = {"v2beta1": V2BETA1, "v1": V1, "v1alpha2": V1ALPHA2}


def _union(a: Shape, b: Shape) -> Shape:
    if isinstance(a, Fields) and isinstance(b, Fields):
        keys = [*a.fields, *(k for k in b.fields if k not in a.fields)]
        return Fields({k: _union(a.fields[k], b.fields[k])
                       if k in a.fields and k in b.fields
                       else a.fields.get(k) or b.fields[k] for k in keys})
    if isinstance(a, MapOf) and isinstance(b, MapOf):
        return MapOf(_union(a.item, b.item))
    return a


UNION: Final = _union(_union(V2BETA1, V1), V1ALPHA2)
"""Every field of any version: what a conversion keeps (the rest no schema would store)."""


def split(value: Any, shape: Shape) -> tuple[Any, dict[str, Any] | None]:
    """``(inside, outside)``: the part of ``value`` within ``shape`` (a new container, leaves
    shared, never ``None`` for a present value) and the part outside it (``None`` when empty).

    Containers are kept even when all their content lies outside (an object that was there
    stays there, empty), so a partial object gains nothing and loses nothing."""
    if isinstance(shape, _Leaf) or not isinstance(value, dict):
        return value, None
    inside: dict[str, Any] = {}
    outside: dict[str, Any] = {}
    for key, item in value.items():
        child = shape.item if isinstance(shape, MapOf) else shape.fields.get(key)
        if child is None:
            outside[key] = item
            continue
        inside[key], rest = split(item, child)
        if rest is not None:
            outside[key] = rest
    return inside, outside or None


def merge(base: Any, extra: Any) -> Any:
    """``base`` with the parts of ``extra`` it lacks added (a new container; ``base`` wins on
    conflicts, objects are merged key by key)."""
    if not isinstance(base, dict) or not isinstance(extra, dict):
        return base
    out = dict(base)
    for key, item in extra.items():
        out[key] = merge(out[key], item) if key in out else item
    return out
