"""This controller beside the Go operators under the same real Kueue v0.17.0: mpi-operator v0.8.2
(MPIJob ``v2beta1``) and training-operator v1.9.2 (TFJob, PyTorchJob, XGBoostJob, PaddleJob,
JAXJob), built by ``hack/reference-operators.sh build`` and run as processes as ``conformance/``
runs them, one operator at a time on the same cluster.

For each kind, the same scenario runs under each operator, the kinds of one operator at once
(a namespace, ClusterQueue, flavor and two 2-CPU nodes each, ``tests/addons.py``
``kueue_env``): a low-priority job (3 pods of 1 CPU, 10 s) is admitted and runs; a
high-priority one (4 s) preempts it; the high job succeeds, the low one is admitted again and
succeeds. What Kueue and the pods show is recorded and must be the same under both operators:

* admissions: Kueue's Events on each job (``CreatedWorkload``, ``Started``, ``Stopped``) and
  on each Workload (``QuotaReserved``, ``Admitted``, ``Preempted``...), and the number of
  Workloads of each job;
* the Workloads' final conditions and ``Finished`` messages;
* pod placement: every pod's PodSet label, node selector, whether it carries the flavor's
  toleration, whether it ran on the flavor's nodes, and how a run's pods spread over the two
  nodes; how many pods each job had in all (the low one: two runs);
* the low job while preempted: suspended, no live pod, every ``active`` 0, templates as written;
  each job's final conditions (type, status, reason) and replica counts (``active``,
  ``succeeded``, ``failed``; the ``selector`` differs by design, docs/training-kinds.md,
  "Differences").

The figures (each operator's time from the preemptor's creation to the preempted job being
stopped, to the preemptor's admission, the whole scenario) are written to
``<cluster dir>/results/kueue-reference.json``.
"""

from __future__ import annotations

import concurrent.futures
import json
import time
from collections.abc import Iterator
from pathlib import Path
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
    kind_cases,
    kueue_env,
    kueue_job_events,
    open_addons,
    running,
    templates,
    wait_job,
    workload_priority_class,
    workload_when,
    workloads_of,
    write_results,
)
from tests.support import wait_for

pytestmark = pytest.mark.cluster

REFERENCES: dict[str, list[KindCase]] = {}
for _case in kind_cases():
    REFERENCES.setdefault(_case.reference, []).append(_case)
FLAGS = ("--kube-api-qps", "50", "--kube-api-burst", "100")
FIGURES: dict[str, Any] = {}


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    opened = open_addons()
    opened.require("kueue")
    yield opened
    write_results(opened, "kueue-reference", FIGURES)
    opened.api.close()


def scenario(env: KueueEnv, case: KindCase) -> dict[str, Any]:
    """The preemption scenario of the module doc for ``case``; what it saw."""
    addons, ns = env.addons, env.namespace
    started = time.monotonic()
    cleanup = [workload_priority_class(addons, f"{ns}-{level}", value)
               for level, value in (("low", 10), ("high", 1000))]
    try:
        queue = {QUEUE_LABEL: env.queues.local_queue}
        low_body = case.manifest("low", labels={**queue, PRIORITY_LABEL: f"{ns}-low"},
                                 duration="10s")
        written = templates(case, low_body)
        low = case.create(addons, ns, low_body)
        wait_job(case, env, "low", "Running")
        preempting = time.monotonic()
        high = case.create(addons, ns, case.manifest(
            "high", labels={**queue, PRIORITY_LABEL: f"{ns}-high"}, duration="4s"))

        def stopped() -> dict[str, Any] | None:
            job = case.get(addons, ns, "low")
            live = [p for p in case.job_pods(addons, ns, "low")
                    if not p.metadata.deletion_timestamp]
            statuses = (job.get("status") or {}).get("replicaStatuses") or {}
            inactive = all(not (s or {}).get("active") for s in statuses.values())
            return job if job["spec"]["runPolicy"]["suspend"] and inactive and not live else None

        preempted = wait_for(stopped, timeout=90, what=f"{case.kind} low to be stopped")
        stopped_after = time.monotonic() - preempting
        workload_when(env, high["metadata"]["uid"], "Admitted")
        admitted_after = time.monotonic() - preempting
        wait_job(case, env, "high", "Succeeded")
        wait_job(case, env, "low", "Succeeded", timeout=150)
        for job in (low, high):
            workload_when(env, job["metadata"]["uid"], "Finished")
        jobs = {name: job_outcome(env, case, name, uid)
                for name, uid in (("low", low["metadata"]["uid"]),
                                  ("high", high["metadata"]["uid"]))}
        outcome = {
            "preempted": {
                "suspended": preempted["spec"]["runPolicy"]["suspend"],
                "templates as written": templates(case, preempted) == written,
                "Suspended": condition_true(preempted, "Suspended"),
            },
            **jobs,
        }
        # The namespace (in messages and the flavor's label) differs between the runs.
        outcome = json.loads(json.dumps(outcome).replace(ns, "<namespace>"))
        figures = {"stopped_after": round(stopped_after, 2),
                   "preemptor_admitted_after": round(admitted_after, 2),
                   "scenario": round(time.monotonic() - started, 1)}
        return {"outcome": outcome, "figures": figures}
    finally:
        for delete in cleanup:
            delete()


