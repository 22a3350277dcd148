"""Owner references and the "not controlled by us" check (apimachinery ``metav1`` helpers).

Every child object carries exactly one owner reference: the controller reference to its
MPIJob, ``{apiVersion: kubeflow.org/v2beta1, kind: MPIJob, name, uid, controller: true,
blockOwnerDeletion: true}``. An object is "controlled by" an owner when its controller
reference (the one with ``controller: true``) has the owner's UID.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.api import constants as c
from mpi_controller.api.jsonvalue import as_dict, as_list, as_str

__all__ = [
    "MESSAGE_RESOURCE_EXISTS",
    "get_controller_of",
    "is_controlled_by",
    "new_controller_ref",
    "resource_exists_message",
]

MESSAGE_RESOURCE_EXISTS = (
    'Resource "{name}" of Kind "{kind}" already exists and is not managed by MPIJob'
)


def new_controller_ref(job: Mapping[str, Any]) -> dict[str, Any]:
    """``metav1.NewControllerRef(job, kubeflow.org/v2beta1 MPIJob)``."""
    meta = as_dict(job.get("metadata"))
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.KIND,
        "name": as_str(meta.get("name")),
        "uid": as_str(meta.get("uid")),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def get_controller_of(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The owner reference with ``controller: true``, or ``None`` (``metav1.GetControllerOf``)."""
    for ref in as_list(as_dict(obj.get("metadata")).get("ownerReferences")):
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """``metav1.IsControlledBy``: ``obj``'s controller reference has ``owner``'s UID."""
    ref = get_controller_of(obj)
    owner_uid = as_dict(owner.get("metadata")).get("uid")
    return ref is not None and ref.get("uid") == owner_uid


def resource_exists_message(obj: Mapping[str, Any], kind: str = "") -> str:
    """The ``ErrResourceExists`` message for ``obj``.

    Upstream prints the object's TypeMeta kind, which informer objects lack (``Kind ""``); we
    name the real kind: ``obj["kind"]`` when present, else ``kind``.
    """
    name = as_str(as_dict(obj.get("metadata")).get("name"))
    real_kind = as_str(obj.get("kind")) or kind
    return MESSAGE_RESOURCE_EXISTS.format(name=name, kind=real_kind)
