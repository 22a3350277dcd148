"""The training-operator kinds' benchmark workload, as data (pure; ``bench/harness.py`` runs it).

A :class:`TrainingKind` says what one job of a ``kubeflow.org/v1`` kind looks like in the
workload (its replica types and counts, its container) and what the lower bounds are: every
replica gets a pod and a Service (one create each), and the job's status is written at least
for Created, Running and Succeeded (cleanPodPolicy None: nothing is deleted). Workers, chiefs
and masters exit 0 after ``runs`` in KWOK (``sim.mpi-controller.io/duration``); parameter
servers run on.

Adding PyTorchJob is one more :class:`TrainingKind` in :data:`KINDS`, e.g.
``TrainingKind("pytorchjob", "PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs", "pytorch",
IMAGE, {"Master": 1, "Worker": 4})``; ``bench/harness.py`` then offers the workload
``pytorchjob`` (its Observer watches the kind's plural).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
DURATION = "sim.mpi-controller.io/duration"
STATUS_WRITES = 3  # Created, Running, Succeeded


@dataclass(frozen=True)
class TrainingKind:
    workload: str                 # the workload's name, also the --enable-scheme value
    kind: str
    plural: str
    replica_specs: str
    container: str
    image: str
    replicas: dict[str, int]

    @property
    def api_version(self) -> str:
        return "kubeflow.org/v1"

    @property
    def pods_per_job(self) -> int:
        return sum(self.replicas.values())

    @property
    def children_per_job(self) -> int:
        """Pods and Services of one job."""
        return 2 * self.pods_per_job

    @property
    def min_writes(self) -> int:
        """Child creates and status writes of one job's lifecycle."""
        return self.children_per_job + STATUS_WRITES

    def job(self, name: str, runs: str) -> Obj:
        """One job: every replica type with ``replicas`` pods running ``runs`` (Go duration)."""
        specs = {
            rtype: {"replicas": n, "restartPolicy": "Never", "template": {
                "metadata": {"annotations": {DURATION: runs}},
                "spec": {"containers": [{"name": self.container, "image": self.image}]}}}
            for rtype, n in self.replicas.items()}
        return {"apiVersion": self.api_version, "kind": self.kind,
                "metadata": {"name": name}, "spec": {self.replica_specs: specs}}


TFJOB = TrainingKind("tfjob", "TFJob", "tfjobs", "tfReplicaSpecs", "tensorflow",
                     "kubeflow/tf-dist-mnist-test:1.0", {"PS": 2, "Worker": 4})

KINDS = {k.workload: k for k in (TFJOB,)}


def children_needed(body: Obj) -> int:
    """How many child objects mean "every child of this job exists" (the harness's
    ``t_children``): an MPIJob's workers plus its launcher Job, Service, ConfigMap and Secret;
    a training-operator job's pods and Services."""
    for kind in KINDS.values():
        if body.get("kind") == kind.kind:
            specs = (body.get("spec") or {}).get(kind.replica_specs) or {}
            return 2 * sum(int(s.get("replicas", 1)) for s in specs.values())
    worker = ((body.get("spec") or {}).get("mpiReplicaSpecs") or {}).get("Worker") or {}
    return int(worker.get("replicas") or 0) + 4
