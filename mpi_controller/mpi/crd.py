"""The MPIJob CRD (``mpijobs.kubeflow.org``): the ``kubeflow.org/v2beta1`` schema (storage),
written after upstream mpi-operator v0.8.2's CRD (defaults, enums, required fields), and the
older versions served through the conversion webhook: ``v1`` after training-operator v1.9's
CRD and ``v1alpha2`` after mpi-operator v0.2.3's (its schema checks made structural)."""

from __future__ import annotations

import copy
from typing import Any

from mpi_controller.kube.crd import CRD, Version
from mpi_controller.kube.openapi import (
    date_time,
    integer,
    label_selector,
    quantity,
    resource_schema,
    string,
)


def _run_policy() -> dict[str, Any]:
    quantity_schema = quantity()
    scheduling = {
        "type": "object",
        "description": "Gang-scheduling parameters (--gang-scheduling).",
        "properties": {
            "minAvailable": integer("int32", "PodGroup minMember; default: Worker replicas + 1."),
            "queue": string("Volcano queue; default: annotation scheduling.volcano.sh/queue-name."),
            "minResources": {
                "type": "object",
                "description": "PodGroup minResources; default: computed from the replicas.",
                "additionalProperties": quantity_schema,
            },
            "priorityClass": string("Volcano PodGroup priorityClassName."),
            "scheduleTimeoutSeconds": integer("int32", "scheduler-plugins scheduleTimeoutSeconds."),
        },
    }
    return {
        "type": "object",
        "description": "Policies applied to the job's execution.",
        "properties": {
            "cleanPodPolicy": string(
                "Which worker pods to delete when the job finishes: All, Running or None "
                "(the controller defaults it to None)."
            ),
            "ttlSecondsAfterFinished": integer("int32", "Copied to the launcher Job."),
            "activeDeadlineSeconds": integer("int64", "Copied to the launcher Job."),
            "backoffLimit": integer("int32", "Copied to the launcher Job."),
            "schedulingPolicy": scheduling,
            "suspend": {
                "type": "boolean",
                "default": False,
                "description": "Suspend the job: delete workers, suspend the launcher.",
            },
            "managedBy": string(
                "The controller that reconciles this job: kubeflow.org/mpi-operator (unset) "
                "or kueue.x-k8s.io/multikueue."
            ),
        },
    }


def _status() -> dict[str, Any]:
    condition = {
        "type": "object",
        "required": ["status", "type"],
        "properties": {
            "type": string("Created, Running, Restarting, Succeeded, Suspended or Failed."),
            "status": string("True, False or Unknown.", enum=["True", "False", "Unknown"]),
            "reason": string("One-word reason of the last transition."),
            "message": string("Human-readable details."),
            "lastUpdateTime": date_time("When the condition was last updated."),
            "lastTransitionTime": date_time("When the status last changed."),
        },
    }
    replica_status = {
        "type": "object",
        "properties": {
            "active": integer("int32", "Running pods."),
            "succeeded": integer("int32", "Succeeded pods."),
            "failed": integer("int32", "Failed pods."),
            "labelSelector": label_selector("Deprecated; never set."),
            "selector": string(
                "Label selector of the replica's pods (Worker, with the ScaleSelector gate: the "
                "scale subresource's labelSelectorPath)."),
        },
    }
    return {
        "type": "object",
        "description": "Observed state of the MPIJob.",
        "properties": {
            "conditions": {
                "type": "array",
                "items": condition,
                "x-kubernetes-list-map-keys": ["type"],
                "x-kubernetes-list-type": "map",
            },
            "replicaStatuses": {
                "type": "object",
                "description": "Per replica type (Launcher, Worker).",
                "additionalProperties": replica_status,
            },
            "startTime": date_time("When the job started (or was last resumed)."),
            "completionTime": date_time("When the job finished."),
            "lastReconcileTime": date_time("Never set."),
        },
    }


