"""Every kind of the registry under real Kueue v0.17.0 (its controller, its webhooks, real quota;
``hack/local-cluster.sh up --addons kueue``), run by this controller as a process: what Kueue's
own adapters and e2e suite assert of the Go operators (``pkg/controller/jobs/mpijob``,
``pkg/controller/jobs/kubeflow``, ``test/e2e/singlecluster``, ``test/e2e/multikueue`` of
sigs.k8s.io/kueue v0.17.0).

Each test has a namespace of its own with a ResourceFlavor whose node label and toleration
Kueue puts on admitted pods (the flavor's two 2-CPU KWOK nodes carry the label and a taint only
that toleration tolerates, so a pod lands there only through Kueue), a ClusterQueue of 3 CPUs
(preemption within it by priority) and a LocalQueue; a job is 3 pods of 1 CPU
(``tests/addons.py`` LAYOUTS), so one job fits the quota and two do not.

* **Admission** (``test_kueue_admits_and_runs``): a job labelled ``kueue.x-k8s.io/queue-name``
  is created suspended by Kueue's webhook (``runPolicy.suspend``) and gets one Workload whose
  PodSets are its replica types; once admitted it starts with the flavor's node selector and
  toleration and Kueue's ``kueue.x-k8s.io/podset`` label in every pod (the MPIJob's launcher
  Job's template too, as mpi-operator's ``syncLauncherSchedulingDirectives`` copies them), its
  pods on the flavor's nodes; ``WaitForPodsReady`` takes the job's ``Running=True`` as
  ``PodsReady=True`` (``Started``); when it succeeds, the Workload is ``Finished`` with the
  job's ``Succeeded`` message, the one Kueue's e2e expects of the Go operators (``PyTorchJob
  <name> is successfully completed.``, ``MPIJob <ns>/<name> successfully completed.``).
* **Preemption** (``test_kueue_preempts_and_readmits``): a low-priority job runs; a
  high-priority one evicts it (``Preempted``); the low job is suspended, its pods removed,
  every ``replicaStatuses[*].active`` back to 0 (Kueue clears the admission only then), its
  templates restored as they were written; the high job runs and succeeds; the low one is
  admitted again and runs to success with the flavor's scheduling directives again. One
  Workload per job throughout.
* **MultiKueue** (``test_kueue_leaves_multikueue_jobs_alone``): a job whose
  ``runPolicy.managedBy`` is ``kueue.x-k8s.io/multikueue`` is admitted and unsuspended by Kueue
  here (its ClusterQueue has no MultiKueue admission check) but left alone by the controller:
  no pod, no status. JAXJob is the exception upstream and here: training-operator v1.9.2
  reconciles a JAXJob whatever its ``managedBy`` says, so it runs.

What each test measured is written to ``<cluster dir>/results/kueue.json``. ``make
addons-test`` runs this file on a cluster with the addons; elsewhere it is skipped.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.addons import (
    PODSET_LABEL,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    Addons,
    KindCase,
    KueueEnv,
    Operator,
    condition,
    condition_true,
    events_of,
    job_condition,
    kind_cases,
    kueue_env,
    kueue_job_events,
    open_addons,
    ours_for_module,
    templates,
    wait_job,
    workload_priority_class,
    workload_when,
    workloads_of,
    write_results,
)
from tests.support import wait_for

pytestmark = pytest.mark.cluster

CASES = kind_cases()
IDS = [c.scheme for c in CASES]
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
READY_MESSAGE = "All pods reached readiness and the workload is running"
TIMING: dict[str, dict[str, float]] = {}


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    opened = open_addons()
    opened.require("kueue")
    yield opened
    write_results(opened, "kueue", TIMING)
    opened.api.close()


@pytest.fixture(scope="module")
def controller(addons: Addons, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    """This controller (every kind, no gang scheduling), for the module."""
    with ours_for_module(addons, tmp_path_factory.mktemp("kueue")) as operator:
        yield operator


@pytest.fixture
def env(addons: Addons, controller: Operator) -> Iterator[KueueEnv]:
    with kueue_env(addons) as made:
        yield made


# ---- checks --------------------------------------------------------------------------------------


def assert_admitted_pods(case: KindCase, env: KueueEnv, name: str) -> None:
    """Every live pod of the job carries the flavor's node selector and toleration and its
    PodSet's label, and runs on the flavor's nodes; so does the MPIJob launcher Job's
    template."""
    pods = [p for p in case.job_pods(env.addons, env.namespace, name)
            if not p.metadata.deletion_timestamp]
    assert len(pods) == case.pods, [p.metadata.name for p in pods]
    for pod in pods:
        labels = pod.metadata.labels
        podset = (labels.get("training.kubeflow.org/replica-type")
                  or labels.get("training.kubeflow.org/job-role"))
        assert pod.metadata.labels.get(PODSET_LABEL) == podset, pod.metadata.labels
        assert (pod.spec.node_selector or {}) == env.queues.node_labels, pod.spec.node_selector
        tolerations = [env.addons.api.sanitize_for_serialization(t)
                       for t in pod.spec.tolerations or []]
        assert env.queues.toleration in tolerations, tolerations
        assert pod.spec.node_name in env.nodes, (pod.metadata.name, pod.spec.node_name)
    if case.mpi:
        launcher = env.addons.batch.read_namespaced_job(f"{name}-launcher", env.namespace)
        template = env.addons.api.sanitize_for_serialization(launcher.spec.template)
        assert template["spec"].get("nodeSelector") == env.queues.node_labels, template
        assert env.queues.toleration in template["spec"].get("tolerations", []), template
        assert template["metadata"]["labels"].get(PODSET_LABEL) == "launcher", template


def our_events(env: KueueEnv, case: KindCase, name: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for event in events_of(env.addons, env.namespace, case.kind, name):
        if event["reason"].startswith(case.kind):
            out[event["reason"]] = out.get(event["reason"], 0) + event["count"]
    return out


def no_active_replicas(job: dict[str, Any]) -> bool:
    statuses = (job.get("status") or {}).get("replicaStatuses") or {}
    return all(not (s or {}).get("active") for s in statuses.values())


# ---- tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kueue_admits_and_runs(env: KueueEnv, case: KindCase) -> None:
    started = time.monotonic()
    name = "job"
    body = case.manifest(name, labels={QUEUE_LABEL: env.queues.local_queue}, duration="6s")
    created = case.create(env.addons, env.namespace, body)
    # Kueue's mutating webhook suspends a job that names a queue, whatever it asked for.
    assert created["spec"]["runPolicy"]["suspend"] is True
    uid = created["metadata"]["uid"]

    workload = workload_when(env, uid, "Admitted")
    admitted_after = time.monotonic() - started
    assert {p["name"]: p["count"] for p in workload["spec"]["podSets"]} == case.podsets()
    admission = workload["status"]["admission"]
    assert admission["clusterQueue"] == env.queues.cluster_queue
    assert {a["name"]: a["flavors"] for a in admission["podSetAssignments"]} == {
        p: {"cpu": env.queues.flavor, "memory": env.queues.flavor} for p in case.podsets()}

    wait_job(case, env, name, "Running")
    assert_admitted_pods(case, env, name)
    # Kueue merged the flavor into the templates while the job runs.
    job = case.get(env.addons, env.namespace, name)
    assert job["spec"]["runPolicy"]["suspend"] is False
    for template in templates(case, job).values():
        assert template["spec"]["nodeSelector"] == env.queues.node_labels
    ready = workload_when(env, uid, "PodsReady")
    assert (condition(ready, "PodsReady") or {}).get("reason") == "Started"
    assert (condition(ready, "PodsReady") or {}).get("message") == READY_MESSAGE
    ready_after = time.monotonic() - started

    wait_job(case, env, name, "Succeeded")
    finished = workload_when(env, uid, "Finished")
    message = case.finished_message(env.namespace, name)
    assert (job_condition(case, env, name, "Succeeded") or {}).get("message") == message
    got = condition(finished, "Finished") or {}
    assert (got["reason"], got["message"]) == ("Succeeded", message), got
    assert len(workloads_of(env.addons, env.namespace, uid)) == 1

    suspended = job_condition(case, env, name, "Suspended")
    if suspended is not None:  # seen suspended before Kueue admitted it: then resumed
        assert (suspended["status"], suspended["reason"]) == ("False", f"{case.kind}Resumed")
    # ("Workload ... is declared finished" is recorded on each update of the finished job
    # Kueue handles before its cache sees the Workload Finished.)
    events = kueue_job_events(env, case, name)
    assert events.pop("FinishedWorkload", 0) >= 1, events
    assert events == {"CreatedWorkload": 1, "Started": 1}, events
    TIMING[f"admits/{case.scheme}"] = {
        "seconds": round(time.monotonic() - started, 1),
        "admitted_after": round(admitted_after, 2), "pods_ready_after": round(ready_after, 2)}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kueue_preempts_and_readmits(env: KueueEnv, case: KindCase) -> None:
    started = time.monotonic()
    addons, ns = env.addons, env.namespace
    with contextlib.ExitStack() as stack:
        for level, value in (("low", 10), ("high", 1000)):
            stack.callback(workload_priority_class(addons, f"{ns}-{level}", value))
        queue = {QUEUE_LABEL: env.queues.local_queue}
        low_body = case.manifest("low", labels={**queue, PRIORITY_LABEL: f"{ns}-low"},
                                 duration="10s")
        original = templates(case, low_body)
        low = case.create(addons, ns, low_body)
        wait_job(case, env, "low", "Running")
        workload_when(env, low["metadata"]["uid"], "PodsReady")
        assert_admitted_pods(case, env, "low")

        preempting = time.monotonic()
        high = case.create(addons, ns, case.manifest(
            "high", labels={**queue, PRIORITY_LABEL: f"{ns}-high"}, duration="4s"))

        # The low job is evicted, suspended, its pods removed and its replicas inactive.
        evicted = workload_when(env, low["metadata"]["uid"], "Evicted")
        assert (condition(evicted, "Evicted") or {}).get("reason") == "Preempted"

        def stopped() -> dict[str, Any] | None:
            job = case.get(addons, ns, "low")
            live = [p for p in case.job_pods(addons, ns, "low")
                    if not p.metadata.deletion_timestamp]
            done = job["spec"]["runPolicy"]["suspend"] and no_active_replicas(job) and not live
            return job if done else None

        job = wait_for(stopped, timeout=60, what="the low job to be stopped")
        stopped_after = time.monotonic() - preempting
        # Kueue restored the templates as they were written (no flavor, no PodSet label).
        assert templates(case, job) == original, templates(case, job)
        assert condition_true(job, "Suspended")
        workload_when(env, low["metadata"]["uid"], "QuotaReserved", "False")

        workload_when(env, high["metadata"]["uid"], "Admitted")
        high_admitted_after = time.monotonic() - preempting
        wait_job(case, env, "high", "Running")
        assert_admitted_pods(case, env, "high")
        wait_job(case, env, "high", "Succeeded")

        # Admitted again, the low job runs again with the flavor's directives, and succeeds.
        workload_when(env, low["metadata"]["uid"], "Admitted")
        wait_job(case, env, "low", "Running")
        assert_admitted_pods(case, env, "low")
        wait_job(case, env, "low", "Succeeded")
        finished = workload_when(env, low["metadata"]["uid"], "Finished")
        message = case.finished_message(ns, "low")
        got = condition(finished, "Finished") or {}
        assert (got["reason"], got["message"]) == ("Succeeded", message), got

        for job_obj in (low, high):
            assert len(workloads_of(addons, ns, job_obj["metadata"]["uid"])) == 1
        low_tracks = env.pods.of("low")
        assert len(low_tracks) == 2 * case.pods, [t.name for t in low_tracks]
        suspended = job_condition(case, env, "low", "Suspended") or {}
        assert (suspended.get("status"), suspended.get("reason")) == ("False",
                                                                      f"{case.kind}Resumed")
        events = kueue_job_events(env, case, "low")
        assert events.pop("FinishedWorkload", 0) >= 1, events
        assert events == {"CreatedWorkload": 1, "Started": 2, "Stopped": 1}, events
        ours = our_events(env, case, "low")
        assert ours.get(f"{case.kind}Suspended", 0) >= 1, ours
        assert ours.get(f"{case.kind}Resumed", 0) >= 1, ours
    TIMING[f"preempts/{case.scheme}"] = {
        "seconds": round(time.monotonic() - started, 1),
        "stopped_after": round(stopped_after, 2),
        "high_admitted_after": round(high_admitted_after, 2)}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kueue_leaves_multikueue_jobs_alone(env: KueueEnv, case: KindCase) -> None:
    addons, ns = env.addons, env.namespace
    # Small enough for both jobs of the test to fit the quota at once.
    body = case.manifest("remote", labels={QUEUE_LABEL: env.queues.local_queue}, cpu="100m",
                         run_policy={"managedBy": MULTIKUEUE})
    created = case.create(addons, ns, body)
    workload_when(env, created["metadata"]["uid"], "Admitted")
    wait_for(lambda: case.get(addons, ns, "remote")["spec"]["runPolicy"]["suspend"] is False,
             timeout=60, what="Kueue to unsuspend the job")
    if case.scheme == "jaxjob":
        # training-operator v1.9.2's JAXJob reconciler never checks managedBy.
        wait_job(case, env, "remote", "Succeeded")
        return
    # A job created after it, and run to completion, shows the controller has been through
    # the queue meanwhile: still no pod and no status for the MultiKueue one.
    case.create(addons, ns, case.manifest("local", labels={QUEUE_LABEL: env.queues.local_queue},
                                          cpu="100m", duration="2s"))
    wait_job(case, env, "local", "Succeeded")
    assert case.job_pods(addons, ns, "remote") == []
    assert "status" not in case.get(addons, ns, "remote") or not (
        case.get(addons, ns, "remote")["status"].get("conditions"))
    assert [e["reason"] for e in events_of(addons, ns, case.kind, "remote")
            if e["reason"].startswith(case.kind)] == []

