"""The schemas of the CRDs of Kubeflow Trainer v2.3.0's ``trainer.kubeflow.org/v1alpha1``
(:mod:`.crd`): ``TrainJob``, ``TrainingRuntime`` and ``ClusterTrainingRuntime`` (upstream's
``manifests/base/crds/trainer.kubeflow.org_*.yaml``, made by controller-gen from
``pkg/apis/trainer/v1alpha1/trainjob_types.go`` and ``trainingruntime_types.go``, and the
JobSet ``v1alpha2`` ``JobSetSpec`` of ``sigs.k8s.io/jobset`` v0.12.0's
``api/jobset/v1alpha2/jobset_types.go``, which a runtime's template embeds).

The schemas here are the Trainer and JobSet types; the Kubernetes types they embed (a Job's
spec with its pod template, EnvVar, ResourceRequirements, Volume, ...) are OpenAPI components
the generator converts (:data:`~.crd.COMPONENTS`, in the order each version's builder takes
them). Equal to upstream's files up to descriptions (``tests/unit/trainjob/test_crd.py``).
Imported only when a CRD is generated (``hack/gen-crd.py``), not by ``run``.
"""

from __future__ import annotations

import copy
from typing import Any

from mpi_controller.kube.openapi import SPECIAL
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.crd import COMPONENTS

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

__all__ = ["runtime_schema", "trainjob_schema"]


Schema = dict[str, Any]
IMMUTABLE = [{"message": "field is immutable", "rule": "self == oldSelf"}]
JOBSET_IMMUTABLE = [{"message": "Value is immutable", "rule": "self == oldSelf"}]


def _obj(description: str, properties: Schema, /, **extra: Any) -> Schema:
    return {"type": "object", "description": description, "properties": properties, **extra}


def _str(description: str, /, **extra: Any) -> Schema:
    return {"type": "string", "description": description, **extra}


def _int(description: str, fmt: str | None = "int32", /, **extra: Any) -> Schema:
    return {"type": "integer", "description": description,
            **({"format": fmt} if fmt else {}), **extra}


def _bool(description: str, /, **extra: Any) -> Schema:
    return {"type": "boolean", "description": description, **extra}


def _strings(description: str, /, **extra: Any) -> Schema:
    return {"type": "array", "description": description, "items": {"type": "string"}, **extra}


def _map_list(description: str, items: Schema, keys: list[str], /, **extra: Any) -> Schema:
    return {"type": "array", "description": description, "items": items,
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys, **extra}


def _with(schema: Schema, /, **extra: Any) -> Schema:
    """A copy of a component's schema with more keys (a description, validations)."""
    return {**schema, **extra}


def embedded_meta(description: str) -> Schema:
    """controller-gen's schema of an embedded ``metav1.ObjectMeta`` (the one the other kinds'
    CRDs embed, :data:`mpi_controller.kube.openapi.SPECIAL`)."""
    return _obj(description, copy.deepcopy(SPECIAL[OBJECT_META]["properties"]))


class K8s:
    """The converted Kubernetes components, by short name (see :data:`COMPONENTS`)."""

    def __init__(self, *schemas: Schema) -> None:
        if len(schemas) != len(COMPONENTS):
            raise ValueError(f"{len(COMPONENTS)} component schemas are needed")
        self.by_name = {name.rsplit(".", 1)[1]: schema
                        for name, schema in zip(COMPONENTS, schemas, strict=True)}

    def __getitem__(self, name: str) -> Schema:
        return dict(self.by_name[name])


# ---- JobSet v1alpha2 (sigs.k8s.io/jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go) ----

def _replicated_job(k8s: K8s) -> Schema:
    return _obj("A group of identical Jobs of the JobSet.", {
        "dependsOn": _map_list(
            "The replicated Jobs this one waits for (Ready or Complete) before it is created.",
            {"type": "object", "required": ["name", "status"], "properties": {
                "name": {"type": "string", "description": "The replicated Job depended on."},
                "status": {"type": "string", "description": "Ready or Complete.",
                           "enum": ["Ready", "Complete"]}}},
            ["name"], maxItems=5, **{"x-kubernetes-validations": JOBSET_IMMUTABLE}),
        "groupName": _str("The group the replicated Job belongs to.", default="default"),
        "name": _str("The replicated Job's name, unique in the JobSet."),
        "replicas": _int("How many Jobs of this template.", default=1),
        "template": _obj("The Job template.", {
            "metadata": embedded_meta("The Jobs' labels and annotations."),
            "spec": _with(k8s["JobSpec"], description="The Jobs' spec."),
        }),
    }, required=["name", "template"])


