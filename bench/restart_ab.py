"""Restart A/B: how fast controllers built from different commits come back on a big cluster.

The steady workload of ``bench/harness.py`` measures one restart of the working tree; its
figures move with the machine's load, so two commits measured at different times are hard to
compare. This program measures several commits on the same jobs, interleaved: it creates
``--jobs`` MPIJobs of 8 workers each (``10h`` launchers) in the namespace ``--namespace``
(kept between runs; ``--setup`` creates them and waits until every job is Running), then for
each of ``--rounds`` rounds starts one controller per commit in turn (the commit's
``mpi_controller`` package, extracted with ``git archive``, ahead of the installed one on
``PYTHONPATH``) and records, per start:

* ``synced``: seconds from the process start to the controller's own "caches synced" log
  line (the steady workload's figure; ``harness.synced_line_time``);
* ``ready``: seconds from the process start until ``/readyz`` answers 200 (caches synced;
  polled every 50 ms);
* ``cpu_ready``: the process's CPU seconds by then;
* ``idle``: seconds until its CPU first stays under 5 % of a core for 1 s (every job
  reconciled; with every job Running and up to date, nothing is written);
* ``cpu``: its CPU seconds by then.

It prints each start and the medians per commit, and writes ``bench-results/restart-ab.json``.
A program, not a test: nothing asserts on timing.

    .venv/bin/python bench/restart_ab.py --setup b29ffe7 HEAD
    .venv/bin/python bench/restart_ab.py --rounds 4 b29ffe7 3d6974f HEAD
    .venv/bin/python bench/restart_ab.py --delete      # remove the namespace
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

import harness  # noqa: E402  (bench/harness.py)

from tests.processes import ProcSampler, compile_package, free_port, http_get  # noqa: E402

Obj = dict[str, Any]
WORKERS = 8


def extract(rev: str, into: Path) -> Path:
    """``rev``'s ``mpi_controller`` package under ``into/<rev>``."""
    out = into / rev.replace("/", "_")
    out.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "mpi_controller"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    compile_package(out / "mpi_controller")  # as installed (tests.processes.compile_package)
    return out


def setup(cluster: harness.Cluster, s: harness.Settings, namespace: str, jobs: int) -> None:
    """Create the jobs (a fast controller of the working tree runs them) and wait until every
    one is Running; the controller then stops and the pods stay Running (KWOK)."""
    cluster.create_namespace(namespace)
    observer = harness.Observer(cluster, namespace, kinds=("mpijobs",))
    observer.start()
    ctl = harness.ControllerProcess(cluster, qps=1000, burst=2000, threadiness=16,
                                    log_path=harness.RESULTS / "restart-ab-setup.log")
    try:
        ctl.wait_ready()
        harness._create_all(s, namespace, [harness._job(f"job-{i:04d}", WORKERS, "10h")
                                           for i in range(jobs)], observer)
        harness.wait_until(lambda: observer.count(lambda t: t.running_at is not None) >= jobs,
                           timeout=1800, what="every job Running", interval=1.0)
    finally:
        ctl.stop()
        observer.stop()


def idle_at(samples: list[tuple[float, float, int]], since: float) -> float | None:
    """The first wall time after ``since`` from which the CPU stays under 5 % for 1 s."""
    for i, (t0, c0, _) in enumerate(samples):
        if t0 < since:
            continue
        j = next((k for k in range(i, len(samples)) if samples[k][0] - t0 >= 1.0), None)
        if j is None:
            return None
        if (samples[j][1] - c0) / (samples[j][0] - t0) < 0.05:
            return t0
    return None


def one_start(cluster: harness.Cluster, tree: Path, log_path: Path) -> Obj:
    """Start the controller of ``tree``, measure it (see the module doc), stop it."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["PYTHONPATH"] = str(tree)
    argv = [str(REPO / ".venv" / "bin" / "mpi-controller"), "run",
            "--kubeConfig", str(cluster.controller_kubeconfig), "--kube-api-qps", "100",
            "--kube-api-burst", "200", "--threadiness", "16", "--no-leader-elect",
            "--health-port", str(port), "--log-format", "json"]
    if "enable-scheme" in (tree / "mpi_controller" / "options.py").read_text():
        argv += ["--enable-scheme", "mpijob"]
    with log_path.open("wb") as log:
        start = time.time()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                cwd=tempfile.gettempdir(), start_new_session=True)
    sampler = ProcSampler(proc.pid, interval=0.1)
    try:
        while http_get(port, "/readyz")[0] != 200:
            if proc.poll() is not None:
                raise SystemExit(f"the controller of {tree} exited; see {log_path}")
            time.sleep(0.05)
        ready = time.time() - start
        cpu_ready = sampler.cpu()
        year = time.gmtime(start).tm_year
        logged = harness.wait_until(
            lambda: harness.synced_line_time(log_path.read_text(errors="replace"), "ours",
                                             year=year),
            timeout=10, what="the synced log line", interval=0.05)
        idle = None
        while idle is None and time.time() - start < 300:
            time.sleep(0.5)
            idle = idle_at(list(sampler.samples), start + ready)
        return {"synced": round(logged - start, 3) if logged else None,
                "ready": round(ready, 2), "cpu_ready": round(cpu_ready, 2),
                "idle": round(idle - start, 2) if idle else None,
                "cpu": round(sampler.cpu(), 2), "load": round(os.getloadavg()[0], 2)}
    finally:
        proc.terminate()
        proc.wait(30)
        sampler.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revs", nargs="*", help="commits to compare (git revisions)")
    parser.add_argument("--cluster-dir", type=Path,
                        default=Path.home() / ".cache" / "mpi-controller" / "cluster-bench")
    parser.add_argument("--namespace", default="restart-ab")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--setup", action="store_true", help="create the jobs first")
    parser.add_argument("--delete", action="store_true", help="delete the namespace and stop")
    args = parser.parse_args()
    harness.exit_on_sigterm()  # a controller started is stopped (one_start's finally)
    cluster = harness.Cluster(args.cluster_dir)
    if args.delete:
        print(f"namespace deleted in {cluster.delete_namespace(args.namespace)}s")
        return 0
    s = harness.Settings(cluster, 100, 200, 16, 1.0)
    if args.setup:
        setup(cluster, s, args.namespace, args.jobs)
    results: dict[str, list[Obj]] = {rev: [] for rev in args.revs}
    with tempfile.TemporaryDirectory(prefix="restart-ab-") as tmp:
        trees = {rev: extract(rev, Path(tmp)) for rev in args.revs}
        for round_ in range(args.rounds):
            for rev, tree in trees.items():
                time.sleep(2)
                res = one_start(cluster, tree, harness.RESULTS / f"restart-ab-{round_}.log")
                results[rev].append(res)
                print(f"{rev} round {round_}: {res}", flush=True)
    summary = {rev: {k: statistics.median(r[k] for r in rs if r[k] is not None)
                     for k in ("synced", "ready", "cpu_ready", "idle", "cpu", "load")}
               for rev, rs in results.items() if rs}
    for rev, med in summary.items():
        print(f"{rev} median of {args.rounds}: {med}")
    harness.RESULTS.mkdir(exist_ok=True)
    (harness.RESULTS / "restart-ab.json").write_text(json.dumps(
        {"jobs": args.jobs, "workers_per_job": WORKERS, "starts": results, "medians": summary},
        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
