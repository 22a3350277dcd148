"""The PyTorchJob CRD (``pytorchjobs.kubeflow.org``): the ``kubeflow.org/v1`` schema of
training-operator v1.9's PyTorchJob (required ``pytorchReplicaSpecs``, ``elasticPolicy`` with
autoscaling/v2 ``metrics``, ``nprocPerNode`` and the shared run policy and status), the status
subresource, the **scale** subresource (the Worker replicas, so ``kubectl scale`` and an HPA
work), printer columns State and Age."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training.crd import (
    PRINTER_COLUMNS,
    job_schema,
    replica_spec,
    run_policy,
    worker_scale,
)
from mpi_controller.kube.crd import CRD, Version
from mpi_controller.kube.openapi import integer, string

METRIC_SPEC = "io.k8s.api.autoscaling.v2.MetricSpec"
SCALE = worker_scale("pytorchReplicaSpecs")


def elastic_policy(metric_spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": "Elastic training (torchrun's rendezvous): the PET_* environment, and "
                       "an HPA when metrics are set.",
        "properties": {
            "minReplicas": integer("int32", "Lowest number of workers (PET_NNODES min; HPA "
                                   "minReplicas); default: maxReplicas, else the workers."),
            "maxReplicas": integer("int32", "Highest number of workers (PET_NNODES max; HPA "
                                   "maxReplicas); default: minReplicas, else the workers."),
            "rdzvBackend": string("Rendezvous backend: c10d (default), etcd or etcd-v2."),
            "rdzvPort": integer("int32", "Rendezvous port; default: the Worker's "
                                "pytorchjob-port."),
            "rdzvHost": string("Rendezvous host; default: <job>-worker-0."),
            "rdzvId": string("Rendezvous id (PET_RDZV_ID)."),
            "rdzvConf": {
                "type": "array",
                "description": "Extra rendezvous configuration (PET_RDZV_CONF=k1=v1,k2=v2).",
                "items": {"type": "object", "properties": {"key": {"type": "string"},
                                                           "value": {"type": "string"}}},
            },
            "standalone": {"type": "boolean",
                           "description": "A local standalone rendezvous (PET_STANDALONE)."},
            "nProcPerNode": integer("int32", "Deprecated: use spec.nprocPerNode."),
            "maxRestarts": integer("int32", "Worker group restarts before failing "
                                   "(PET_MAX_RESTARTS)."),
            "metrics": {"type": "array", "items": metric_spec,
                        "description": "autoscaling/v2 metrics of the job's HPA; no HPA when "
                                       "unset."},
        },
    }


def pytorchjob_schema(template: dict[str, Any], metric_spec: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "type": "object",
        "required": ["pytorchReplicaSpecs"],
        "description": "Desired state of the PyTorchJob.",
        "properties": {
            "runPolicy": run_policy(),
            "elasticPolicy": elastic_policy(metric_spec),
            "pytorchReplicaSpecs": {
                "type": "object",
                "description": "Replica types: Master (one) and Worker.",
                "additionalProperties": replica_spec(template, "PyTorch"),
            },
            "nprocPerNode": string("Processes per node: auto (default), cpu, gpu or a number."),
        },
    }
    return job_schema("PyTorchJob", "PyTorchJob runs a distributed PyTorch program: one pod and "
                      "one headless Service per replica, MASTER_ADDR, WORLD_SIZE, RANK and the "
                      "PET_* variables in each pod.", spec)


PYTORCHJOB = CRD(
    group="kubeflow.org",
    kind="PyTorchJob",
    plural="pytorchjobs",
    versions=(Version("v1", pytorchjob_schema, PRINTER_COLUMNS, storage=True,
                      subresources={"status": {}, "scale": SCALE},
                      components=(METRIC_SPEC,)),),
)