def jobset_spec(k8s: K8s) -> Schema:
    """``JobSetSpec`` of JobSet ``v1alpha2``."""
    return _obj("The JobSet's spec.", {
        "coordinator": _obj("The pod whose address every pod gets as the coordinator.", {
            "jobIndex": {"type": "integer", "description": "The Job's index."},
            "podIndex": {"type": "integer", "description": "The pod's index."},
            "replicatedJob": _str("The replicated Job."),
        }, required=["replicatedJob"]),
        "failurePolicy": _obj("How the JobSet reacts to a failed Job.", {
            "maxRestarts": _int("How many times the JobSet may be restarted."),
            "restartStrategy": _str("How a restart recreates the Jobs.", default="Recreate",
                                    enum=["Recreate", "BlockingRecreate", "InPlaceRestart"]),
            "rules": {"type": "array", "description": "Actions for matching Job failures.",
                      "items": {"type": "object", "required": ["action", "name"],
                                "properties": {
                "action": _str("What to do.", enum=[
                    "FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts",
                    "RestartJob", "RestartJobAndIgnoreMaxRestarts"]),
                "name": _str("The rule's name."),
                "onJobFailureMessagePatterns": _strings("Failure message patterns matched."),
                "onJobFailureReasons": _strings("Job failure reasons matched."),
                "targetReplicatedJobs": _strings("The replicated Jobs the rule applies to.",
                                                 **{"x-kubernetes-list-type": "atomic"}),
            }}},
        }, **{"x-kubernetes-validations": JOBSET_IMMUTABLE}),
        "managedBy": _str("The controller that reconciles the JobSet."),
        "network": _obj("The headless Service and pod hostnames.", {
            "enableDNSHostnames": _bool("Pods get stable hostnames in the subdomain."),
            "publishNotReadyAddresses": _bool("The Service publishes pods before ready."),
            "subdomain": _str("The headless Service's name."),
        }, **{"x-kubernetes-validations": JOBSET_IMMUTABLE}),
        "replicatedJobs": _map_list("The JobSet's groups of Jobs.", _replicated_job(k8s),
                                    ["name"]),
        "startupPolicy": _obj("The order in which replicated Jobs start.", {
            "startupPolicyOrder": _str("AnyOrder or InOrder.", enum=["AnyOrder", "InOrder"]),
        }, required=["startupPolicyOrder"], **{"x-kubernetes-validations": JOBSET_IMMUTABLE}),
        "successPolicy": _obj("When the JobSet succeeds.", {
            "operator": _str("All or Any of the target Jobs.", enum=["All", "Any"]),
            "targetReplicatedJobs": _strings("The replicated Jobs that count.",
                                             **{"x-kubernetes-list-type": "atomic"}),
        }, required=["operator"], **{"x-kubernetes-validations": JOBSET_IMMUTABLE}),
        "suspend": _bool("The JobSet's Jobs are suspended."),
        "ttlSecondsAfterFinished": _int("Seconds after finishing before the JobSet is deleted.",
                                        minimum=0),
        "volumeClaimPolicies": {
            "type": "array", "description": "PersistentVolumeClaims made for the JobSet.",
            "maxItems": 50, "x-kubernetes-list-type": "atomic",
            "x-kubernetes-validations": JOBSET_IMMUTABLE,
            "items": _obj("Claims from templates and what happens to them.", {
                "retentionPolicy": _obj("What happens to the claims.", {
                    "whenDeleted": _str("Delete or Retain when the JobSet is deleted.",
                                        default="Delete", enum=["Delete", "Retain"]),
                }),
                "templates": {"type": "array", "description": "The claims' templates.",
                              "maxItems": 50, "x-kubernetes-list-type": "atomic",
                              "items": k8s["PersistentVolumeClaim"]},
            }, **{"x-kubernetes-validations": [{
                "message": "namespace cannot be set for VolumeClaimPolicies templates",
                "rule": "self.templates.all(t, !has(t.metadata.namespace) || "
                        "size(t.metadata.namespace) == 0)"}]}),
        },
    }, **{"x-kubernetes-validations": [{
        "message": "StartupPolicy and DependsOn APIs are mutually exclusive",
        "rule": "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == "
                "'InOrder' && self.replicatedJobs.exists(x, has(x.dependsOn)))"}]})


