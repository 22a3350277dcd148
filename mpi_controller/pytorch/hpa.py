"""The HorizontalPodAutoscaler of an elastic PyTorchJob (training-operator v1.9 ``hpa.go``).

Only a job with ``elasticPolicy.metrics`` gets one (:func:`desired_hpa`): ``autoscaling/v2``,
named after the job, in its namespace, with the job's controller reference, scaling the job
itself through its scale subresource (``scaleTargetRef {kind: PyTorchJob, name: <job>,
apiVersion: kubeflow.org/v1}``, which scales ``spec.pytorchReplicaSpecs.Worker.replicas``),
``minReplicas``/``maxReplicas`` from the (defaulted) elastic policy and its ``metrics`` as
written.

:func:`hpa_changed` is upstream's semantic comparison of the specs: quantities (``value``,
``averageValue``) by value, so the API server's canonical form (``1000m`` stored as ``1``) is
no change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.api import API_VERSION
from mpi_controller.kube.jsonvalue import as_dict, as_str, json_copy
from mpi_controller.kube.quantity import parse_quantity
from mpi_controller.pytorch.constants import KIND
from mpi_controller.pytorch.v1.types import parse_elastic_policy

__all__ = ["API_VERSION_HPA", "KIND_HPA", "desired_hpa", "hpa_changed"]

API_VERSION_HPA = "autoscaling/v2"
KIND_HPA = "HorizontalPodAutoscaler"
_QUANTITY_KEYS = ("value", "averageValue")


def desired_hpa(job: Mapping[str, Any], owner_ref: Mapping[str, Any]) -> dict[str, Any] | None:
    """The HPA of the defaulted ``job`` (``None``: it asks for none)."""
    spec = as_dict(job.get("spec"))
    policy = parse_elastic_policy(spec.get("elasticPolicy"))
    if policy is None or policy.metrics is None:
        return None
    meta = as_dict(job.get("metadata"))
    name = as_str(meta.get("name"))
    hpa_spec: dict[str, Any] = {
        "scaleTargetRef": {"kind": KIND, "name": name, "apiVersion": API_VERSION}}
    if policy.min_replicas is not None:
        hpa_spec["minReplicas"] = policy.min_replicas
    hpa_spec["maxReplicas"] = policy.max_replicas or 0
    if policy.metrics:
        hpa_spec["metrics"] = json_copy(policy.metrics)
    return {
        "apiVersion": API_VERSION_HPA,
        "kind": KIND_HPA,
        "metadata": {"name": name, "namespace": as_str(meta.get("namespace")),
                     "ownerReferences": [dict(owner_ref)]},
        "spec": hpa_spec,
    }


def _comparable(value: Any) -> Any:
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        quantity = parse_quantity(item) if key in _QUANTITY_KEYS else None
        out[key] = quantity.value if quantity is not None else _comparable(item)
    return out


def hpa_changed(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """The stored HPA's spec differs from the desired one (module doc)."""
    return bool(_comparable(as_dict(existing.get("spec")))
                != _comparable(as_dict(desired.get("spec"))))
