"""``SetDefaults_PyTorchJob`` (training-operator v1.9 ``pytorch_defaults.go``), on a deep copy:

* ``runPolicy.cleanPodPolicy``: ``None``;
* replica spec keys camel-cased (``MASTER`` → ``Master``, ``worker`` → ``Worker``);
* each replica: ``replicas`` 1, ``restartPolicy`` ``OnFailure``, and the port ``{name:
  pytorchjob-port, containerPort: 23456}`` on the ``pytorch`` container (else the first) unless
  it has one of that name;
* ``elasticPolicy``: when only one of ``minReplicas``/``maxReplicas`` is set it is copied to the
  other; when neither is, both become the Worker's ``replicas`` (left unset without a Worker,
  which validation rejects; upstream dereferences a nil pointer there);
* ``nprocPerNode``: ``auto`` unless set, or unless the deprecated
  ``elasticPolicy.nProcPerNode`` is.

Defaults are never written back to the API (upstream has no mutating webhook); only the
controller's in-memory copy has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.defaults import default_elastic_replicas, default_job
from mpi_controller.kube.jsonvalue import as_record
from mpi_controller.pytorch import constants
from mpi_controller.pytorch.constants import (
    DEFAULT_NPROC_PER_NODE,
    ELASTIC_POLICY,
    REPLICA_TYPE_WORKER,
)

__all__ = ["set_defaults"]


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A defaulted deep copy of ``job`` (any malformed part is left as it is)."""
    out, specs = default_job(job, constants)
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out
    policy = spec.get(ELASTIC_POLICY)
    if isinstance(policy, dict):
        default_elastic_replicas(policy, specs.get(REPLICA_TYPE_WORKER))
    elastic_nproc = as_record(policy).get("nProcPerNode")
    if elastic_nproc is None and spec.get("nprocPerNode") is None:
        spec["nprocPerNode"] = DEFAULT_NPROC_PER_NODE
    return out