def mpijob_schema(template: dict[str, Any]) -> dict[str, Any]:
    replica_spec = {
        "type": "object",
        "properties": {
            "replicas": integer("int32", "Number of pods (Launcher: 1)."),
            "restartPolicy": string("Pod restart policy: Never or OnFailure (ExitCode → Never)."),
            "template": template,
        },
    }
    spec = {
        "type": "object",
        "required": ["mpiReplicaSpecs"],
        "description": "Desired state of the MPIJob.",
        "properties": {
            "slotsPerWorker": integer("int32", "Slots per host in the hostfile.", default=1),
            "runLauncherAsWorker": {
                "type": "boolean",
                "default": False,
                "description": "Also list the launcher as a host.",
            },
            "runPolicy": _run_policy(),
            "mpiReplicaSpecs": {
                "type": "object",
                "description": "Launcher and Worker replica specs.",
                "additionalProperties": replica_spec,
            },
            "sshAuthMountPath": string("Where the SSH Secret is mounted.", default="/root/.ssh"),
            "launcherCreationPolicy": string(
                "AtStartup or WaitForWorkersReady (as upstream, not enforced as an enum).",
                default="AtStartup",
            ),
            "mpiImplementation": string(
                "OpenMPI, Intel or MPICH.", default="OpenMPI", enum=["OpenMPI", "Intel", "MPICH"]
            ),
        },
    }
    return resource_schema("MPIJob runs an MPI program: one launcher Job and N worker pods.",
                           spec, _status())


