"""The training-operator kinds' benchmark workload, as data (pure; ``bench/harness.py`` runs it).

A :class:`TrainingKind` says what one job of a ``kubeflow.org/v1`` kind looks like in the
workload (its replica types and counts, its container, more of its spec) and what the lower
bounds are: every replica gets a pod and a Service (one create each), a companion object such
as an elastic PyTorchJob's HorizontalPodAutoscaler one create, and the job's status is written
at least for Created, Running and Succeeded (cleanPodPolicy None: nothing is deleted). Workers,
chiefs and masters exit 0 after ``runs`` in KWOK (``sim.mpi-controller.io/duration``);
parameter servers run on.

A workload is one more :class:`TrainingKind` in :data:`KINDS` (``bench/harness.py`` then offers
it; its Observer watches the kind's plural; both operators run ``--enable-scheme
<kind.scheme>``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
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
    spec: Obj = field(default_factory=dict)  # the rest of each job's spec
    companions: int = 0                      # objects created per job beside pods and Services

    @property
    def api_version(self) -> str:
        return "kubeflow.org/v1"

    @property
    def scheme(self) -> str:
        """The ``--enable-scheme`` value of both operators."""
        return self.kind.lower()

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
        return self.children_per_job + self.companions + STATUS_WRITES

    def job(self, name: str, runs: str) -> Obj:
        """One job: every replica type with ``replicas`` pods running ``runs`` (Go duration)."""
        specs = {
            rtype: {"replicas": n, "restartPolicy": "Never", "template": {
                "metadata": {"annotations": {DURATION: runs}},
                "spec": {"containers": [{"name": self.container, "image": self.image}]}}}
            for rtype, n in self.replicas.items()}
        return {"apiVersion": self.api_version, "kind": self.kind,
                "metadata": {"name": name},
                "spec": {**copy.deepcopy(self.spec), self.replica_specs: specs}}


TFJOB = TrainingKind("tfjob", "TFJob", "tfjobs", "tfReplicaSpecs", "tensorflow",
                     "kubeflow/tf-dist-mnist-test:1.0", {"PS": 2, "Worker": 4})
PYTORCH_IMAGE = "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"
# The master decides success; each worker has the init container that waits for it.
PYTORCHJOB = TrainingKind("pytorchjob", "PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs",
                          "pytorch", PYTORCH_IMAGE, {"Master": 1, "Worker": 4})
# Elastic workers without a master (the first to succeed ends the job), with a CPU metric:
# each job also gets a HorizontalPodAutoscaler, created before its pods.
PYTORCHJOB_ELASTIC = TrainingKind(
    "pytorchjob-elastic", "PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs", "pytorch",
    PYTORCH_IMAGE, {"Worker": 4}, companions=1,
    spec={"elasticPolicy": {"minReplicas": 1, "maxReplicas": 8, "rdzvBackend": "c10d",
                            "metrics": [{"type": "Resource", "resource": {
                                "name": "cpu", "target": {"type": "Utilization",
                                                          "averageUtilization": 80}}}]}})

# The Master decides success (upstream's examples/xgboost/xgboostjob.yaml shape, 4 workers).
XGBOOSTJOB = TrainingKind("xgboostjob", "XGBoostJob", "xgboostjobs", "xgbReplicaSpecs", "xgboost",
                          "ghcr.io/kubeflow/training-v1/xgboost-dist-iris:latest",
                          {"Master": 1, "Worker": 4})
# Collective mode (no Master): every worker must succeed.
PADDLEJOB = TrainingKind("paddlejob", "PaddleJob", "paddlejobs", "paddleReplicaSpecs", "paddle",
                         "registry.baidubce.com/paddlepaddle/paddle:2.4.0rc0-cpu",
                         {"Worker": 4})
# Every worker must succeed.
JAXJOB = TrainingKind("jaxjob", "JAXJob", "jaxjobs", "jaxReplicaSpecs", "jax",
                      "ghcr.io/kubeflow/training-v1/jaxjob-simple:latest", {"Worker": 4})

KINDS = {k.workload: k for k in (TFJOB, PYTORCHJOB, PYTORCHJOB_ELASTIC, XGBOOSTJOB, PADDLEJOB,
                                 JAXJOB)}


@dataclass(frozen=True)
class TrainJobWorkload:
    """The ``trainjob`` workload: TrainJobs of ``nodes`` nodes on a namespaced copy
    (:meth:`runtime`) of the shipped ``torch-distributed`` runtime whose pods carry the KWOK
    duration, so they end after ``runs``. The operator only makes each TrainJob's JobSet and
    runtime snapshot (the JobSet controller makes its Jobs, the Job controller the pods):
    "every child exists" is the JobSet, "Succeeded" the TrainJob's ``Complete`` condition."""

    workload: str = "trainjob"
    kind: str = "TrainJob"
    plural: str = "trainjobs"
    api_version: str = "trainer.kubeflow.org/v1alpha1"
    runtime_name: str = "torch-kwok"
    nodes: int = 2
    children_per_job: int = 1  # the JobSet
    companions: int = 1        # the runtime snapshot ConfigMap (<trainjob>-runtime-snapshot)
    success: str = "Complete"

    @property
    def scheme(self) -> str:
        return "trainjob"

    @property
    def min_writes(self) -> int:
        """The JobSet's and the runtime snapshot's creates and the status write that says
        ``Complete`` (jobsStatus need not be written before)."""
        return self.children_per_job + self.companions + 1

    def runtime(self, shipped: Obj, runs: str) -> Obj:
        """A namespaced TrainingRuntime: ``shipped`` (a ClusterTrainingRuntime) with
        ``runs`` (Go duration) as the KWOK duration of every replicated Job's pods."""
        body = copy.deepcopy(shipped)
        body["kind"] = "TrainingRuntime"
        body["metadata"] = {"name": self.runtime_name,
                            "labels": dict(shipped["metadata"].get("labels") or {})}
        for rjob in body["spec"]["template"]["spec"]["replicatedJobs"]:
            pod = rjob["template"]["spec"]["template"]
            pod.setdefault("metadata", {}).setdefault("annotations", {})[DURATION] = runs
        return body

    def job(self, name: str) -> Obj:
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": {"name": name},
                "spec": {"runtimeRef": {"name": self.runtime_name, "kind": "TrainingRuntime",
                                        "apiGroup": "trainer.kubeflow.org"},
                         "trainer": {"numNodes": self.nodes}}}


TRAINJOB = TrainJobWorkload()


def children_needed(body: Obj) -> int:
    """How many child objects mean "every child of this job exists" (the harness's
    ``t_children``): an MPIJob's workers plus its launcher Job, Service, ConfigMap and Secret;
    a training-operator job's pods and Services; a TrainJob's JobSet."""
    if body.get("kind") == TRAINJOB.kind:
        return TRAINJOB.children_per_job
    for kind in KINDS.values():
        if body.get("kind") == kind.kind:
            specs = (body.get("spec") or {}).get(kind.replica_specs) or {}
            return 2 * sum(int(s.get("replicas", 1)) for s in specs.values())
    worker = ((body.get("spec") or {}).get("mpiReplicaSpecs") or {}).get("Worker") or {}
    return int(worker.get("replicas") or 0) + 4
