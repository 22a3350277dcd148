"""Owner references (apimachinery ``metav1`` helpers).

An object is *controlled by* an owner when its controller reference (the owner reference with
``controller: true``) carries the owner's UID. Every child a job kind creates carries exactly
one such reference to its job, built by :func:`controller_ref`, which refuses an owner without
``metadata.namespace`` or ``metadata.uid`` (:func:`require_identity`): every object the API
server returns has both, and a child without them would land nowhere or be orphaned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_record, as_str

__all__ = [
    "controller_of",
    "controller_ref",
    "is_controlled_by",
    "require_identity",
    "resource_exists_message",
]


def require_identity(obj: Mapping[str, Any]) -> None:
    """ValueError ``metadata.namespace is required`` (or ``metadata.uid``) when ``obj`` lacks
    either: the builders of a job's children need both."""
    meta = as_dict(obj.get("metadata"))
    for field in ("namespace", "uid"):
        if not as_str(meta.get(field)):
            raise ValueError(f"metadata.{field} is required")


def controller_ref(owner: Mapping[str, Any], *, api_version: str, kind: str) -> dict[str, Any]:
    """``metav1.NewControllerRef(owner, gvk)``: blockOwnerDeletion and controller set;
    ValueError naming the field when ``owner`` has no namespace or uid
    (:func:`require_identity`)."""
    require_identity(owner)
    meta = as_dict(owner.get("metadata"))
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": as_str(meta.get("name")),
        "uid": as_str(meta.get("uid")),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The owner reference with ``controller: true``, or ``None`` (``metav1.GetControllerOf``)."""
    refs = as_record(obj.get("metadata")).get("ownerReferences")
    if isinstance(refs, list):
        for ref in refs:
            if isinstance(ref, dict) and ref.get("controller") is True:
                return ref
    return None


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """``metav1.IsControlledBy``: ``obj``'s controller reference has ``owner``'s UID."""
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == as_record(owner.get("metadata")).get("uid")


def resource_exists_message(obj: Mapping[str, Any], *, kind: str, owner_kind: str) -> str:
    """``Resource "<name>" of Kind "<kind>" already exists and is not managed by <owner_kind>``.

    The Kubeflow operators print the object's TypeMeta kind, which informer objects lack
    (``Kind ""``); here the real kind is named: ``obj["kind"]`` when present, else ``kind``."""
    name = as_str(as_record(obj.get("metadata")).get("name"))
    real_kind = as_str(obj.get("kind")) or kind
    return (f'Resource "{name}" of Kind "{real_kind}" already exists and is not managed by '
            f"{owner_kind}")