def job_outcome(env: KueueEnv, case: KindCase, name: str, uid: str) -> dict[str, Any]:
    addons, ns = env.addons, env.namespace
    job = case.get(addons, ns, name)
    workloads = workloads_of(addons, ns, uid)
    workload_events: dict[str, int] = {}
    for workload in workloads:
        for event in events_of(addons, ns, "Workload", workload["metadata"]["name"]):
            if event["reason"] == "Pending":
                # One per admission attempt: Kueue's scheduler retries a preemptor in a loop
                # until the preempted Workload releases its quota (up to the recorder's burst
                # of 25): a count of how long that took, not of what happened.
                continue
            workload_events[event["reason"]] = (workload_events.get(event["reason"], 0)
                                                + event["count"])
    job_events = kueue_job_events(env, case, name)
    # Recorded once per update of the finished job Kueue handles before its cache has the
    # Workload Finished: a count of the operator's late status writes, compared apart.
    job_events["FinishedWorkload"] = min(job_events.get("FinishedWorkload", 0), 1)
    pods = []
    for track in env.pods.of(name):
        pod = track.last
        spec, labels = pod.get("spec") or {}, (pod.get("metadata") or {}).get("labels") or {}
        pods.append((labels.get(PODSET_LABEL, ""),
                     tuple(sorted((spec.get("nodeSelector") or {}).items())),
                     env.queues.toleration in (spec.get("tolerations") or []),
                     track.node in env.nodes))
    # The runs (the low job has two): each the next case.pods pods by creation.
    tracks = sorted(env.pods.of(name), key=lambda t: t.created)
    runs = [[t.node for t in tracks[i:i + case.pods]] for i in range(0, len(tracks), case.pods)]
    status = job.get("status") or {}
    return {
        "workloads": len(workloads),
        "workload events": workload_events,
        "job events (Kueue)": job_events,
        "workload conditions": sorted(
            (c["type"], c["status"], c["reason"]) for w in workloads
            for c in w["status"].get("conditions") or []),
        "finished message": (condition(workloads[0], "Finished") or {}).get("message")
        if workloads else None,
        "pods": sorted(pods),
        "pods per node, each run": [sorted(nodes.count(n) for n in set(nodes))
                                    for nodes in runs],
        "conditions": sorted((c["type"], c["status"], c["reason"])
                             for c in status.get("conditions") or []),
        "replicas": {rtype: {k: v for k, v in (counts or {}).items() if k != "selector"}
                     for rtype, counts in (status.get("replicaStatuses") or {}).items()},
    }


def run_all(addons: Addons, cases: list[KindCase]) -> dict[str, dict[str, Any]]:
    """The scenario of each case at once, each in an environment of its own."""
    def one(case: KindCase) -> dict[str, Any]:
        with kueue_env(addons, prefix=f"ref-{case.scheme[:5]}") as env:
            return scenario(env, case)

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(cases)) as pool:
        futures = {case.scheme: pool.submit(one, case) for case in cases}
        return {scheme: future.result() for scheme, future in futures.items()}


@pytest.mark.parametrize("reference", sorted(REFERENCES))
def test_kueue_same_as_go_operator(addons: Addons, reference: str, tmp_path: Path) -> None:
    cases = REFERENCES[reference]
    schemes = [flag for case in cases for flag in ("--enable-scheme", case.scheme)]
    results: dict[str, dict[str, dict[str, Any]]] = {}
    starts: dict[str, float] = {}
    # mpi-operator v0.8.2 serves MPIJob only (no --enable-scheme flag).
    for name, flags in (("ours", (*FLAGS, *schemes)),
                        (reference, FLAGS if reference == "mpi-operator" else (*FLAGS, *schemes))):
        operator = Operator(addons, name, tmp_path, *flags)
        with running(operator) as started:
            starts[name] = started.ready_seconds
            results[name] = run_all(addons, cases)
    FIGURES[f"{reference} ready after"] = starts
    differences = {}
    for case in cases:
        ours = results["ours"][case.scheme]
        theirs = results[reference][case.scheme]
        FIGURES[case.scheme] = {"ours": ours["figures"], reference: theirs["figures"],
                                "outcome": ours["outcome"]}
        found = diff(ours["outcome"], theirs["outcome"])
        if found:
            differences[case.scheme] = found
    assert not differences, differences


def diff(ours: Any, theirs: Any, path: str = "") -> list[str]:
    """Where two outcomes differ: ``path: ours != theirs`` lines."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out = []
        for key in sorted(set(ours) | set(theirs), key=str):
            out += diff(ours.get(key), theirs.get(key), f"{path}/{key}")
        return out
    return [] if ours == theirs else [f"{path}: {ours!r} != {theirs!r}"]
