"""Defaulting the ``kubeflow.org/v1`` kinds share (training-operator v1.9 ``defaulting_utils.go``
and the common part of every ``SetDefaults_<Kind>``).

:func:`default_job` is that common part, on a deep copy of the job, with the kind's names
(:class:`~mpi_controller.engine.training.names.KindNames`): ``runPolicy.cleanPodPolicy``
``None``; replica spec keys camel-cased; each replica's ``replicas`` 1, the kind's
``restartPolicy`` and its port. A kind with defaults of its own (TFJob's ``successPolicy``,
PyTorchJob's and PaddleJob's ``elasticPolicy``) adds them to the copy it returns. Its steps,
on a job dict changed in place:

* :func:`camel_case_replica_types`: a replica spec key equal to a known type but for case
  (``WORKER``, ``ps``) is renamed to the type (``Worker``, ``PS``);
* :func:`default_replica`: ``replicas`` 1 (or the kind's number) and the kind's
  ``restartPolicy`` when unset;
* :func:`default_port`: the kind's port ``{name, containerPort}`` appended to its default
  container (the container of that name, else the first) unless a port of that name exists;
* :func:`default_clean_pod_policy`: ``runPolicy.cleanPodPolicy`` ``None`` when unset.

:func:`default_elastic_replicas` is the ``elasticPolicy`` rule PyTorchJob and PaddleJob share.

Malformed parts (a replica spec or template that is not an object, no containers) are skipped,
never an error: validation reports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mpi_controller.engine.training.api import CLEAN_POD_POLICY_NONE
from mpi_controller.engine.training.names import KindNames
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_list, as_record, json_copy

__all__ = ["camel_case_replica_types", "default_clean_pod_policy", "default_elastic_replicas",
           "default_job", "default_port", "default_replica", "replica_spec_map"]



def replica_spec_map(job: Obj, specs_field: str) -> dict[str, Any]:
    """``spec.<specs_field>`` when it is an object (``{}`` otherwise; never a copy)."""
    return as_dict(as_record(job.get("spec")).get(specs_field))


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
    pod_spec = as_dict(as_record(as_record(spec).get("template")).get("spec"))
    containers = [c for c in as_list(pod_spec.get("containers")) if isinstance(c, dict)]
    if not containers:
        return
    target = next((c for c in containers if c.get("name") == container_name), containers[0])
    ports = as_list(target.get("ports"))
    if any(as_record(p).get("name") == port_name for p in ports):
        return
    target["ports"] = [*ports, {"name": port_name, "containerPort": port}]


def default_clean_pod_policy(job: Obj) -> None:
    spec = job.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    policy = spec.setdefault("runPolicy", {})
    if isinstance(policy, dict) and policy.get("cleanPodPolicy") is None:
        policy["cleanPodPolicy"] = CLEAN_POD_POLICY_NONE


def default_job(job: Mapping[str, Any], names: KindNames) -> tuple[Obj, dict[str, Any]]:
    """A deep copy of ``job`` with the common defaults of the module doc (any malformed part is
    left as it is), and its replica spec map (part of the copy; ``{}`` when it has none) for the
    kind's own defaults."""
    out: Obj = json_copy(dict(job))
    default_clean_pod_policy(out)
    specs = replica_spec_map(out, names.SPECS_FIELD)
    camel_case_replica_types(specs, names.REPLICA_TYPES)
    for replica in specs.values():
        default_replica(replica, replicas=1, restart_policy=names.DEFAULT_RESTART_POLICY)
        default_port(replica, container_name=names.DEFAULT_CONTAINER_NAME,
                     port_name=names.DEFAULT_PORT_NAME, port=names.DEFAULT_PORT)
    return out, specs


def default_elastic_replicas(policy: dict[str, Any], worker: object) -> None:
    """``elasticPolicy``'s ``minReplicas``/``maxReplicas``: when only one is set it is copied to
    the other; when neither is, both become ``replicas`` of ``worker`` (the Worker's replica
    spec, defaulted; both stay unset when it is not an object)."""
    low, high = policy.get("minReplicas"), policy.get("maxReplicas")
    if low is not None and high is not None:
        return
    if high is not None:
        policy["minReplicas"] = high
    elif low is not None:
        policy["maxReplicas"] = low
    elif isinstance(worker, dict) and worker.get("replicas") is not None:
        policy["minReplicas"] = policy["maxReplicas"] = worker["replicas"]
