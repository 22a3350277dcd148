"""Small pure decisions of the sync loop (mpi-operator v0.8.2
``pkg/controller/mpi_job_controller.go``: ``syncHandler``, ``deleteWorkerPods``).

Predicates over the launcher ``batch/v1`` Job and pods, and the plans the controller acts on:
whether to create the launcher now, whether to suspend or resume it (or hold it back), which
worker pods to delete on scale-down and on clean-up, whether an eviction failed the job, when
its TTL runs out. Nothing here performs I/O or mutates its inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from mpi_controller.kube.changes import same_but_status
from mpi_controller.kube.jsonvalue import as_dict, as_list, as_record
from mpi_controller.kube.owners import is_controlled_by
from mpi_controller.kube.pods import count_ready_pods, is_pod_ready, pod_phase
from mpi_controller.kube.selectors import label_selector_matches
from mpi_controller.kube.timefmt import parse_time
from mpi_controller.mpi import constants, naming
from mpi_controller.mpi.conditions import get_condition, is_finished
from mpi_controller.mpi.configmap import only_hosts_added
from mpi_controller.mpi.events import resource_exists_message
from mpi_controller.mpi.features import ssh_readiness_port
from mpi_controller.mpi.v2beta1.types import parse_mpi_job

__all__ = [
    "HOSTS_HOLD",
    "LAUNCHER_FINISH_HOLD",
    "LAUNCHER_STARTING_HOLD",
    "PODS_STARTING_HOLD",
    "CleanUpPlan",
    "ScaleDownPlan",
    "counts_hold",
    "get_job_condition",
    "hold_launcher",
    "hosts_hold",
    "is_clean_up_pods",
    "is_evicted",
    "is_job_failed",
    "is_job_finished",
    "is_job_succeeded",
    "is_job_suspended",
    "is_suspended",
    "launcher_suspension_action",
    "launcher_update_matters",
    "launcher_waits_for_workers",
    "managed_by_external_controller",
    "needs_finished_cleanup",
    "plan_worker_cleanup",
    "plan_worker_scale_down",
    "select_job_pods",
    "should_create_launcher",
    "ttl_remaining",
]


# --- jobs and pods ---------------------------------------------------------------------------


def get_job_condition(job: Mapping[str, Any], condition_type: str) -> dict[str, Any] | None:
    """The first ``status.conditions`` entry of ``condition_type`` of a batch Job."""
    for cond in as_list(as_record(job.get("status")).get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == condition_type:
            return cond
    return None


def _job_condition_true(job: Mapping[str, Any], condition_type: str) -> bool:
    cond = get_job_condition(job, condition_type)
    return cond is not None and cond.get("status") == "True"


def is_job_succeeded(job: Mapping[str, Any]) -> bool:
    """The Job has ``Complete=True``."""
    return _job_condition_true(job, "Complete")


def is_job_failed(job: Mapping[str, Any]) -> bool:
    """The Job has ``Failed=True``."""
    return _job_condition_true(job, "Failed")


def is_job_finished(job: Mapping[str, Any] | None) -> bool:
    """The launcher exists and is Complete or Failed (``syncHandler``'s ``done``)."""
    return job is not None and (is_job_succeeded(job) or is_job_failed(job))


def is_job_suspended(job: Mapping[str, Any]) -> bool:
    """``spec.suspend`` of a batch Job is true."""
    return as_record(job.get("spec")).get("suspend") is True


def select_job_pods(
    job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """Pods matching the Job's ``spec.selector`` and controlled by the Job (``jobPods``)."""
    selector = as_record(job.get("spec")).get("selector")
    return [  # the controller first: a uid compare, where the selector is parsed per pod
        pod
        for pod in pods
        if is_controlled_by(pod, job)
        and label_selector_matches(selector, as_dict(as_record(pod.get("metadata")).get("labels")))
    ]


PODS_STARTING_HOLD = 1.0
"""Seconds a status change of replica counts alone may wait while one of the job's pods is
still Pending: the others of a job start within a second of each other."""
LAUNCHER_FINISH_HOLD = 2.0
"""Seconds a status change of replica counts alone may wait while every pod of the unfinished
launcher Job has ended: the Job controller batches a Job's pod updates for 1 s before it counts
an ended pod and sets ``Complete`` or ``Failed`` (or starts another pod); measured here 1.03 to
1.25 s from the launcher pod's end to the Job's ``Complete``."""
LAUNCHER_STARTING_HOLD = 2.0
"""Seconds a status change of replica counts alone may wait while the launcher Job (not
suspended) has no pod that runs or ended, only Pending ones or none yet: the job's ``Running``
condition is written as its pod runs. In a burst of 40 MPIJobs the launcher's pod ran up to
1.5 s after the job's first worker (``bench/status_trace.py``), and a 1-s window wrote the
workers' counts alone first in 3 to 6 of the 40 jobs."""


def _live(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [p for p in pods if not as_record(p.get("metadata")).get("deletionTimestamp")]


def counts_hold(launcher_job: Mapping[str, Any] | None,
                launcher_pods: Iterable[Mapping[str, Any]],
                workers: Iterable[Mapping[str, Any]]) -> float | None:
    """How long a status change of nothing but replica counts may wait for the next change of
    them (``None``: write it at once). :data:`LAUNCHER_FINISH_HOLD` while ``launcher_job``
    (not finished) has pods, none being deleted, and every one of them has ended: the launcher
    counted no longer active, the Job's ``Complete`` (the MPIJob's ``Succeeded``) is due.
    :data:`LAUNCHER_STARTING_HOLD` while ``launcher_job`` (not finished, not suspended) has
    no pod (not being deleted) but Pending ones, or none yet: ``Running`` is due.
    :data:`PODS_STARTING_HOLD` while a launcher or worker pod (not being deleted) is Pending.
    Pods being deleted count for neither; a finished launcher Job holds nothing (the status is
    final)."""
    if is_job_finished(launcher_job):
        return None
    launcher_pods = list(launcher_pods)
    if launcher_job is not None:
        live = _live(launcher_pods)
        phases = [pod_phase(p) for p in live]
        if phases and all(phase in ("Succeeded", "Failed") for phase in phases):
            return LAUNCHER_FINISH_HOLD
        if (len(live) == len(launcher_pods) and not is_job_suspended(launcher_job)
                and all(phase == "Pending" for phase in phases)):
            return LAUNCHER_STARTING_HOLD
    if any(pod_phase(p) == "Pending" for p in _live([*launcher_pods, *workers])):
        return PODS_STARTING_HOLD
    return None


HOSTS_HOLD = PODS_STARTING_HOLD
"""Seconds hosts added to ``discover_hosts.sh`` may wait while other workers are starting: the
script is then written once as they come up together, not once per worker."""


def hosts_hold(job: Mapping[str, Any], existing_cm: Mapping[str, Any],
               desired_cm: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> float | None:
    """How long the update of ``job``'s ConfigMap from ``existing_cm`` to ``desired_cm`` may
    wait for more (``None``: write it at once): :data:`HOSTS_HOLD` when the ConfigMap is the
    job's, the update only adds hosts to ``discover_hosts.sh``
    (:func:`~mpi_controller.mpi.configmap.only_hosts_added`) and one of the job's workers in
    ``pods`` (not being deleted) is Pending, or Running but not Ready when the job lists Ready
    workers only (the SSH readiness opt-in): that worker is listed soon."""
    if not (is_controlled_by(existing_cm, job) and only_hosts_added(existing_cm, desired_cm)):
        return None
    need_ready = ssh_readiness_port(job) is not None
    for pod in _live(naming.worker_pods(job, pods)):
        phase = pod_phase(pod)
        if phase == "Pending" or (need_ready and phase == "Running" and not is_pod_ready(pod)):
            return HOSTS_HOLD
    return None


# --- the MPIJob ------------------------------------------------------------------------------


def is_suspended(job: Mapping[str, Any]) -> bool:
    """``spec.runPolicy.suspend`` is true."""
    return parse_mpi_job(job).suspended


def managed_by_external_controller(job: Mapping[str, Any]) -> str | None:
    """``spec.runPolicy.managedBy`` when it names another known controller (MultiKueue: then
    skip the job silently, before validation, as upstream does), else ``None``.

    Unlike upstream, an unknown value is not skipped: validation then reports it with a
    ``ValidationError`` event naming ``spec.runPolicy.managedBy`` (upstream ignores such a
    job without a word)."""
    raw = as_record(as_record(job.get("spec")).get("runPolicy")).get("managedBy")
    if (raw is None or raw == constants.KUBEFLOW_JOB_CONTROLLER
            or raw not in constants.MANAGED_BY_VALUES):
        return None
    return raw if isinstance(raw, str) else str(raw)


def is_clean_up_pods(clean_pod_policy: str | None) -> bool:
    """cleanPodPolicy is ``All`` or ``Running``."""
    return clean_pod_policy in (constants.CLEAN_POD_POLICY_ALL, constants.CLEAN_POD_POLICY_RUNNING)


def needs_finished_cleanup(job: Mapping[str, Any]) -> bool | None:
    """A finished job (``syncHandler``)? ``None``: the job is not finished (Succeeded/Failed
    True with completionTime set), go on. ``True``: clean up workers, write status, stop. ``False``:
    stop without doing anything."""
    status = as_dict(job.get("status"))
    if not (is_finished(status) and status.get("completionTime") is not None):
        return None
    return is_clean_up_pods(parse_mpi_job(job).spec.run_policy.clean_pod_policy)


def launcher_waits_for_workers(job: Mapping[str, Any]) -> bool:
    """The launcher is created only once every worker is Ready: the creation policy is not
    ``AtStartup`` (``WaitForWorkersReady``; upstream treats any other value alike), or the job
    opts in to SSH readiness (:mod:`~mpi_controller.mpi.features`)."""
    policy = parse_mpi_job(job).spec.launcher_creation_policy
    return (policy != constants.LAUNCHER_CREATION_POLICY_AT_STARTUP
            or ssh_readiness_port(job) is not None)


def should_create_launcher(job: Mapping[str, Any], workers: Sequence[Mapping[str, Any]]) -> bool:
    """Launcher creation policy (3.2): ``AtStartup``, or every worker of this sync is Ready
    (vacuously true with no workers — e.g. while suspended)."""
    return not launcher_waits_for_workers(job) or count_ready_pods(workers) == len(workers)


def hold_launcher(job: Mapping[str, Any], workers: Sequence[Mapping[str, Any]], *,
                  on_resume: bool) -> bool:
    """Whether a suspended launcher Job of a running MPIJob must stay suspended: the launcher
    waits for the workers, some worker of this sync is not Ready (or there is none yet), and
    the hold applies (``on_resume``: the ``LauncherWaitsOnResume`` gate; always with the SSH
    readiness annotation). Upstream resumes it at once (#615)."""
    if not (on_resume or ssh_readiness_port(job) is not None):
        return False
    if not launcher_waits_for_workers(job) or parse_mpi_job(job).worker_replicas == 0:
        return False
    return not workers or count_ready_pods(workers) < len(workers)


def launcher_suspension_action(
    job: Mapping[str, Any], launcher: Mapping[str, Any], *, hold: bool = False
) -> Literal["resume", "suspend"] | None:
    """``syncHandler``: ``resume`` an unsuspended MPIJob's suspended launcher (unless ``hold``,
    see :func:`hold_launcher`), ``suspend`` a suspended MPIJob's running launcher, else
    ``None``."""
    suspended, launcher_suspended = is_suspended(job), is_job_suspended(launcher)
    if not suspended and launcher_suspended:
        return None if hold else "resume"
    if suspended and not launcher_suspended:
        return "suspend"
    return None


def is_evicted(status: Mapping[str, Any]) -> bool:
    """The job failed because workers were evicted (``Failed=True``, ``MPIJobEvicted``)."""
    cond = get_condition(status, constants.CONDITION_FAILED)
    return (cond is not None and cond.get("status") == "True"
            and cond.get("reason") == constants.REASON_MPIJOB_EVICTED)


def ttl_remaining(job: Mapping[str, Any], now: datetime) -> float | None:
    """Seconds until ``runPolicy.ttlSecondsAfterFinished`` after the job's ``completionTime``
    runs out (0 or less: it has), or ``None`` without a TTL or a completionTime."""
    ttl = parse_mpi_job(job).spec.run_policy.ttl_seconds_after_finished
    completed = parse_time(as_record(job.get("status")).get("completionTime"))
    if ttl is None or completed is None:
        return None
    return (completed + timedelta(seconds=ttl) - now).total_seconds()


# --- plans -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleDownPlan:
    """Worker pods to delete because their replica index is beyond ``replicas``."""

    delete: list[Mapping[str, Any]] = field(default_factory=list)


def _worker_index(job_run_launcher_as_worker: bool, pod: Mapping[str, Any]) -> int | None:
    raw = as_record(as_record(pod.get("metadata")).get("labels")).get(constants.REPLICA_INDEX_LABEL)
    if not isinstance(raw, str):
        return None
    try:
        index = int(raw, 10)
    except ValueError:
        return None
    return index - 1 if job_run_launcher_as_worker else index


def plan_worker_scale_down(
    job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]
) -> ScaleDownPlan:
    """Scale-down (``getOrCreateWorker``): when more worker pods exist than ``replicas``, those
    whose worker index is ``>= replicas`` are deleted. ``pods`` may hold any pods; only
    ``job``'s workers count.

    Differences from upstream (docs/differences.md): a pod without a
    parsable replica-index label is left alone (upstream aborts the worker sync and reports
    no workers), and with runLauncherAsWorker the index label (i+1) is mapped back to i
    (upstream also deletes worker ``replicas-1``).
    """
    view = parse_mpi_job(job)
    worker = view.spec.worker
    if worker is None:
        return ScaleDownPlan()
    replicas = worker.replicas or 0
    mine = naming.worker_pods(job, pods)
    if len(mine) <= replicas:
        return ScaleDownPlan()
    doomed = []
    for pod in mine:
        index = _worker_index(view.run_launcher_as_worker, pod)
        if index is not None and index >= replicas:
            doomed.append(pod)
    return ScaleDownPlan(doomed)


@dataclass(frozen=True)
class CleanUpPlan:
    """Worker pods to delete (names, in index order). ``error`` is the ErrResourceExists
    message of the first worker not controlled by the MPIJob: delete the pods listed before
    it, record the event, and fail the sync."""

    delete: list[str] = field(default_factory=list)
    error: str | None = None


def plan_worker_cleanup(
    job: Mapping[str, Any], pods_by_name: Mapping[str, Mapping[str, Any]]
) -> CleanUpPlan:
    """``deleteWorkerPods``: for i in 0..replicas-1, the existing ``<job>-worker-i`` is
    deleted unless cleanPodPolicy is ``Running`` and the pod is neither Running nor Pending.
    (On the suspend path this deletes every worker for ``All`` *and* ``None``, as upstream.)"""
    view = parse_mpi_job(job)
    worker = view.spec.worker
    if worker is None:
        return CleanUpPlan()
    policy = view.spec.run_policy.clean_pod_policy
    delete: list[str] = []
    for i in range(max(worker.replicas or 0, 0)):
        name = naming.worker_name(view.name, i)
        pod = pods_by_name.get(name)
        if pod is None:
            continue
        if not is_controlled_by(pod, job):
            return CleanUpPlan(delete, resource_exists_message(pod, "Pod"))
        if (policy == constants.CLEAN_POD_POLICY_RUNNING
                and pod_phase(pod) not in ("Running", "Pending")):
            continue
        delete.append(name)
    return CleanUpPlan(delete)


LAUNCHER_STATUS_UNREAD = frozenset({"active", "ready", "terminating", "uncountedTerminatedPods"})
"""The launcher Job's status fields a ``v2beta1`` sync never reads: it counts the launcher's
running pods itself (``countRunningPods``), and reads of the Job's status only ``failed``,
``succeeded``, ``startTime``, ``completionTime`` and the conditions
:data:`LAUNCHER_CONDITIONS_READ`. The Job controller changes these while the launcher starts
and ends (``active`` 1, ``ready`` 1, the pod counted in ``uncountedTerminatedPods``)."""

LAUNCHER_CONDITIONS_READ = frozenset({"Complete", "Failed"})
"""The launcher Job's conditions any mode reads (``SuccessCriteriaMet`` and ``FailureTarget``,
which the Job controller adds just before ``Complete`` and ``Failed``, are not)."""


def _launcher_status_read(job: Mapping[str, Any], unread: frozenset[str]) -> dict[str, Any]:
    status = as_dict(job.get("status"))
    out = {k: v for k, v in status.items() if k not in unread and k != "conditions"}
    out["conditions"] = [c for c in as_list(status.get("conditions"))
                         if not isinstance(c, Mapping) or c.get("type") in LAUNCHER_CONDITIONS_READ]
    return out


def launcher_update_matters(child_kind: str, old: Mapping[str, Any], new: Mapping[str, Any],
                            *, unread: frozenset[str] = LAUNCHER_STATUS_UNREAD) -> bool:
    """Whether an update of a child of ``child_kind`` may change a sync: any update but a
    batch Job's that changes nothing but its ``unread`` status fields and conditions other
    than :data:`LAUNCHER_CONDITIONS_READ` (and the metadata a status write changes)."""
    if child_kind != "Job" or not same_but_status(old, new):
        return True
    return _launcher_status_read(old, unread) != _launcher_status_read(new, unread)
