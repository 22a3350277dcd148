"""Names and strings of the ``kubeflow.org/v2beta1`` MPIJob API, as mpi-operator v0.8.2 spells them.

Everything here is a plain ``str`` (or a tuple of them) so that it can be compared with and
written into Kubernetes JSON objects directly. Values are facts of the upstream API: labels,
annotations, environment variable names, condition types, reasons and event reasons.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "API_VERSION",
    "CLEAN_POD_POLICIES",
    "CLEAN_POD_POLICY_ALL",
    "CLEAN_POD_POLICY_NONE",
    "CLEAN_POD_POLICY_RUNNING",
    "CONDITION_CREATED",
    "CONDITION_FAILED",
    "CONDITION_RESTARTING",
    "CONDITION_RUNNING",
    "CONDITION_SUCCEEDED",
    "CONDITION_SUSPENDED",
    "CONDITION_TYPES",
    "CONTROLLER_AGENT_NAME",
    "CRD_NAME",
    "DEFAULT_LAUNCHER_RESTART_POLICY",
    "DEFAULT_RESTART_POLICY",
    "DEFAULT_SLOTS_PER_WORKER",
    "DEFAULT_SSH_AUTH_MOUNT_PATH",
    "ENV_KUBEFLOW_NAMESPACE",
    "EVENT_ERR_RESOURCE_EXISTS",
    "EVENT_MPIJOB_CREATED",
    "EVENT_MPIJOB_EVICTED",
    "EVENT_MPIJOB_FAILED",
    "EVENT_MPIJOB_RESUMED",
    "EVENT_MPIJOB_RUNNING",
    "EVENT_MPIJOB_SUCCEEDED",
    "EVENT_MPIJOB_SUSPENDED",
    "EVENT_SET_POD_TEMPLATE_RESTART_POLICY",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "EVENT_VALIDATION_ERROR",
    "GROUP",
    "JOB_NAME_LABEL",
    "JOB_ROLE_LABEL",
    "KIND",
    "KUBEFLOW_JOB_CONTROLLER",
    "LAUNCHER_CREATION_POLICIES",
    "LAUNCHER_CREATION_POLICY_AT_STARTUP",
    "LAUNCHER_CREATION_POLICY_WAIT_FOR_WORKERS_READY",
    "LIST_KIND",
    "MANAGED_BY_VALUES",
    "MPI_IMPLEMENTATIONS",
    "MPI_IMPLEMENTATION_INTEL",
    "MPI_IMPLEMENTATION_MPICH",
    "MPI_IMPLEMENTATION_OPENMPI",
    "MULTIKUEUE_CONTROLLER",
    "OPERATOR_NAME",
    "OPERATOR_NAME_LABEL",
    "PLURAL",
    "REASON_BACKOFF_LIMIT_EXCEEDED",
    "REASON_MPIJOB_CREATED",
    "REASON_MPIJOB_EVICTED",
    "REASON_MPIJOB_FAILED",
    "REASON_MPIJOB_RESUMED",
    "REASON_MPIJOB_RUNNING",
    "REASON_MPIJOB_SUCCEEDED",
    "REASON_MPIJOB_SUSPENDED",
    "REPLICA_INDEX_LABEL",
    "REPLICA_TYPES",
    "REPLICA_TYPE_LABEL",
    "REPLICA_TYPE_LAUNCHER",
    "REPLICA_TYPE_WORKER",
    "RESTART_POLICIES",
    "RESTART_POLICY_ALWAYS",
    "RESTART_POLICY_EXIT_CODE",
    "RESTART_POLICY_NEVER",
    "RESTART_POLICY_ON_FAILURE",
    "ROLE_LAUNCHER",
    "ROLE_WORKER",
    "SINGULAR",
    "VALID_RESTART_POLICIES",
    "VERSION",
]

# --- group, version, kind -------------------------------------------------------------------
GROUP: Final = "kubeflow.org"
VERSION: Final = "v2beta1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
KIND: Final = "MPIJob"
LIST_KIND: Final = "MPIJobList"
PLURAL: Final = "mpijobs"
SINGULAR: Final = "mpijob"
CRD_NAME: Final = f"{PLURAL}.{GROUP}"

# --- labels and the operator's identity -----------------------------------------------------
REPLICA_INDEX_LABEL: Final = "training.kubeflow.org/replica-index"
REPLICA_TYPE_LABEL: Final = "training.kubeflow.org/replica-type"  # defined upstream, unused
OPERATOR_NAME_LABEL: Final = "training.kubeflow.org/operator-name"
JOB_NAME_LABEL: Final = "training.kubeflow.org/job-name"
JOB_ROLE_LABEL: Final = "training.kubeflow.org/job-role"
OPERATOR_NAME: Final = "mpi-operator"
ROLE_LAUNCHER: Final = "launcher"
ROLE_WORKER: Final = "worker"
CONTROLLER_AGENT_NAME: Final = "mpi-job-controller"
ENV_KUBEFLOW_NAMESPACE: Final = "KUBEFLOW_NAMESPACE"

# --- managedBy ------------------------------------------------------------------------------
KUBEFLOW_JOB_CONTROLLER: Final = "kubeflow.org/mpi-operator"
MULTIKUEUE_CONTROLLER: Final = "kueue.x-k8s.io/multikueue"
MANAGED_BY_VALUES: Final = (KUBEFLOW_JOB_CONTROLLER, MULTIKUEUE_CONTROLLER)

# --- replica types --------------------------------------------------------------------------
REPLICA_TYPE_LAUNCHER: Final = "Launcher"
REPLICA_TYPE_WORKER: Final = "Worker"
REPLICA_TYPES: Final = (REPLICA_TYPE_LAUNCHER, REPLICA_TYPE_WORKER)

# --- enumerations of the spec ---------------------------------------------------------------
MPI_IMPLEMENTATION_OPENMPI: Final = "OpenMPI"
MPI_IMPLEMENTATION_INTEL: Final = "Intel"
MPI_IMPLEMENTATION_MPICH: Final = "MPICH"
MPI_IMPLEMENTATIONS: Final = (
    MPI_IMPLEMENTATION_OPENMPI,
    MPI_IMPLEMENTATION_INTEL,
    MPI_IMPLEMENTATION_MPICH,
)

LAUNCHER_CREATION_POLICY_AT_STARTUP: Final = "AtStartup"
LAUNCHER_CREATION_POLICY_WAIT_FOR_WORKERS_READY: Final = "WaitForWorkersReady"
LAUNCHER_CREATION_POLICIES: Final = (
    LAUNCHER_CREATION_POLICY_AT_STARTUP,
    LAUNCHER_CREATION_POLICY_WAIT_FOR_WORKERS_READY,
)

CLEAN_POD_POLICY_ALL: Final = "All"
CLEAN_POD_POLICY_RUNNING: Final = "Running"
CLEAN_POD_POLICY_NONE: Final = "None"
CLEAN_POD_POLICIES: Final = (CLEAN_POD_POLICY_ALL, CLEAN_POD_POLICY_NONE, CLEAN_POD_POLICY_RUNNING)

RESTART_POLICY_ALWAYS: Final = "Always"
RESTART_POLICY_ON_FAILURE: Final = "OnFailure"
RESTART_POLICY_NEVER: Final = "Never"
RESTART_POLICY_EXIT_CODE: Final = "ExitCode"
RESTART_POLICIES: Final = (
    RESTART_POLICY_ALWAYS,
    RESTART_POLICY_ON_FAILURE,
    RESTART_POLICY_NEVER,
    RESTART_POLICY_EXIT_CODE,
)
VALID_RESTART_POLICIES: Final = (RESTART_POLICY_NEVER, RESTART_POLICY_ON_FAILURE)

# --- defaults -------------------------------------------------------------------------------
DEFAULT_RESTART_POLICY: Final = RESTART_POLICY_NEVER
DEFAULT_LAUNCHER_RESTART_POLICY: Final = RESTART_POLICY_ON_FAILURE
DEFAULT_SLOTS_PER_WORKER: Final = 1
DEFAULT_SSH_AUTH_MOUNT_PATH: Final = "/root/.ssh"

# --- status conditions ----------------------------------------------------------------------
CONDITION_CREATED: Final = "Created"
CONDITION_RUNNING: Final = "Running"
CONDITION_RESTARTING: Final = "Restarting"  # defined upstream, never set by the v2 controller
CONDITION_SUCCEEDED: Final = "Succeeded"
CONDITION_SUSPENDED: Final = "Suspended"
CONDITION_FAILED: Final = "Failed"
CONDITION_TYPES: Final = (
    CONDITION_CREATED,
    CONDITION_RUNNING,
    CONDITION_RESTARTING,
    CONDITION_SUCCEEDED,
    CONDITION_SUSPENDED,
    CONDITION_FAILED,
)

REASON_MPIJOB_CREATED: Final = "MPIJobCreated"
REASON_MPIJOB_RUNNING: Final = "MPIJobRunning"
REASON_MPIJOB_SUCCEEDED: Final = "MPIJobSucceeded"
REASON_MPIJOB_SUSPENDED: Final = "MPIJobSuspended"
REASON_MPIJOB_RESUMED: Final = "MPIJobResumed"
REASON_MPIJOB_FAILED: Final = "MPIJobFailed"
REASON_MPIJOB_EVICTED: Final = "MPIJobEvicted"
REASON_BACKOFF_LIMIT_EXCEEDED: Final = "BackoffLimitExceeded"  # batch/v1 Job failure reason

# --- events ---------------------------------------------------------------------------------
EVENT_TYPE_NORMAL: Final = "Normal"
EVENT_TYPE_WARNING: Final = "Warning"
EVENT_VALIDATION_ERROR: Final = "ValidationError"
EVENT_ERR_RESOURCE_EXISTS: Final = "ErrResourceExists"
EVENT_SET_POD_TEMPLATE_RESTART_POLICY: Final = "SetPodTemplateRestartPolicy"
EVENT_MPIJOB_CREATED: Final = REASON_MPIJOB_CREATED
EVENT_MPIJOB_RUNNING: Final = REASON_MPIJOB_RUNNING
EVENT_MPIJOB_SUCCEEDED: Final = REASON_MPIJOB_SUCCEEDED
EVENT_MPIJOB_SUSPENDED: Final = REASON_MPIJOB_SUSPENDED
EVENT_MPIJOB_RESUMED: Final = REASON_MPIJOB_RESUMED
EVENT_MPIJOB_FAILED: Final = REASON_MPIJOB_FAILED
EVENT_MPIJOB_EVICTED: Final = REASON_MPIJOB_EVICTED
