"""The ``scale`` workload of ``bench/harness.py``: 2,000 MPIJobs x 8 workers plus 1,000
PyTorchJobs x (1 master + 3 workers), ``--scale`` multiplying both counts, about 22,000 pods
at full size (each MPIJob also has its launcher pod), every one of them Running for a day in
KWOK (``sim.mpi-controller.io/duration``: MPI workers run until deleted, the launcher Job's
pod and the PyTorchJob pods after the duration), so that they all sit in the controller's
caches. One controller serves both kinds (``--enable-scheme mpijob --enable-scheme
pytorchjob``, every namespace).

The jobs are created in two halves so that every figure has two sizes (and the controller's
RSS a slope):

1. a baseline: the controller watching an empty namespace (``--namespace``), its RSS;
2. for each half: the running controller loads it (every job created at once; jobs per second
   from the first create to the last job Running, the controller's CPU per job), then it is
   stopped and a new one started on everything in place, the measured restart: seconds to
   ``/readyz`` (every informer synced), to every job reconciled (``/metrics``: each kind's
   ``controller_runtime_reconcile_total`` at least its jobs, its ``workqueue_depth`` and
   ``controller_runtime_active_workers`` 0), its API writes (the audit log, from its start to
   a marker after the idle window: must be 0), its CPU over ``IDLE_S`` idle seconds and its
   RSS then (a point of the slope).

``model`` turns the figures into the sizing model of ``docs/performance.md`` ("Scale"): MB per
1,000 cached pods, pods cached per GB, the jobs per second one core allows. With
``BENCH_SCALE_KEEP=1`` the namespace is left in place (deleting 20,000 pods takes the
namespace controller minutes; take the cluster down instead).

The pure helpers (sizes, bodies, the metrics parser, the slope and the model) are tested in
``tests/unit/test_bench_scale.py``.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from typing import Any

import harness  # bench/harness.py (which imports this module only when the workload runs)
import training  # bench/training.py

from tests.processes import http_get

Obj = dict[str, Any]
WORKLOAD = "scale"
MPI_JOBS, MPI_WORKERS = 2000, 8
PYTORCH_JOBS = 1000
PYTORCHJOB = training.TrainingKind(
    "pytorchjob", "PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs", "pytorch",
    training.PYTORCH_IMAGE, {"Master": 1, "Worker": 3})
RUNS = "24h"    # every pod stays Running for the whole workload
IDLE_S = float(os.environ.get("BENCH_SCALE_IDLE_S") or 60)  # idle window after a restart
CONTROLLERS = ("MPIJob", "PyTorchJob")
MIB = 2**20
GIB = 2**30
DEPLOYMENT_LIMIT = 512 * MIB  # deploy/base/deployment.yaml's memory limit


def sizes(scale: float) -> tuple[int, int]:
    """(MPIJobs, PyTorchJobs) at ``scale`` (at least one of each)."""
    return max(1, round(MPI_JOBS * scale)), max(1, round(PYTORCH_JOBS * scale))


def pods_of(mpi_jobs: int, pytorch_jobs: int) -> int:
    """Pods the jobs have once Running: an MPIJob's workers and launcher, a PyTorchJob's
    replicas."""
    return mpi_jobs * (MPI_WORKERS + 1) + pytorch_jobs * PYTORCHJOB.pods_per_job


def halves(n: int) -> tuple[int, int]:
    first = n // 2
    return first, n - first


def interleave(a: list[Obj], b: list[Obj]) -> list[Obj]:
    """``a`` and ``b`` merged in proportion (each keeps its order): the kinds arrive mixed."""
    out: list[Obj] = []
    i = j = 0
    while i < len(a) or j < len(b):
        # Take from a while its share so far is behind its share of the whole.
        if j >= len(b) or (i < len(a) and i * len(b) <= j * len(a)):
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out


def bodies(mpi: range, pytorch: range) -> list[Obj]:
    """The jobs numbered ``mpi`` and ``pytorch``: MPIJobs ``mpi-NNNNN`` of ``MPI_WORKERS``
    workers, PyTorchJobs ``pt-NNNNN``; every pod Running for ``RUNS``."""
    return interleave(
        [harness._job(f"mpi-{i:05d}", MPI_WORKERS, RUNS) for i in mpi],
        [PYTORCHJOB.job(f"pt-{i:05d}", RUNS) for i in pytorch])


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metric_sum(text: str, metric: str, labels: dict[str, str]) -> float:
    """The sum of the samples of ``metric`` (Prometheus text format) whose labels include
    ``labels``."""
    total = 0.0
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m or m.group(1) != metric:
            continue
        have = dict(_LABEL.findall(m.group(2) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


def reconciled(text: str, expected: dict[str, int]) -> bool:
    """Every controller of ``expected`` (name -> jobs) has synced at least its jobs and has no
    key waiting or in progress."""
    return all(
        metric_sum(text, "controller_runtime_reconcile_total", {"controller": c}) >= n
        and metric_sum(text, "workqueue_depth", {"name": c}) == 0
        and metric_sum(text, "controller_runtime_active_workers", {"controller": c}) == 0
        for c, n in expected.items())


def slope(points: list[tuple[int, int]]) -> float | None:
    """Least-squares bytes per pod of (pods, RSS bytes) points; None under two sizes."""
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def model(*, points: list[tuple[int, int]], cpu_ms_per_job: float | None,
          synced_s: float | None, pods: int, writes_per_job: float | None = None,
          qps: float | None = None) -> Obj:
    """The sizing model: what one pod costs in RSS (the slope of ``points``), how many fit in a
    GB and in the Deployment's memory limit over the empty-cache RSS (the point at 0 pods, else
    the intercept), the jobs per second one core allows at ``cpu_ms_per_job`` and the client's
    ``qps`` at ``writes_per_job`` (Events included), and the seconds of start-up to synced per
    1,000 pods (``synced_s`` at ``pods``)."""
    per_pod = slope(points)
    out: Obj = {"bytes_per_pod": round(per_pod) if per_pod else None}
    if per_pod and per_pod > 0:
        base = next((y for x, y in points if x == 0), None)
        if base is None:
            mx = sum(x for x, _ in points) / len(points)
            base = round(sum(y for _, y in points) / len(points) - per_pod * mx)
        out.update({
            "mb_per_1000_pods": round(per_pod * 1000 / MIB, 2),
            "empty_rss_mb": round(base / MIB, 1),
            "pods_per_gb": int(GIB / per_pod),
            "pods_in_512mi_limit": max(0, int((DEPLOYMENT_LIMIT - base) / per_pod)),
        })
    if cpu_ms_per_job:
        out["jobs_per_s_one_core"] = round(1000 / cpu_ms_per_job, 1)
    if writes_per_job and qps:
        out["jobs_per_s_at_qps"] = round(qps / writes_per_job, 1)
    if synced_s is not None and pods:
        out["synced_s_per_1000_pods"] = round(synced_s * 1000 / pods, 3)
    return out


# -- the workload (needs the cluster) -------------------------------------------------------


class ScaleRun(harness.Run):
    """:class:`harness.Run` that leaves its namespace in place with ``BENCH_SCALE_KEEP``."""

    def __exit__(self, *exc: object) -> None:
        if not os.environ.get("BENCH_SCALE_KEEP"):
            super().__exit__(*exc)
            return
        if self.controller is not None:
            self.controller.stop()
        self.observer.stop()
        harness.log(f"{self.workload}: namespace {self.namespace} left in place "
                    f"(BENCH_SCALE_KEEP)")


def _controller(s: harness.Settings, tag: str, *, extra: tuple[str, ...] = ()
                ) -> harness.ControllerProcess:
    return harness.ControllerProcess(
        s.cluster, qps=s.qps, burst=s.burst, threadiness=s.threadiness,
        extra=(*s.extra, "--enable-scheme", PYTORCHJOB.scheme, *extra),
        log_path=harness.RESULTS / f"{WORKLOAD}{tag}-controller.log", scheme="mpijob")


def _load(s: harness.Settings, run: harness.Run, ctl: harness.ControllerProcess,
          batch: list[Obj], timeout: float) -> Obj:
    """Create ``batch`` at once; until each job is Running. Jobs per second and CPU."""
    obs = run.observer
    names = {b["metadata"]["name"] for b in batch}
    cpu0, cluster0, machine0 = ctl.cpu(), s.cluster.component_cpu(), harness._machine_busy()
    audit = harness.Audit(s.cluster.audit_log)
    start = time.time()
    harness._create_all(s, run.namespace, batch, obs, pool=16)
    created_s = time.time() - start
    harness.log(f"scale: created {len(batch)} jobs in {created_s:.1f}s")

    def running() -> int:
        with obs.lock:
            return sum(1 for n in names if (t := obs.jobs.get(n)) and t.running_at)
    last = [0, time.monotonic()]

    def done() -> bool:
        n = running()
        if n != last[0] and time.monotonic() - last[1] > 30:
            harness.log(f"scale: {n} of {len(batch)} jobs Running")
            last[1] = time.monotonic()
        last[0] = n
        return ctl.proc.poll() is not None or n >= len(batch)
    harness.wait_until(done, timeout=timeout, what="every job of the batch Running",
                       interval=1.0)
    end = time.time()
    snap = {n: t for n, t in obs.snapshot().items() if n in names}
    last_running = max((t.running_at or 0.0) for t in snap.values())
    n_running = sum(1 for t in snap.values() if t.running_at)
    cpu = ctl.cpu() - cpu0
    wall = (last_running if n_running >= len(batch) else end) - start
    marker, _ = s.cluster.marker()
    audit.wait_marker(marker)
    api = harness.summarize_requests(audit.requests(start, marker), run.namespace, len(batch))
    return {
        "jobs": len(batch), "running": n_running, "created_s": round(created_s, 1),
        "all_running_s": round(wall, 1),
        "jobs_per_s": round(n_running / wall, 2) if wall > 0 else None,
        "t_running": harness.percentiles([t.running_at - t.created for t in snap.values()
                                          if t.running_at and t.created]),
        "controller_cpu_s": round(cpu, 2),
        "controller_cpu_ms_per_job": round(cpu * 1000 / max(1, n_running), 1),
        "controller_peak_core_fraction": ctl.peak_core_fraction(start, end),
        "control_plane_cores": {k: round((v - cluster0.get(k, 0.0)) / (end - start), 2)
                                for k, v in s.cluster.component_cpu().items()},
        "machine_busy_cores": round(harness._machine_busy(machine0), 2),
        "loadavg": os.getloadavg()[0],
        # The controller's writes in the namespace until every job is Running, per job.
        "writes_per_job": api.get("child_and_status_writes_per_job"),
        "event_writes_per_job": api.get("event_writes_per_job"),
        "writes_in_namespace": api["writes_in_namespace"],
    }


def _restart(s: harness.Settings, run: harness.Run, tag: str, *, expected: dict[str, int],
             pods: int) -> tuple[harness.ControllerProcess, Obj]:
    """A new controller on everything in place: synced, reconciled, writes, idle CPU, RSS."""
    audit = harness.Audit(s.cluster.audit_log)
    ctl = _controller(s, tag)
    ready_s = ctl.wait_ready(timeout=1800)
    harness.log(f"scale: controller{tag} ready after {ready_s}s")

    def probe() -> bool:
        if ctl.proc.poll() is not None:
            return True
        status, text = http_get(ctl.health_port, "/metrics")
        return status == 200 and reconciled(text, expected)
    harness.wait_until(probe, timeout=1800, what="every job reconciled", interval=0.2)
    reconciled_s = round(time.time() - ctl.started, 2)
    harness.log(f"scale: every job reconciled after {reconciled_s}s")
    peak_restart = ctl.peak_core_fraction(ctl.started, time.time())
    cpu_restart = ctl.cpu()
    time.sleep(5)  # the last status writes and Events of the reconcile, if any
    cpu0, t0 = ctl.cpu(), time.time()
    time.sleep(IDLE_S)
    idle_cpu, idle_s = ctl.cpu() - cpu0, time.time() - t0
    sample = ctl.read() or (0.0, 0, 0)
    marker, _ = s.cluster.marker()
    audit.wait_marker(marker)
    entries = audit.requests(ctl.started, marker)
    writes = [e for e in entries if e["verb"] in harness.WRITE_VERBS
              and harness.resource_of(e) != "leases"]
    lists = [e for e in entries if e["verb"] == "list"]
    synced_audit = max((harness.ts(e["stageTimestamp"]) for e in lists), default=None)
    return ctl, {
        "cached_pods": pods, "jobs": expected,
        "synced_readyz_s": ready_s,
        "synced_audit_last_list_s": round(synced_audit - ctl.started, 3)
        if synced_audit else None,
        "reconciled_s": reconciled_s,
        "controller_cpu_s_until_reconciled": round(cpu_restart, 2),
        "peak_core_fraction_restart": peak_restart,
        "idle_window_s": round(idle_s, 1),
        "idle_cpu_s": round(idle_cpu, 3),
        "idle_cpu_ms_per_s": round(idle_cpu * 1000 / idle_s, 2),
        "rss_mb": round(sample[1] / MIB, 1),
        "rss_bytes": sample[1],
        "peak_rss_mb": round(ctl.peak_rss / MIB, 1),
        "writes_after_restart": len(writes),
        "writes_by_verb_resource": dict(sorted(
            Counter(f"{e['verb']} {harness.resource_of(e)}" for e in writes).items())),
        "api_requests": harness.summarize_requests(entries, run.namespace, 0),
        "loadavg": os.getloadavg()[0],
    }


def run(s: harness.Settings) -> Obj:
    mpi_n, pt_n = sizes(s.scale)
    mpi_a, pt_a = halves(mpi_n)[0], halves(pt_n)[0]
    batches = [bodies(range(mpi_a), range(pt_a)),
               bodies(range(mpi_a, mpi_n), range(pt_a, pt_n))]
    counts = [(mpi_a, pt_a), (mpi_n, pt_n)]
    stages: list[Obj] = []
    with ScaleRun(s, WORKLOAD, kinds=("mpijobs", "pytorchjobs"), start_controller=False) as run:
        base = _controller(s, "-baseline", extra=("--namespace", f"{run.namespace}-empty"))
        base_ready = base.wait_ready()
        time.sleep(3)
        base_rss = (base.read() or (0.0, 0, 0))[1]
        base.stop()
        harness.log(f"scale: baseline RSS {base_rss / MIB:.1f} MB, ready after {base_ready}s")
        ctl = run.controller = _controller(s, "-load0")
        ctl.wait_ready()
        flags = ctl.flags
        for i, (batch, (mpi_k, pt_k)) in enumerate(zip(batches, counts, strict=True)):
            if not batch:
                continue
            load = _load(s, run, ctl, batch, timeout=max(900.0, 1.5 * len(batch)))
            harness.log(f"scale: stage {i}: {load}")
            ctl.stop()
            run.controller = None
            time.sleep(2)
            ctl, restart = _restart(s, run, f"-restart{i}",
                                    expected={"MPIJob": mpi_k, "PyTorchJob": pt_k},
                                    pods=pods_of(mpi_k, pt_k))
            run.controller = ctl
            harness.log(f"scale: stage {i} restart: " + ", ".join(
                f"{k} {v}" for k, v in restart.items() if k != "api_requests"))
            stages.append({"load": load, "restart": restart})
        per_pod, measured = harness.pod_cache_bytes(s.cluster, run.namespace)
        run.result["series"] = ctl.series(ctl.started)
        ctl.stop()
        run.controller = None
    points = [(0, base_rss), *((st["restart"]["cached_pods"], st["restart"]["rss_bytes"])
                               for st in stages)]
    final = stages[-1]
    cpu_per_job = sum(st["load"]["controller_cpu_s"] for st in stages) * 1000 / max(
        1, sum(st["load"]["running"] for st in stages))
    writes = [(st["load"].get("writes_per_job") or 0) + (st["load"].get("event_writes_per_job")
                                                          or 0) for st in stages]
    res = run.result
    res.update({
        "mpijobs": mpi_n, "workers_per_mpijob": MPI_WORKERS, "pytorchjobs": pt_n,
        "pytorch_replicas": PYTORCHJOB.replicas, "pods": pods_of(mpi_n, pt_n),
        "flags": flags, "baseline_rss_mb": round(base_rss / MIB, 1),
        "baseline_ready_s": base_ready, "stages": stages,
        "bytes_per_cached_pod": round(per_pod), "bytes_per_cached_pod_pods": measured,
        "rss_points": points,
        "model": model(points=points, cpu_ms_per_job=cpu_per_job,
                       synced_s=final["restart"]["synced_readyz_s"],
                       pods=final["restart"]["cached_pods"],
                       writes_per_job=max(writes) or None, qps=s.qps),
        # The harness's table reads these top-level figures.
        "synced_readyz_s": final["restart"]["synced_readyz_s"],
        "reconciled_s": final["restart"]["reconciled_s"],
        "writes_after_restart": sum(st["restart"]["writes_after_restart"] for st in stages),
        "idle_cpu_ms_per_s": final["restart"]["idle_cpu_ms_per_s"],
        "controller_rss_mb": final["restart"]["rss_mb"],
        "controller_peak_rss_mb": max(st["restart"]["peak_rss_mb"] for st in stages),
        "jobs_per_s": final["load"]["jobs_per_s"],
        "controller_cpu_ms_per_job": round(cpu_per_job, 1),
    })
    m = res["model"]
    res["targets"] = [
        harness.target("writes after each restart (Leases aside)", [
            st["restart"]["writes_after_restart"] for st in stages], "0",
            res["writes_after_restart"] == 0),
        harness.target(f"start-up to synced / every job reconciled, {res['pods']} pods (s)",
                       f"{res['synced_readyz_s']} / {res['reconciled_s']}", "(reported)", None),
        harness.target("controller CPU while idle (ms per s)", res["idle_cpu_ms_per_s"],
                       "(reported)", None),
        harness.target("RSS per 1,000 cached pods (MB, slope)", m.get("mb_per_1000_pods"),
                       "(reported)", None),
        harness.target("jobs created to Running per second (last stage)", res["jobs_per_s"],
                       "(reported)", None),
        harness.target("controller CPU per job to Running (ms)",
                       res["controller_cpu_ms_per_job"], "(reported)", None),
    ]
    return res
