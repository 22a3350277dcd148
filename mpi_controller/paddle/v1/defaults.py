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

from mpi_controller.engine.training.defaults import default_elastic_replicas, default_job
from mpi_controller.paddle import constants
from mpi_controller.paddle.constants import ELASTIC_POLICY, REPLICA_TYPE_WORKER

__all__ = ["set_defaults"]


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A defaulted deep copy of ``job`` (any malformed part is left as it is)."""
    out, specs = default_job(job, constants)
    spec = out.get("spec")
    policy = spec.get(ELASTIC_POLICY) if isinstance(spec, dict) else None
    if isinstance(policy, dict):
        default_elastic_replicas(policy, specs.get(REPLICA_TYPE_WORKER))
    return out
