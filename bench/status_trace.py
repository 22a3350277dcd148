"""Each job's status writes, what changed in each, and its pods' phase changes between them.

``record`` watches jobs and pods in every namespace (one ``kubectl get --watch`` per resource)
and appends each version seen, with this machine's time, to a JSON-lines file until
interrupted; run it beside ``bench/harness.py`` (both operators of a side-by-side run write to
namespaces of their own). ``report`` reads that file for one namespace: per job, the sequence
of pod phase changes and job versions (``COND`` when the conditions changed, ``counts`` when
only ``replicaStatuses`` did), each job's number of versions, and with ``--audit`` the
kube-apiserver audit log's status writes of the namespace and their response codes
(conflicts never show as versions), each write in the timeline too (``write``: its time the
audit log's ``requestReceivedTimestamp``, the writer's user name, the code). Times are seconds
after the namespace's first record.

TrainJobs: record ``--resources trainjobs.trainer.kubeflow.org,jobsets.jobset.x-k8s.io``; a
TrainJob's pods are those of its JobSet (label ``jobset.sigs.k8s.io/jobset-name``), its JobSet's
versions show as ``jobset`` lines, its counts are ``jobsStatus`` (``node:1/1/0/0``:
active/ready/succeeded/failed), and ``--audit-resource trainjobs`` keeps the JobSet's own status
writes (same name) out of the TrainJob's.

    PYTHONPATH=$PWD .venv/bin/python bench/status_trace.py record \\
        --kubeconfig DIR/kubeconfig --out /tmp/trace.jsonl [--resources tfjobs.kubeflow.org]
    PYTHONPATH=$PWD .venv/bin/python bench/status_trace.py report /tmp/trace.jsonl \\
        --namespace bench-tfjob-xxxxx [--audit DIR/logs/audit.log] [--jobs 3]

The pod and job streams are separate watches: under load one can trail the other by a fraction
of a second, so the order of a pod change and a job version close together is not exact.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

Rec = dict[str, Any]
JOBS = ("tfjobs.kubeflow.org", "pytorchjobs.kubeflow.org")
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"


# -- recording -------------------------------------------------------------------------------


def record_of(resource: str, event: Rec, now: float) -> Rec:
    """One line of the trace for a watch event (pods: phase, deletion, controller name; jobs:
    the status)."""
    obj = event["object"]
    meta = obj["metadata"]
    rec: Rec = {"t": now, "res": resource, "type": event["type"],
                "ns": meta.get("namespace"), "name": meta["name"]}
    if resource == "pods":
        rec["phase"] = (obj.get("status") or {}).get("phase")
        rec["deleting"] = bool(meta.get("deletionTimestamp"))
        rec["owner"] = next((r["name"] for r in meta.get("ownerReferences") or []
                             if r.get("controller")), None)
        jobset = (meta.get("labels") or {}).get(JOBSET_LABEL)
        if jobset:
            rec["jobset"] = jobset
    else:
        rec["status"] = obj.get("status") or {}
    return rec


def watch_command(kubeconfig: str, resource: str, *, again: bool) -> list[str]:
    """The ``kubectl`` watch of ``resource``; ``again``: after the last one ended, watch only
    (the objects' current versions were recorded by the first)."""
    return ["kubectl", "--kubeconfig", kubeconfig, "get", resource, "-A", "--watch",
            *(["--watch-only"] if again else []), "-o", "json", "--output-watch-events"]


def _watch(kubeconfig: str, resource: str, out: TextIO, lock: threading.Lock) -> None:
    """Record ``resource``'s watch events until interrupted. ``kubectl get --watch`` exits when
    the API server ends its watch, as it does for a custom resource each time its CRD changes
    (the bench harness installs the conversion webhook into the MPIJob CRD at every run's
    start): the watch is started again, watch-only."""
    again = False
    while True:
        with subprocess.Popen(watch_command(kubeconfig, resource, again=again),
                              stdout=subprocess.PIPE, text=True) as proc:
            assert proc.stdout is not None
            decoder, buf = json.JSONDecoder(), ""
            for line in proc.stdout:
                buf += line
                try:
                    event, _ = decoder.raw_decode(buf.strip())
                except ValueError:
                    continue
                buf = ""
                with lock:
                    out.write(json.dumps(record_of(resource, event, time.time())) + "\n")
                    out.flush()
        print(f"status_trace: the watch of {resource} ended (kubectl exited with "
              f"{proc.returncode}); watching again", file=sys.stderr)
        again = True
        time.sleep(0.2)


def record(kubeconfig: str, path: Path, resources: Iterable[str]) -> None:
    lock = threading.Lock()
    with path.open("a") as out:
        threads = [threading.Thread(target=_watch, args=(kubeconfig, r, out, lock), daemon=True)
                   for r in (*resources, "pods")]
        for t in threads:
            t.start()
        try:
            for t in threads:
                t.join()
        except KeyboardInterrupt:
            pass


# -- reporting (pure) ------------------------------------------------------------------------


def conditions(status: Rec) -> str:
    """``Created,Running=F,Succeeded``: each condition's type, ``=F`` when not True."""
    return ",".join(c.get("type", "?") + ("" if c.get("status") == "True" else "=F")
                    for c in status.get("conditions") or [])


def counts(status: Rec) -> str:
    """``PS:2/0/0 Worker:3/1/0``: active/succeeded/failed of each replica type; for a TrainJob
    (``jobsStatus``) or a JobSet (``replicatedJobsStatus``) ``node:1/1/0/0``:
    active/ready/succeeded/failed of each replicated Job."""
    replicas = status.get("replicaStatuses") or {}
    out = [f"{t}:" + "/".join(str((r or {}).get(k, 0)) for k in ("active", "succeeded", "failed"))
           for t, r in sorted(replicas.items())]
    for job in status.get("jobsStatus") or status.get("replicatedJobsStatus") or []:
        out.append(f"{job.get('name', '?')}:" + "/".join(
            str(job.get(k, 0)) for k in ("active", "ready", "succeeded", "failed")))
    return " ".join(out)


def _is_jobset(resource: str) -> bool:
    return resource.split(".")[0] == "jobsets"


def timeline(records: list[Rec], job: str, t0: float) -> Iterator[tuple[float, str, str]]:
    """``(seconds, what, detail)`` for ``job``: its pods' phase changes, its versions after
    the first (what changed: ``COND`` or ``counts``) and, for a TrainJob, its JobSet's
    versions (``jobset``)."""
    pods: dict[str, str] = {}
    previous: Rec | None = None
    for r in records:
        if r["res"] == "pods":
            if r.get("owner") != job and r.get("jobset") != job:
                continue
            phase = "DELETED" if r["type"] == "DELETED" else \
                str(r.get("phase")) + (" (deleting)" if r.get("deleting") else "")
            if pods.get(r["name"]) != phase:
                pods[r["name"]] = phase
                yield r["t"] - t0, "pod", f"{r['name'].removeprefix(job + '-')} -> {phase}"
        elif r["name"] == job and r["type"] != "DELETED" and _is_jobset(r["res"]):
            yield (r["t"] - t0, "jobset", "added" if r["type"] == "ADDED" else
                   f"{conditions(r['status'])}  {counts(r['status'])}")
        elif r["name"] == job and r["type"] != "DELETED":
            if previous is not None or r["type"] == "MODIFIED":
                changed = conditions(r["status"]) != conditions(previous or {})
                yield (r["t"] - t0, "COND" if changed else "counts",
                       f"{conditions(r['status'])}  {counts(r['status'])}")
            previous = r["status"]


def _status_writes(lines: Iterable[str], namespace: str, resource: str | None
                   ) -> Iterator[Rec]:
    for line in lines:
        try:
            e = json.loads(line)
        except ValueError:
            continue
        ref = e.get("objectRef") or {}
        if (ref.get("namespace") == namespace and ref.get("subresource") == "status"
                and e.get("verb") in ("update", "patch") and e.get("stage") == "ResponseComplete"
                and (resource is None or ref.get("resource") == resource)):
            yield e


def audit_status_writes(lines: Iterable[str], namespace: str, resource: str | None = None
                        ) -> dict[str, list[int]]:
    """Per job name, the response codes of the status writes (update/patch of a ``status``
    subresource; of ``resource`` alone when given) in ``namespace``, in log order."""
    out: dict[str, list[int]] = {}
    for e in _status_writes(lines, namespace, resource):
        out.setdefault(e["objectRef"].get("name", ""), []).append(
            int((e.get("responseStatus") or {}).get("code", 0)))
    return out


def audit_write_times(lines: Iterable[str], namespace: str, resource: str | None = None
                      ) -> dict[str, list[tuple[float, str]]]:
    """Per job name, each status write's ``(requestReceivedTimestamp as epoch seconds,
    "<user> <code>")`` (the same writes as :func:`audit_status_writes`)."""
    out: dict[str, list[tuple[float, str]]] = {}
    for e in _status_writes(lines, namespace, resource):
        received = datetime.fromisoformat(str(e.get("requestReceivedTimestamp", ""))
                                          .replace("Z", "+00:00")).timestamp()
        user = (e.get("user") or {}).get("username", "?").rpartition(":")[2]
        code = int((e.get("responseStatus") or {}).get("code", 0))
        out.setdefault(e["objectRef"].get("name", ""), []).append((received, f"{user} {code}"))
    return out


def report(records: list[Rec], namespace: str, *, jobs_shown: int,
           audit: dict[str, list[int]] | None,
           audit_times: dict[str, list[tuple[float, str]]] | None = None) -> list[str]:
    recs = [r for r in records if r.get("ns") == namespace]
    if not recs:
        return [f"no records in namespace {namespace}"]
    t0 = min(r["t"] for r in recs)
    jobs = sorted({r["name"] for r in recs if r["res"] != "pods"})
    lines: list[str] = []
    versions: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    for i, job in enumerate(jobs):
        steps = list(timeline(recs, job, t0))
        written = [s for s in steps if s[1] in ("COND", "counts")]
        writes = [(t - t0, "write", w) for t, w in (audit_times or {}).get(job, [])]
        steps = sorted(steps + writes, key=lambda s: s[0])
        versions[len(written)] += 1
        kinds.update(s[1] for s in written)
        if i < jobs_shown:
            codes = f" (audit: {audit.get(job, [])})" if audit is not None else ""
            lines.append(f"{job}{codes}")
            lines += [f"  {t:7.3f}  {what:6s} {detail}" for t, what, detail in steps]
    lines.append(f"versions per job: {dict(sorted(versions.items()))}; "
                 f"of them {dict(sorted(kinds.items()))}")
    if audit is not None:
        codes = Counter(c for v in audit.values() for c in v)
        total = sum(codes.values())
        lines.append(f"audit status writes: {total} ({total / max(1, len(jobs)):.2f} per job), "
                     f"codes {dict(sorted(codes.items()))}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--kubeconfig", required=True)
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--resources", default=",".join(JOBS))
    rep = sub.add_parser("report")
    rep.add_argument("trace", type=Path)
    rep.add_argument("--namespace", required=True)
    rep.add_argument("--audit", type=Path)
    rep.add_argument("--audit-resource", help="count only this resource's status writes "
                     "(trainjobs: not the JobSets' of the same names)")
    rep.add_argument("--jobs", type=int, default=3)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.kubeconfig, args.out, [r for r in args.resources.split(",") if r])
        return 0
    with args.trace.open() as f:
        records = [json.loads(line) for line in f if line.strip()]
    audit = audit_times = None
    if args.audit:
        with args.audit.open() as f:
            lines = f.readlines()
        audit = audit_status_writes(lines, args.namespace, args.audit_resource)
        audit_times = audit_write_times(lines, args.namespace, args.audit_resource)
    print("\n".join(report(records, args.namespace, jobs_shown=args.jobs, audit=audit,
                            audit_times=audit_times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