# ---- TrainingRuntime and ClusterTrainingRuntime (trainingruntime_types.go) --------------------

def _ml_policy() -> Schema:
    return _obj("The ML framework's parameters; at most one framework.", {
        "flux": _obj("Flux.", {"numProcPerNode": _int(
            "Processes per node.", default=1, **{"x-kubernetes-validations": [{
                "message": "NumProcPerNode in fluxPolicy must be >= 1", "rule": "self >= 1"}]})}),
        "jax": {"type": "object", "description": "JAX (no parameters)."},
        "mpi": _obj("MPI.", {
            "mpiImplementation": _str("The MPI implementation (the hostfile's format).",
                                      default="OpenMPI", enum=["OpenMPI", ""]),
            "numProcPerNode": _int("Slots per node in the hostfile.", default=1),
            "runLauncherAsNode": _bool("The launcher is a training node too.", default=False),
            "sshAuthMountPath": _str("Where the SSH keys are mounted.", default="/root/.ssh",
                                     maxLength=4096),
        }),
        "numNodes": _int("Training nodes (default 1)."),
        "torch": _obj("PyTorch.", {"envInjection": _obj(
            "More containers that get the PET_* variables.", {"targets": _map_list(
                "Containers of replicated Jobs.",
                {"type": "object", "required": ["containerNames", "jobName"], "properties": {
                    "containerNames": {
                        "type": "array", "description": "The containers.",
                        "items": {"type": "string", "maxLength": 63},
                        "maxItems": 8, "minItems": 1, "x-kubernetes-list-type": "set",
                        "x-kubernetes-validations": [{
                            "message": "containerNames must not include the main node "
                                       "container because PET_* envs are always injected "
                                       "into it",
                            "rule": "!self.exists(c, c == 'node')"}]},
                    "jobName": _str("The replicated Job.", maxLength=253, minLength=1)}},
                ["jobName"], maxItems=16)})}),
        "xgboost": {"type": "object", "description": "XGBoost (no parameters)."},
    }, **{"x-kubernetes-validations": [{
        "message": "Only one of the policy can be configured",
        "rule": "[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),"
                "has(self.flux)].filter(x, x).size() <= 1"}]})


def _pod_group_policy() -> Schema:
    return _obj("Gang scheduling of the TrainJob's pods.", {
        "coscheduling": _obj("scheduler-plugins' Coscheduling.", {
            "scheduleTimeoutSeconds": _int("How long the gang may wait.", default=60)}),
        "volcano": _obj("Volcano.", {"networkTopology": _obj("Volcano's network topology.", {
            "highestTierAllowed": _int("The highest tier allowed.", None, default=1),
            "mode": _str("hard or soft.", default="hard", enum=["hard", "soft"]),
        })}),
    })


def runtime_spec(k8s: K8s) -> Schema:
    """``TrainingRuntimeSpec``."""
    return _obj("The runtime: ML policy, gang scheduling and the JobSet template.", {
        "mlPolicy": _ml_policy(),
        "podGroupPolicy": _pod_group_policy(),
        "template": _obj("The JobSet the TrainJob is made from.", {
            "metadata": embedded_meta("The JobSet's labels and annotations."),
            "spec": jobset_spec(k8s),
        }, minProperties=1),
    }, minProperties=1)


def runtime_schema(kind: str) -> Any:
    """The root schema builder of ``kind`` (the pod template is unused: it is in JobSpec)."""
    def schema(template: Schema, *components: Schema) -> Schema:
        return _obj(f"{kind}: a training runtime a TrainJob names in runtimeRef.", {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": runtime_spec(K8s(*components)),
        })
    return schema


# ---- TrainJob (trainjob_types.go) ---------------------------------------------------------------

def _env(k8s: K8s, description: str) -> Schema:
    return _map_list(description, k8s["EnvVar"], ["name"], maxItems=128)