PRINTER_COLUMNS = [
    {
        "name": "State",
        "type": "string",
        "jsonPath": ".status.conditions[-1:].type",
        "description": (
            "Type of the most recently changed condition. Approximates the latest True "
            "condition: JSONPath filters cannot pick the last match, and the server prints the "
            "first one. Conditions are ordered by last change, so this is exact while running, "
            "succeeded or failed, but shows Running (False) right after a suspension or a finish "
            "that was observed before Running."
        ),
    },
    {"name": "Workers", "type": "integer", "jsonPath": ".spec.mpiReplicaSpecs.Worker.replicas"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


# Beyond upstream (kubeflow/mpi-operator#278, #336): `kubectl scale` and an HPA resize the
# workers; the label selector is written with the controller's ScaleSelector feature gate.
SUBRESOURCES = {
    "status": {},
    "scale": {
        "specReplicasPath": ".spec.mpiReplicaSpecs.Worker.replicas",
        "statusReplicasPath": ".status.replicaStatuses.Worker.active",
        "labelSelectorPath": ".status.replicaStatuses.Worker.selector",
    },
}
V1ALPHA2_SUBRESOURCES = {
    "status": {},
    "scale": {k: v for k, v in SUBRESOURCES["scale"].items() if k != "labelSelectorPath"},
}
"""v1 is the group's preferred version (GA sorts first), so the HPA controller and
``kubectl scale`` reach the scale subresource through it: every served version has one, at
the same paths (v1alpha2's replica statuses carry no selector)."""


def _spoke_spec(properties: dict[str, Any], description: str) -> dict[str, Any]:
    return {"type": "object", "description": description, "properties": properties}


def _undocumented(schema: Any) -> Any:
    """``schema`` without ``description`` keys (a copy)."""
    if isinstance(schema, dict):
        return {k: _undocumented(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_undocumented(v) for v in schema]
    return schema


def _replica_spec(template: dict[str, Any], **replicas: Any) -> dict[str, Any]:
    """A replica spec of an older version. Its pod template carries no descriptions (the
    v2beta1 one documents it): three documented copies would make the CRD 1.3 MB, near
    etcd's 1.5 MiB request limit."""
    return {
        "type": "object",
        "properties": {
            "replicas": integer("int32", "Number of pods.", **replicas),
            "restartPolicy": string("Always, OnFailure, Never or ExitCode."),
            "template": _undocumented(template),
        },
    }


def _common_spoke_fields() -> dict[str, Any]:
    return {
        "slotsPerWorker": integer("int32", "Slots per host in the hostfile (unset: 1)."),
        "cleanPodPolicy": string("Which pods to delete when the job finishes: All, Running "
                                 "or None."),
        "mainContainer": string("The container kubexec.sh runs commands in (kubectl exec "
                                "--container)."),
    }


def mpijob_v1_schema(template: dict[str, Any]) -> dict[str, Any]:
    """training-operator v1.9's ``kubeflow.org/v1`` MPIJob."""
    run_policy = copy.deepcopy(_run_policy())
    policy = run_policy["properties"]
    for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        policy[key]["description"] = "Applied to the job's pods (training-operator semantics)."
    policy["cleanPodPolicy"]["description"] = (
        "Which pods to delete when the job finishes; wins over spec.cleanPodPolicy.")
    policy["suspend"]["description"] = "Suspend the job: delete its pods."
    policy["managedBy"]["description"] = (
        "The controller that reconciles this job: kubeflow.org/training-operator or "
        "kueue.x-k8s.io/multikueue.")
    policy["schedulingPolicy"]["properties"]["queue"]["x-kubernetes-validations"] = [
        {"rule": "self == oldSelf",
         "message": "spec.runPolicy.schedulingPolicy.queue is immutable"}]
    spec = _spoke_spec({
        **_common_spoke_fields(),
        "mpiReplicaSpecs": {"type": "object", "description": "Launcher and Worker replica specs.",
                            "additionalProperties": _replica_spec(template)},
        "runPolicy": run_policy,
    }, "Desired state of the MPIJob (kubeflow.org/v1, kubectl-exec launch mode).")
    spec["required"] = ["mpiReplicaSpecs"]
    return resource_schema("MPIJob of the Kubeflow training-operator: a launcher pod and N "
                           "worker pods that it reaches with kubectl exec.", spec, _status())


def mpijob_v1alpha2_schema(template: dict[str, Any]) -> dict[str, Any]:
    """mpi-operator v0.2.3's ``kubeflow.org/v1alpha2`` MPIJob (its CRD's checks: slots >= 1,
    Launcher replicas 1, Worker replicas >= 1)."""
    policy = _run_policy()["properties"]
    run_policy = {
        "type": "object",
        "description": "Run policies; backoffLimit and activeDeadlineSeconds here win over "
                       "the spec's (the rest is ignored, as in v0.2.3).",
        "properties": {
            **{k: policy[k] for k in ("cleanPodPolicy", "ttlSecondsAfterFinished",
                                      "activeDeadlineSeconds", "backoffLimit")},
            "schedulingPolicy": {
                "type": "object",
                "properties": {"minAvailable": integer("int32", "Ignored.")},
            },
        },
    }
    spec = _spoke_spec({
        **_common_spoke_fields(),
        "slotsPerWorker": integer("int32", "Slots per host in the hostfile (unset: 1).",
                                  minimum=1),
        "backoffLimit": integer("int32", "Launcher Job backoffLimit (unset: 6)."),
        "activeDeadlineSeconds": integer("int64", "Launcher Job activeDeadlineSeconds."),
        "mpiReplicaSpecs": {
            "type": "object",
            "description": "Launcher and Worker replica specs.",
            "properties": {
                "Launcher": _replica_spec(template, minimum=1, maximum=1),
                "Worker": _replica_spec(template, minimum=1),
            },
        },
        "runPolicy": run_policy,
    }, "Desired state of the MPIJob (kubeflow.org/v1alpha2: launcher Job, worker StatefulSet).")
    status = _status()
    replica_status = status["properties"]["replicaStatuses"]["additionalProperties"]
    for key in ("labelSelector", "selector"):
        del replica_status["properties"][key]
    return resource_schema("MPIJob of mpi-operator v0.2: a launcher Job and a worker "
                           "StatefulSet that it reaches with kubectl exec.", spec, status)


AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
V1_PRINTER_COLUMNS = [AGE, {"name": "State", "type": "string",
                            "jsonPath": ".status.conditions[-1:].type"}]
"""training-operator v1.9's columns, in its order."""
V1ALPHA2_PRINTER_COLUMNS = [AGE]
"""mpi-operator v0.2.3's CRD had none: kubectl printed NAME and AGE, as this does."""

CONVERSION = {
    "strategy": "Webhook",
    "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {
            "service": {"name": "mpi-operator-webhook", "namespace": "mpi-operator",
                        "path": "/convert", "port": 443},
        },
    },
}
"""Served by every replica of ``mpi-controller run`` (Service ``mpi-operator-webhook``); the
controller injects ``caBundle`` (or cert-manager's CA injector does)."""

MPIJOB = CRD(
    group="kubeflow.org",
    kind="MPIJob",
    plural="mpijobs",
    versions=(
        Version("v2beta1", mpijob_schema, PRINTER_COLUMNS, storage=True,
                subresources=SUBRESOURCES),
        Version("v1", mpijob_v1_schema, V1_PRINTER_COLUMNS, subresources=SUBRESOURCES),
        Version("v1alpha2", mpijob_v1alpha2_schema, V1ALPHA2_PRINTER_COLUMNS,
                subresources=V1ALPHA2_SUBRESOURCES),
    ),
    conversion=CONVERSION,
    # mpi-operator v0.2.3's CRD had them (`kubectl get mj`); v0.8.2's and training-operator's
    # have none, and a short name adds nothing to their manifests.
    short_names=("mj", "mpij"),
)
