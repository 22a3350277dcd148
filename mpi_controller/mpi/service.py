"""The headless Service ``<job>`` that gives launcher and workers their DNS names.

Upstream ``newJobService``: ``clusterIP: None``, selector on operator-name and job-name (so it
selects launcher *and* workers), no ports, ``publishNotReadyAddresses`` true only with
``runLauncherAsWorker``. On reconcile only the selector and publishNotReadyAddresses are
synced (:func:`service_needs_update`, :func:`update_service`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, json_copy
from mpi_controller.mpi import constants, naming
from mpi_controller.mpi.v2beta1.types import parse_mpi_job

__all__ = ["new_job_service", "service_needs_update", "update_service"]


def new_job_service(job: Mapping[str, Any]) -> dict[str, Any]:
    """The Service for ``job`` (a defaulted MPIJob dict)."""
    view = parse_mpi_job(job)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": naming.service_name(view.name),
            "namespace": view.namespace,
            "labels": {"app": view.name},
            "ownerReferences": [naming.controller_ref(job)],
        },
        "spec": {
            "clusterIP": "None",
            "selector": {
                constants.OPERATOR_NAME_LABEL: constants.OPERATOR_NAME,
                constants.JOB_NAME_LABEL: view.name,
            },
            "publishNotReadyAddresses": view.run_launcher_as_worker,
        },
    }


def service_needs_update(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """True if the selector or publishNotReadyAddresses of ``existing`` differ from ``desired``."""
    have, want = as_dict(existing.get("spec")), as_dict(desired.get("spec"))
    return (have.get("selector") or {}) != (want.get("selector") or {}) or bool(
        have.get("publishNotReadyAddresses")
    ) != bool(want.get("publishNotReadyAddresses"))


def update_service(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``existing`` with ``desired``'s selector and publishNotReadyAddresses."""
    out = json_copy(dict(existing))
    spec = out["spec"] = as_dict(out.get("spec"))
    want = as_dict(desired.get("spec"))
    spec["selector"] = json_copy(want.get("selector"))
    spec["publishNotReadyAddresses"] = bool(want.get("publishNotReadyAddresses"))
    return out