def _initializer(k8s: K8s, what: str) -> Schema:
    return _obj(f"The {what} initializer.", {
        "env": _env(k8s, "Merged into the runtime's initializer environment."),
        "secretRef": _with(k8s["LocalObjectReference"], description="Credentials."),
        "storageUri": _str("Where to fetch from.", maxLength=2048, **{
            "x-kubernetes-validations": [{
                "message": "storageUri may be empty, or it must be a valid URI (scheme://...)",
                "rule": "self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')"}]}),
    })


def _container_patch(k8s: K8s) -> Schema:
    return {"type": "object", "required": ["name"], "properties": {
        "env": _env(k8s, "Merged into the container's environment."),
        "name": _str("The container.", maxLength=253, minLength=1),
        "securityContext": _with(k8s["SecurityContext"], description="Its security context."),
        "volumeMounts": _map_list("Added mounts.", k8s["VolumeMount"], ["name"],
                                  maxItems=128),
    }}


def _pod_spec_patch(k8s: K8s) -> Schema:
    immutable = {"x-kubernetes-validations": IMMUTABLE}
    return _obj("The pod spec fields a manager may patch.", {
        "affinity": _with(k8s["Affinity"], description="The pods' affinity."),
        "containers": _map_list("Container patches.", _container_patch(k8s), ["name"],
                                maxItems=64, **immutable),
        "imagePullSecrets": _map_list("Image pull Secrets.", k8s["LocalObjectReference"],
                                      ["name"], maxItems=64, **immutable),
        "initContainers": _map_list("Init container patches.", _container_patch(k8s),
                                    ["name"], maxItems=64, **immutable),
        "nodeSelector": {"type": "object", "description": "Node selector.",
                         "additionalProperties": {"type": "string"}},
        "schedulingGates": _map_list("Scheduling gates.", k8s["PodSchedulingGate"], ["name"],
                                     maxItems=16),
        "securityContext": _with(k8s["PodSecurityContext"], description="Pod security.",
                                 **immutable),
        "serviceAccountName": _str("Service account.", maxLength=253, **immutable),
        "terminationGracePeriodSeconds": _int("Grace period.", "int64", minimum=0, **immutable),
        "tolerations": {"type": "array", "description": "Tolerations.",
                        "items": k8s["Toleration"], "maxItems": 128,
                        "x-kubernetes-list-type": "atomic"},
        "volumes": _map_list("Volumes.", k8s["Volume"], ["name"], maxItems=128, **immutable),
    })


def _runtime_patch(k8s: K8s) -> Schema:
    replicated_job = {"type": "object", "required": ["name"], "properties": {
        "name": _str("The replicated Job.", maxLength=253, minLength=1),
        "template": _obj("Its Job template's patch.", {
            "metadata": embedded_meta("Labels and annotations only."),
            "spec": _obj("The Job spec's patch.", {"template": _obj("The pod template's patch.", {
                "metadata": embedded_meta("Labels and annotations only."),
                "spec": _pod_spec_patch(k8s),
            })}),
        }),
    }}
    return {"type": "object", "required": ["manager"], "properties": {
        "manager": _str("Who owns the patch.", maxLength=253, minLength=1,
                        **{"x-kubernetes-validations": IMMUTABLE}),
        "time": _str("When the patch was last written.", format="date-time"),
        "trainingRuntimeSpec": _obj("The patch of the runtime spec.", {"template": _obj(
            "The patch of the JobSet template.", {
                "metadata": embedded_meta("Labels and annotations only."),
                "spec": _obj("The JobSet spec's patch.", {"replicatedJobs": _map_list(
                    "Replicated Job patches.", replicated_job, ["name"], maxItems=100)}),
            })}),
    }}


def _trainer(k8s: K8s) -> Schema:
    strings = {"type": "array", "items": {"type": "string", "maxLength": 1048576},
               "maxItems": 128, "x-kubernetes-list-type": "atomic"}
    return _obj("The trainer: overrides the runtime's node container.", {
        "args": {**strings, "description": "Arguments."},
        "command": {**strings, "description": "Entrypoint."},
        "env": _env(k8s, "Merged into the runtime's trainer environment."),
        "image": _str("The image.", maxLength=500),
        "numNodes": _int("Training nodes."),
        "numProcPerNode": _int("Processes per node."),
        "resourcesPerNode": _with(k8s["ResourceRequirements"], description="Each node's."),
    }, **{"x-kubernetes-validations": IMMUTABLE})


