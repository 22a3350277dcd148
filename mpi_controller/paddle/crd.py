"""The PaddleJob CRD (``paddlejobs.kubeflow.org``): the ``kubeflow.org/v1`` schema of
training-operator v1.9's PaddleJob (required ``paddleReplicaSpecs``, ``elasticPolicy`` with
autoscaling/v2 ``metrics``, the shared run policy and status), the status subresource, the
**scale** subresource (the Worker replicas), printer columns State and Age."""

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
from mpi_controller.kube.openapi import integer

__all__ = ["METRIC_SPEC", "PADDLEJOB", "SCALE", "paddlejob_schema"]

METRIC_SPEC = "io.k8s.api.autoscaling.v2.MetricSpec"
SCALE = worker_scale("paddleReplicaSpecs")


def elastic_policy(metric_spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": "Elastic bounds of the workers; the controller only defaults them "
                       "(no environment variable and no autoscaler follow from it).",
        "properties": {
            "minReplicas": integer("int32", "Lowest number of workers; default: maxReplicas, "
                                   "else the Worker replicas."),
            "maxReplicas": integer("int32", "Highest number of workers; default: minReplicas, "
                                   "else the Worker replicas."),
            "maxRestarts": integer("int32", "Restarts of pods allowed in elastic mode."),
            "metrics": {"type": "array", "items": metric_spec,
                        "description": "autoscaling/v2 metrics (kept; no HPA is created)."},
        },
    }


def paddlejob_schema(template: dict[str, Any], metric_spec: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "type": "object",
        "required": ["paddleReplicaSpecs"],
        "description": "Desired state of the PaddleJob.",
        "properties": {
            "runPolicy": run_policy(),
            "elasticPolicy": elastic_policy(metric_spec),
            "paddleReplicaSpecs": {
                "type": "object",
                "description": "Replica types: Master (parameter servers; optional) and Worker.",
                "additionalProperties": replica_spec(template, "Paddle"),
            },
        },
    }
    return job_schema("PaddleJob", "PaddleJob runs a distributed PaddlePaddle program "
                      "(collective, or parameter-server with a Master): one pod and one "
                      "headless Service per replica, PADDLE_MASTER, PADDLE_NNODES and "
                      "PADDLE_JOB_ID in each pod.", spec)


PADDLEJOB = CRD(
    group="kubeflow.org",
    kind="PaddleJob",
    plural="paddlejobs",
    versions=(Version("v1", paddlejob_schema, PRINTER_COLUMNS, storage=True,
                      subresources={"status": {}, "scale": SCALE},
                      components=(METRIC_SPEC,)),),
)
