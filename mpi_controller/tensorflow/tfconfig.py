"""``TF_CONFIG``: where a TensorFlow process finds the cluster (training-operator v1.9
``pkg/controller.v1/tensorflow/tensorflow.go``, ``util.go``).

* Only a **distributed** job gets it: the replicas of Chief, Evaluator, Master, PS and Worker
  add up to anything but 1.
* Hosts: ``<job>-<rtype>-<i>.<namespace>.svc`` (``.<cluster domain>`` appended when one is set),
  with the port named ``tfjob-port`` of that replica type's ``tensorflow`` container (2222
  without one).
* **Dense** (default): ``{"cluster":{"<rtype>":[hosts...],...},"task":{"type":"<rtype>",
  "index":<i>},"environment":"cloud"}`` with every replica type of the job (evaluator
  included), keys sorted, as Go's ``encoding/json`` writes it (no spaces).
* **Sparse** (``enableDynamicWorker``): ``{"cluster":{"worker":{...},"ps":[...]},"task":...}``
  without ``environment``: a worker sees only itself (``{"<i>": host}``) and every PS (``null``
  when the job has none), a PS only itself, other types neither.

The variable is appended to the env of the ``tensorflow`` container (:func:`add_tf_config`).
"""

from __future__ import annotations

import json
from typing import Any

from mpi_controller.engine.training.replicas import container_port, general_name
from mpi_controller.kube.jsonvalue import as_list, as_record
from mpi_controller.tensorflow.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    REPLICA_TYPE_CHIEF,
    REPLICA_TYPE_EVALUATOR,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_PS,
    REPLICA_TYPE_WORKER,
    TF_CONFIG,
)
from mpi_controller.tensorflow.v1.types import TFJob

__all__ = ["add_tf_config", "cluster_spec", "is_distributed", "tf_config", "tf_port"]

_COUNTED = (REPLICA_TYPE_CHIEF, REPLICA_TYPE_EVALUATOR, REPLICA_TYPE_MASTER, REPLICA_TYPE_PS,
            REPLICA_TYPE_WORKER)


def is_distributed(job: TFJob) -> bool:
    total = sum(job.replica_specs[t].replicas for t in _COUNTED if t in job.replica_specs)
    return total != 1


def tf_port(job: TFJob, rtype: str) -> int:
    """The ``tfjob-port`` of the replica type's ``tensorflow`` container, else 2222."""
    port = container_port(job.replica_specs[rtype], DEFAULT_CONTAINER_NAME, DEFAULT_PORT_NAME)
    return DEFAULT_PORT if port is None else port


def cluster_spec(job: TFJob, cluster_domain: str = "") -> dict[str, list[str]]:
    """``{lower rtype: [host:port, ...]}`` of every replica type (module doc)."""
    suffix = f".{job.namespace}.svc" + (f".{cluster_domain}" if cluster_domain else "")
    out: dict[str, list[str]] = {}
    for rtype, spec in job.replica_specs.items():
        port = tf_port(job, rtype)
        out[rtype.lower()] = [f"{general_name(job.name, rtype, i)}{suffix}:{port}"
                              for i in range(spec.replicas)]
    return out


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def tf_config(job: TFJob, rtype: str, index: int, cluster_domain: str = "", *,
              cluster: dict[str, list[str]] | None = None) -> str | None:
    """The TF_CONFIG value of pod ``<rtype>-<index>`` (``None``: the job is not distributed);
    ``cluster``: the job's :func:`cluster_spec`, when the caller has it already."""
    if not is_distributed(job):
        return None
    cluster = cluster if cluster is not None else cluster_spec(job, cluster_domain)
    rt = rtype.lower()
    task = {"type": rt, "index": index}
    if not job.enable_dynamic_worker:
        dense = {k: cluster[k] for k in sorted(cluster)}
        return _dumps({"cluster": dense, "task": task, "environment": "cloud"})
    workers: dict[str, str] = {}
    ps: list[str] | None = []
    if rt == REPLICA_TYPE_PS.lower():
        ps = [cluster[rt][index]]
    elif rt == REPLICA_TYPE_WORKER.lower():
        ps = cluster.get(REPLICA_TYPE_PS.lower())
        workers[str(index)] = cluster[rt][index]
    return _dumps({"cluster": {"worker": workers, "ps": ps}, "task": task})


def add_tf_config(template: dict[str, Any], value: str) -> None:
    """Append ``TF_CONFIG=value`` to the env of the template's ``tensorflow`` container."""
    for container in as_list(as_record(template.get("spec")).get("containers")):
        if isinstance(container, dict) and container.get("name") == DEFAULT_CONTAINER_NAME:
            container["env"] = [*as_list(container.get("env")), {"name": TF_CONFIG,
                                                                  "value": value}]
            return
