"""``SetDefaults_PaddleJob`` (training-operator v1.9 ``paddlepaddle_defaults.go``), on a deep
copy:

* ``runPolicy.cleanPodPolicy``: ``None``;
* replica spec keys camel-cased (``MASTER`` → ``Master``, ``worker`` → ``Worker``);
* each replica: ``replicas`` 1, ``restartPolicy`` ``OnFailure``, and the port ``{name: master,
  containerPort: 36543}`` on the ``paddle`` container (else the first) unless it has one of
  that name;
* ``elasticPolicy`` (after the replicas, so an unset Worker ``replicas`` counts as 1): when only
  one of ``minReplicas``/``maxReplicas`` is set it is copied to the other; when neither is,
  both become the Worker's ``replicas``. Without a Worker they stay unset: upstream
  dereferences a nil pointer there (its webhook does not refuse such a job, so the operator
  panics); here nothing reads them, so the job runs as it would without the policy.

Defaults are never written back to the API (upstream has no mutating webhook); only the
controller's in-memory copy has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.defaults import (
    camel_case_replica_types,
    default_clean_pod_policy,
    default_port,
    default_replica,
    replica_spec_map,
)
from mpi_controller.kube.jsonvalue import json_copy
from mpi_controller.paddle.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    DEFAULT_RESTART_POLICY,
    ELASTIC_POLICY,
    REPLICA_TYPE_WORKER,
    REPLICA_TYPES,
    SPECS_FIELD,
)

__all__ = ["set_defaults"]


def _default_elastic_policy(policy: dict[str, Any], specs: Mapping[str, Any]) -> None:
    low, high = policy.get("minReplicas"), policy.get("maxReplicas")
    if low is not None and high is not None:
        return
    if high is not None:
        policy["minReplicas"] = high
    elif low is not None:
        policy["maxReplicas"] = low
    else:
        worker = specs.get(REPLICA_TYPE_WORKER)
        if isinstance(worker, dict) and worker.get("replicas") is not None:
            policy["minReplicas"] = policy["maxReplicas"] = worker["replicas"]


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A defaulted deep copy of ``job`` (any malformed part is left as it is)."""
    out: dict[str, Any] = json_copy(dict(job))
    default_clean_pod_policy(out)
    specs = replica_spec_map(out, SPECS_FIELD)
    camel_case_replica_types(specs, REPLICA_TYPES)
    for replica in specs.values():
        default_replica(replica, replicas=1, restart_policy=DEFAULT_RESTART_POLICY)
        default_port(replica, container_name=DEFAULT_CONTAINER_NAME, port_name=DEFAULT_PORT_NAME,
                     port=DEFAULT_PORT)
    spec = out.get("spec")
    policy = spec.get(ELASTIC_POLICY) if isinstance(spec, dict) else None
    if isinstance(policy, dict):
        _default_elastic_policy(policy, specs)
    return out