def _status() -> Schema:
    i32 = {"type": "integer", "format": "int32", "minimum": 0}
    counts = {name: {**i32, "description": f"Jobs {name}."}
              for name in ("active", "failed", "ready", "succeeded", "suspended")}
    condition = {"type": "object", "description": "A metav1.Condition.",
                 "required": ["lastTransitionTime", "message", "reason", "status", "type"],
                 "properties": {
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "message": {"type": "string", "maxLength": 32768},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        "reason": {"type": "string", "maxLength": 1024, "minLength": 1,
                   "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"},
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "type": {"type": "string", "maxLength": 316,
                 "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"}}}
    return _obj("The TrainJob's status.", {
        "conditions": _map_list("Suspended, Complete, Failed.", condition, ["type"],
                                maxItems=8),
        "jobsStatus": _map_list("Each replicated Job's counts, from the JobSet.", {
            "type": "object",
            "required": ["active", "failed", "name", "ready", "succeeded", "suspended"],
            "properties": {**counts, "name": _str("The replicated Job.", maxLength=253,
                                                   minLength=1)}}, ["name"], maxItems=100),
        "trainerStatus": _obj("Progress the trainer reports.", {
            "estimatedRemainingSeconds": {**i32, "description": "Seconds left."},
            "lastUpdatedTime": _str("When it was reported.", format="date-time"),
            "metrics": {"type": "array", "description": "Metrics.", "maxItems": 256,
                        "x-kubernetes-list-type": "atomic", "items": {
                            "type": "object", "required": ["name", "value"], "properties": {
                                "name": _str("Name.", maxLength=64, minLength=1),
                                "value": _str("Value.", maxLength=64, minLength=1)}}},
            "progressPercentage": {**i32, "maximum": 100, "description": "0 to 100."},
        }, **{"x-kubernetes-validations": [{
            "message": "lastUpdatedTime is required when trainerStatus is present",
            "rule": "has(self.lastUpdatedTime)"}]}),
    }, minProperties=1)


def trainjob_spec(k8s: K8s) -> Schema:
    return _obj("The TrainJob's spec.", {
        "activeDeadlineSeconds": _int("Seconds the TrainJob may run.", "int64", minimum=1,
                                      **{"x-kubernetes-validations": IMMUTABLE}),
        "initializer": _obj("Dataset and model initialization.", {
            "dataset": _initializer(k8s, "dataset"), "model": _initializer(k8s, "model"),
        }, **{"x-kubernetes-validations": IMMUTABLE}),
        "managedBy": _str("The controller that reconciles the TrainJob.",
                          default=constants.MANAGED_BY_TRAINER, maxLength=253, **{
                              "x-kubernetes-validations": [{
                                  "message": "ManagedBy must be "
                                             "trainer.kubeflow.org/trainjob-controller or "
                                             "kueue.x-k8s.io/multikueue if set",
                                  "rule": "self in ['trainer.kubeflow.org/trainjob-controller',"
                                          " 'kueue.x-k8s.io/multikueue']"}, *IMMUTABLE]}),
        "runtimePatches": _map_list("Patches of the runtime, one per manager.",
                                    _runtime_patch(k8s), ["manager"], maxItems=16),
        "runtimeRef": _obj("The runtime.", {
            "apiGroup": _str("Its API group.", default=constants.GROUP, maxLength=253),
            "kind": _str("TrainingRuntime or ClusterTrainingRuntime.",
                         default=constants.CLUSTER_RUNTIME_KIND, maxLength=253),
            "name": _str("Its name.", maxLength=253, minLength=1),
        }, required=["name"], **{"x-kubernetes-validations": IMMUTABLE}),
        "suspend": _bool("The TrainJob is suspended.", default=False),
        "trainer": _trainer(k8s),
    }, required=["runtimeRef"])


def trainjob_schema(template: Schema, *components: Schema) -> Schema:
    k8s = K8s(*components)
    return _obj("TrainJob: a training run on a (Cluster)TrainingRuntime, run as a JobSet.", {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": trainjob_spec(k8s),
        "status": _status(),
    }, **{"x-kubernetes-validations": [
        {"message": "metadata.name must match RFC 1035 DNS label format",
         "rule": "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')"},
        {"message": "metadata.name must be no more than 63 characters",
         "rule": "size(self.metadata.name) <= 63"}]})
