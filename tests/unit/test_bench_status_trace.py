"""bench/status_trace.py's report (pure): a job's timeline of pod phase changes and status
versions, what changed in each, and the audit log's status writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.support import REPO

sys.path.insert(0, str(Path(REPO) / "bench"))
import status_trace  # bench/status_trace.py

CREATED = {"conditions": [{"type": "Created", "status": "True"}],
           "replicaStatuses": {"Worker": {}}}
RUNNING = {"conditions": [{"type": "Created", "status": "True"},
                          {"type": "Running", "status": "True"}],
           "replicaStatuses": {"Worker": {"active": 1}}}
BOTH = {**RUNNING, "replicaStatuses": {"Worker": {"active": 2}}}


def job(t: float, kind: str, status: dict[str, Any]) -> dict[str, Any]:
    return status_trace.record_of("tfjobs.kubeflow.org", {"type": kind, "object": {
        "metadata": {"name": "j", "namespace": "ns"}, "status": status}}, t)


def pod(t: float, name: str, phase: str, kind: str = "MODIFIED", owner: str = "j",
        ) -> dict[str, Any]:
    return status_trace.record_of("pods", {"type": kind, "object": {
        "metadata": {"name": name, "namespace": "ns",
                     "ownerReferences": [{"name": owner, "controller": True}]},
        "status": {"phase": phase}}}, t)


RECORDS = [job(10.0, "ADDED", {}), job(10.5, "MODIFIED", CREATED),
           pod(10.4, "j-worker-0", "Pending", "ADDED"), pod(11.0, "j-worker-0", "Running"),
           pod(11.0, "j-worker-0", "Running"), job(11.1, "MODIFIED", RUNNING),
           pod(11.2, "j-worker-1", "Running"), job(11.3, "MODIFIED", BOTH),
           pod(11.4, "other-worker-0", "Running", owner="other")]


def test_the_timeline_names_what_each_version_changed() -> None:
    steps = [(round(t, 3), what, detail)
             for t, what, detail in status_trace.timeline(RECORDS, "j", 10.0)]
    assert steps == [
        (0.5, "COND", "Created  Worker:0/0/0"),
        (0.4, "pod", "worker-0 -> Pending"),
        (1.0, "pod", "worker-0 -> Running"),
        (1.1, "COND", "Created,Running  Worker:1/0/0"),
        (1.2, "pod", "worker-1 -> Running"),
        (1.3, "counts", "Created,Running  Worker:2/0/0"),
    ]


def test_the_report_counts_versions_and_audit_codes() -> None:
    audit = [json.dumps({"objectRef": {"namespace": "ns", "name": "j", "subresource": "status",
                                       "resource": "tfjobs"}, "verb": "update",
                         "stage": "ResponseComplete", "responseStatus": {"code": code}})
             for code in (200, 409, 200)]
    audit.append(json.dumps({"objectRef": {"namespace": "ns", "name": "j"}, "verb": "update",
                             "stage": "ResponseComplete", "responseStatus": {"code": 200}}))
    writes = status_trace.audit_status_writes(["not json", *audit], "ns")
    assert writes == {"j": [200, 409, 200]}
    lines = status_trace.report(RECORDS, "ns", jobs_shown=0, audit=writes)
    assert lines == ["versions per job: {3: 1}; of them {'COND': 2, 'counts': 1}",
                     "audit status writes: 3 (3.00 per job), codes {200: 2, 409: 1}"]


def trainjob(t: float, kind: str, status: dict[str, Any], *, jobset: bool = False,
             ) -> dict[str, Any]:
    resource = "jobsets.jobset.x-k8s.io" if jobset else "trainjobs.trainer.kubeflow.org"
    return status_trace.record_of(resource, {"type": kind, "object": {
        "metadata": {"name": "tj", "namespace": "ns"}, "status": status}}, t)


def jobset_pod(t: float, name: str, phase: str) -> dict[str, Any]:
    return status_trace.record_of("pods", {"type": "MODIFIED", "object": {
        "metadata": {"name": name, "namespace": "ns",
                     "labels": {status_trace.JOBSET_LABEL: "tj"},
                     "ownerReferences": [{"name": "tj-node-0", "controller": True}]},
        "status": {"phase": phase}}}, t)


ACTIVE = {"replicatedJobsStatus": [{"name": "node", "active": 1, "ready": 0, "succeeded": 0,
                                    "failed": 0, "suspended": 0}]}
TJ_ACTIVE = {"jobsStatus": [{"name": "node", "active": 1, "ready": 0, "succeeded": 0,
                             "failed": 0, "suspended": 0}]}


def test_a_trainjob_timeline_has_its_jobsets_versions_and_pods() -> None:
    records = [trainjob(10.0, "ADDED", {}), trainjob(10.1, "ADDED", {}, jobset=True),
               jobset_pod(10.2, "tj-node-0-0-abc", "Pending"),
               trainjob(10.3, "MODIFIED", ACTIVE, jobset=True),
               trainjob(10.4, "MODIFIED", TJ_ACTIVE)]
    steps = [(round(t, 3), what, detail)
             for t, what, detail in status_trace.timeline(records, "tj", 10.0)]
    assert steps == [
        (0.1, "jobset", "added"),
        (0.2, "pod", "node-0-0-abc -> Pending"),
        (0.3, "jobset", "  node:1/0/0/0"),
        (0.4, "counts", "  node:1/0/0/0"),
    ]
    audit = [json.dumps({"objectRef": {"namespace": "ns", "name": "tj", "subresource": "status",
                                       "resource": resource}, "verb": "update",
                         "stage": "ResponseComplete", "responseStatus": {"code": 200},
                         "requestReceivedTimestamp": received,
                         "user": {"username": f"system:serviceaccount:x:{user}"}})
             for resource, received, user in (
                 ("jobsets", "1970-01-01T00:00:10.250000Z", "jobset"),
                 ("trainjobs", "1970-01-01T00:00:10.350000Z", "mpi-controller"))]
    assert status_trace.audit_status_writes(audit, "ns", "trainjobs") == {"tj": [200]}
    times = status_trace.audit_write_times(audit, "ns")
    assert times == {"tj": [(10.25, "jobset 200"), (10.35, "mpi-controller 200")]}
    lines = status_trace.report(records, "ns", jobs_shown=1,
                                audit=status_trace.audit_status_writes(audit, "ns", "trainjobs"),
                                audit_times=times)
    assert lines == [
        "tj (audit: [200])",
        "    0.100  jobset added",
        "    0.200  pod    node-0-0-abc -> Pending",
        "    0.250  write  jobset 200",
        "    0.300  jobset   node:1/0/0/0",
        "    0.350  write  mpi-controller 200",
        "    0.400  counts   node:1/0/0/0",
        "versions per job: {1: 1}; of them {'counts': 1}",
        "audit status writes: 1 (1.00 per job), codes {200: 1}",
    ]


def test_a_watch_started_again_watches_only() -> None:
    """kubectl's watch of a custom resource ends whenever its CRD changes; the recorder starts
    it again without listing (the first watch recorded the current versions)."""
    first = status_trace.watch_command("k", "mpijobs.kubeflow.org", again=False)
    again = status_trace.watch_command("k", "mpijobs.kubeflow.org", again=True)
    assert first == ["kubectl", "--kubeconfig", "k", "get", "mpijobs.kubeflow.org", "-A",
                     "--watch", "-o", "json", "--output-watch-events"]
    assert again == [*first[:7], "--watch-only", *first[7:]]
