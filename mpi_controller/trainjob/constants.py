"""Names of Kubeflow Trainer v2.3.0 (``pkg/apis/trainer/v1alpha1``, ``pkg/constants/constants.go``)
and of the JobSet ``v1alpha2`` API it writes (``sigs.k8s.io/jobset`` v0.12.0)."""

from __future__ import annotations

__all__ = [
    "ANCESTOR_TRAINER",
    "CLUSTER_RUNTIME_KIND",
    "CLUSTER_RUNTIME_PLURAL",
    "COND_COMPLETE",
    "COND_FAILED",
    "COND_SUSPENDED",
    "CONTAINER_TRAINER_PORT",
    "DATASET_INITIALIZER",
    "GROUP",
    "JOBSET_GROUP",
    "JOBSET_KIND",
    "JOBSET_PLURAL",
    "JOBSET_VERSION",
    "JOB_COMPLETION_INDEX_FIELD_PATH",
    "KIND",
    "LABEL_TRAINJOB_ANCESTOR",
    "MANAGED_BY_MULTIKUEUE",
    "MANAGED_BY_TRAINER",
    "MESSAGE_DEADLINE_EXCEEDED",
    "MESSAGE_RESUMED",
    "MESSAGE_SUSPENDED",
    "MODEL_INITIALIZER",
    "NODE",
    "PLURAL",
    "REASON_DEADLINE_EXCEEDED",
    "REASON_RESUMED",
    "REASON_RUNTIME_NOT_SUPPORTED",
    "REASON_SUSPENDED",
    "RUNTIME_KIND",
    "RUNTIME_PLURAL",
    "TORCH_ENV_MASTER_ADDR",
    "TORCH_ENV_MASTER_PORT",
    "TORCH_ENV_NODE_RANK",
    "TORCH_ENV_NUM_NODES",
    "TORCH_ENV_NUM_PROC_PER_NODE",
    "TORCH_RESERVED_ENV_NAMES",
    "VERSION",
]

GROUP = "trainer.kubeflow.org"
VERSION = "v1alpha1"
KIND = "TrainJob"
PLURAL = "trainjobs"
RUNTIME_KIND = "TrainingRuntime"
RUNTIME_PLURAL = "trainingruntimes"
CLUSTER_RUNTIME_KIND = "ClusterTrainingRuntime"
CLUSTER_RUNTIME_PLURAL = "clustertrainingruntimes"

MANAGED_BY_TRAINER = "trainer.kubeflow.org/trainjob-controller"
MANAGED_BY_MULTIKUEUE = "kueue.x-k8s.io/multikueue"

JOBSET_GROUP = "jobset.x-k8s.io"
JOBSET_VERSION = "v1alpha2"
JOBSET_KIND = "JobSet"
JOBSET_PLURAL = "jobsets"

LABEL_TRAINJOB_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
"""On a runtime's replicated Job: which TrainJob step it runs (``trainer``,
``dataset-initializer``, ``model-initializer``)."""
ANCESTOR_TRAINER = "trainer"
DATASET_INITIALIZER = "dataset-initializer"
MODEL_INITIALIZER = "model-initializer"
NODE = "node"
"""The trainer's replicated Job and its main container."""
CONTAINER_TRAINER_PORT = 29500
JOB_COMPLETION_INDEX_FIELD_PATH = \
    "metadata.annotations['batch.kubernetes.io/job-completion-index']"
"""The pod's index in its Job (``batchv1.JobCompletionIndexAnnotation``), for a ``fieldRef``."""

TORCH_ENV_NUM_NODES = "PET_NNODES"
TORCH_ENV_NUM_PROC_PER_NODE = "PET_NPROC_PER_NODE"
TORCH_ENV_NODE_RANK = "PET_NODE_RANK"
TORCH_ENV_MASTER_ADDR = "PET_MASTER_ADDR"
TORCH_ENV_MASTER_PORT = "PET_MASTER_PORT"
TORCH_RESERVED_ENV_NAMES = frozenset({TORCH_ENV_NUM_NODES, TORCH_ENV_NUM_PROC_PER_NODE,
                                      TORCH_ENV_NODE_RANK, TORCH_ENV_MASTER_ADDR,
                                      TORCH_ENV_MASTER_PORT})

COND_SUSPENDED = "Suspended"
COND_COMPLETE = "Complete"
COND_FAILED = "Failed"
REASON_SUSPENDED = "Suspended"
REASON_RESUMED = "Resumed"
REASON_RUNTIME_NOT_SUPPORTED = "TrainingRuntimeNotSupported"
REASON_DEADLINE_EXCEEDED = "DeadlineExceeded"
MESSAGE_SUSPENDED = "TrainJob is suspended"
MESSAGE_RESUMED = "TrainJob is resumed"
MESSAGE_DEADLINE_EXCEEDED = "TrainJob exceeded its active deadline"
