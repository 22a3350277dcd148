"""Schema pieces every ``kubeflow.org/v1`` training-operator kind shares (training-operator
v1.9 ``common_types.go``, as its controller-gen CRDs publish them): a replica spec, the run
policy, the job status, the printer columns (State, Age) and the scale subresource of the
kinds that have one (the Worker replicas). A kind's module adds its own spec fields
(``mpi_controller/tensorflow/crd.py``)."""

from __future__ import annotations

from typing import Any

from mpi_controller.kube.openapi import (
    date_time,
    integer,
    label_selector,
    quantity,
    resource_schema,
    string,
)

__all__ = ["PRINTER_COLUMNS", "job_schema", "replica_spec", "run_policy", "status",
           "worker_scale"]


def replica_spec(template: dict[str, Any], what: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": f"One {what} replica type: how many pods, their template, how they "
                       "restart.",
        "properties": {
            "replicas": integer("int32", "Number of pods (default 1)."),
            "restartPolicy": string(
                "Always, OnFailure, Never or ExitCode (exit codes 1-127 fail the job, 128-255 "
                "restart the pod; the pod gets Never)."),
            "template": template,
        },
    }


def run_policy() -> dict[str, Any]:
    scheduling = {
        "type": "object",
        "description": "Gang scheduling (--gang-scheduler-name): the PodGroup's parameters.",
        "properties": {
            "minAvailable": integer("int32", "PodGroup minMember; default: all replicas."),
            "queue": {
                **string("Volcano queue; default: default. Immutable."),
                "x-kubernetes-validations": [{
                    "rule": "self == oldSelf",
                    "message": "spec.runPolicy.schedulingPolicy.queue is immutable"}],
            },
            "minResources": {
                "type": "object",
                "description": "PodGroup minResources; default: the requests of the first "
                               "minAvailable pods.",
                "additionalProperties": quantity(),
            },
            "priorityClass": string("Volcano PodGroup priorityClassName."),
            "scheduleTimeoutSeconds": integer("int32",
                                              "scheduler-plugins scheduleTimeoutSeconds."),
        },
    }
    return {
        "type": "object",
        "description": "Policies applied to the job's execution.",
        "properties": {
            "cleanPodPolicy": string("Which pods to delete when the job finishes: All, Running "
                                     "or None (the controller defaults it to None)."),
            "ttlSecondsAfterFinished": integer(
                "int32", "Delete the job this many seconds after it finished."),
            "activeDeadlineSeconds": integer(
                "int64", "Fail the job when it has been active this many seconds."),
            "backoffLimit": integer("int32", "Fail the job after this many restarts."),
            "schedulingPolicy": scheduling,
            "suspend": {"type": "boolean", "default": False,
                        "description": "Suspend the job: delete its pods and Services."},
            "managedBy": string("The controller that reconciles the job: "
                                "kubeflow.org/training-operator (unset) or "
                                "kueue.x-k8s.io/multikueue."),
        },
    }


def status(kind: str) -> dict[str, Any]:
    condition = {
        "type": "object",
        "required": ["status", "type"],
        "properties": {
            "type": string("Created, Running, Restarting, Succeeded, Suspended or Failed."),
            "status": string("True, False or Unknown."),
            "reason": string(f"Why it last changed, e.g. {kind}Running."),
            "message": string("Human-readable details."),
            "lastUpdateTime": date_time("When the condition was last set."),
            "lastTransitionTime": date_time("When its status last changed."),
        },
    }
    counts = {
        "type": "object",
        "properties": {
            "active": integer("int32", "Running pods."),
            "succeeded": integer("int32", "Succeeded pods."),
            "failed": integer("int32", "Failed pods."),
            "labelSelector": label_selector("Deprecated; never set."),
            "selector": string("The replica type's pods, as a label selector string."),
        },
    }
    return {
        "type": "object",
        "description": f"Observed state of the {kind}.",
        "properties": {
            "conditions": {"type": "array", "items": condition,
                           "description": "Latest last: the State column prints it."},
            "replicaStatuses": {"type": "object", "additionalProperties": counts,
                                "description": "Pod counts per replica type."},
            "startTime": date_time("When the job was first (or last resumed and) reconciled."),
            "completionTime": date_time("When the job finished."),
            "lastReconcileTime": date_time("When pods last waited for the PodGroup."),
        },
    }


def job_schema(kind: str, description: str, spec: dict[str, Any]) -> dict[str, Any]:
    return resource_schema(description, spec, status(kind))


PRINTER_COLUMNS = [
    {"name": "State", "type": "string", "jsonPath": ".status.conditions[-1:].type"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


def worker_scale(specs_field: str) -> dict[str, str]:
    """The scale subresource of the Worker replicas (``kubectl scale``, an HPA): their
    ``replicas``, active pods and ``replicaStatuses`` selector."""
    return {
        "specReplicasPath": f".spec.{specs_field}.Worker.replicas",
        "statusReplicasPath": ".status.replicaStatuses.Worker.active",
        "labelSelectorPath": ".status.replicaStatuses.Worker.selector",
    }
