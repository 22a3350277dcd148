"""Defaulting steps the ``kubeflow.org/v1`` kinds share (training-operator v1.9
``defaulting_utils.go``), on a job dict changed in place (each kind's ``set_defaults`` works on
its own deep copy).

* :func:`camel_case_replica_types`: a replica spec key equal to a known type but for case
  (``WORKER``, ``ps``) is renamed to the type (``Worker``, ``PS``);
* :func:`default_replica`: ``replicas`` 1 (or the kind's number) and the kind's
  ``restartPolicy`` when unset;
* :func:`default_port`: the kind's port ``{name, containerPort}`` appended to its default
  container (the container of that name, else the first) unless a port of that name exists;
* :func:`default_clean_pod_policy`: ``runPolicy.cleanPodPolicy`` ``None`` when unset.

Malformed parts (a replica spec or template that is not an object, no containers) are skipped,
never an error: validation reports them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mpi_controller.engine.training.api import CLEAN_POD_POLICY_NONE
from mpi_controller.kube.jsonvalue import as_dict, as_list

__all__ = ["camel_case_replica_types", "default_clean_pod_policy", "default_port",
           "default_replica", "replica_spec_map"]

Obj = dict[str, Any]


def replica_spec_map(job: Obj, specs_field: str) -> dict[str, Any]:
    """``spec.<specs_field>`` when it is an object (``{}`` otherwise; never a copy)."""
    return as_dict(as_dict(job.get("spec")).get(specs_field))


def camel_case_replica_types(specs: dict[str, Any], types: Iterable[str]) -> None:
    """Rename keys that match a known type but for case (the first such key per type)."""
    for rtype in types:
        for key in list(specs):
            if key.lower() == rtype.lower() and key != rtype:
                specs[rtype] = specs.pop(key)
                break


def default_replica(spec: object, *, replicas: int, restart_policy: str) -> None:
    if not isinstance(spec, dict):
        return
    if spec.get("replicas") is None:
        spec["replicas"] = replicas
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = restart_policy


def default_port(spec: object, *, container_name: str, port_name: str, port: int) -> None:
    pod_spec = as_dict(as_dict(as_dict(spec).get("template")).get("spec"))
    containers = [c for c in as_list(pod_spec.get("containers")) if isinstance(c, dict)]
    if not containers:
        return
    target = next((c for c in containers if c.get("name") == container_name), containers[0])
    ports = as_list(target.get("ports"))
    if any(as_dict(p).get("name") == port_name for p in ports):
        return
    target["ports"] = [*ports, {"name": port_name, "containerPort": port}]


def default_clean_pod_policy(job: Obj) -> None:
    spec = job.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    policy = spec.setdefault("runPolicy", {})
    if isinstance(policy, dict) and policy.get("cleanPodPolicy") is None:
        policy["cleanPodPolicy"] = CLEAN_POD_POLICY_NONE
