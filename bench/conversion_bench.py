"""Conversion webhook benchmark: what listing MPIJobs through ``v1`` costs beside ``v2beta1``.

``--jobs`` MPIJobs (default 1,000) are created through ``v2beta1`` (the stored version: no
conversion) in a fresh namespace, with one webhook-serving ``mpi-controller run`` replica
(:class:`e2e.chaos.webhooks.WebhookSet`: the conversion webhook on 127.0.0.1 behind a
proxy, reconciling another, idle namespace, so the jobs are never changed). Then, for each
request kind of ``--requests`` and concurrency of ``--concurrency`` (default 20, 100, 500),
``--rounds`` waves of that many concurrent requests through each version (``v2beta1`` and
``v1`` in turn, each first in every other round):

* ``list``: the namespace's MPIJobs, what ``kubectl get mpijobs`` sends. The API server keeps
  a watch cache per version and serves a list from it: a ``v1`` job is converted when it
  enters the ``v1`` cache (and on each change), not on every list.
* ``get``: one job each (a different one per request): read from etcd and converted through
  the webhook on every request.

The response bodies are read, not decoded: the client's JSON parsing is not measured.

Figures per (request, version, concurrency): requests, failures, latency p50/p95/max (ms),
requests/s and jobs/s over the waves' wall time, bytes of one answer, the conversion webhook
calls the API server made meanwhile (its ``apiserver_crd_conversion_webhook_duration_seconds``
count, v2beta1 to v1: other clients' requests count too); per request kind and
concurrency, the cost of conversion per job in ms: ``(p50 of v1 - p50 of v2beta1) / jobs in
one answer``. Printed as a table, written to
``bench-results/conversion.json``. A program, not a test: nothing asserts on timing.

    .venv/bin/python bench/conversion_bench.py --cluster-dir ~/.cache/mpi-controller/cluster-x \
        [--jobs 1000] [--concurrency 20,100,500] [--rounds 2] [--requests list,get] \
        [--client-kubeconfig FILE] [--apiserver-rss-limit MB]

``--client-kubeconfig`` sends the waves as another user: the cluster's admin is in
``system:masters``, which API Priority and Fairness exempts from every limit, so its waves run
all at once (about 40 MB of kube-apiserver memory per list of 1,000 MPIJobs in flight); an
ordinary user's (a ServiceAccount token) are queued by the server's priority levels. The
cluster's kube-apiserver resident memory is watched (``bench/rss_watch.py``): a wave that
reaches ``--apiserver-rss-limit`` (default 4,000 MB) is cancelled, its rows say so, and no
higher concurrency is tried.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.rss_watch import RssWatch  # noqa: E402
from e2e.chaos.webhooks import WebhookSet  # noqa: E402
from tests.mpijobs import small_job  # noqa: E402

GROUP = "kubeflow.org"


def _kubectl(kubeconfig: str, binary: str) -> Any:
    def run(*args: str, check: bool = False, input: str | None = None) -> str:
        out = subprocess.run([binary, "--kubeconfig", kubeconfig, *args], input=input,
                             capture_output=True, text=True, check=check, timeout=120)
        return out.stdout
    return run


def create_jobs(kubeconfig: str, namespace: str, count: int) -> float:
    """``count`` small MPIJobs through v2beta1; the seconds it took."""
    from kubernetes import client, config
    api = config.new_client_from_config(config_file=kubeconfig)
    custom = client.CustomObjectsApi(api)
    start = time.monotonic()

    def create(i: int) -> None:
        custom.create_namespaced_custom_object(GROUP, "v2beta1", namespace, "mpijobs",
                                               small_job(f"job-{i:04d}", workers=2))
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(create, range(count)))
    return time.monotonic() - start


async def _client(kubeconfig: str, pool: int) -> Any:
    from kubernetes_asyncio import client, config

    from mpi_controller.runtime.rest import RestClient
    cfg = client.Configuration()
    await config.load_kube_config(config_file=kubeconfig, client_configuration=cfg,
                                  persist_config=False)
    cfg.connection_pool_maxsize = pool
    return RestClient._with_configuration(cfg, {"qps": 1e9, "burst": 10**9,
                                                "request_timeout": 600.0})


async def wave(rest: Any, paths: list[str]) -> tuple[list[float], int, float, int]:
    """A GET of each of ``paths`` at once: (latencies in s of those that succeeded, failures,
    the wave's wall time, bytes of one answer)."""
    size = 0

    async def one(path: str) -> float | None:
        nonlocal size
        start = time.monotonic()
        try:
            body = await rest.request("GET", path, decode=lambda b: b)
        except Exception as exc:  # counted, and the first few shown
            if failures_shown[0] < 3:
                failures_shown[0] += 1
                print(f"  failed: {exc!r}"[:300], flush=True)
            return None
        size = len(body)
        return time.monotonic() - start

    failures_shown = [0]
    start = time.monotonic()
    results = await asyncio.gather(*(one(path) for path in paths))
    wall = time.monotonic() - start
    ok = [r for r in results if r is not None]
    return ok, len(results) - len(ok), wall, size


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


REQUESTS = ("list", "get")
"""``list``: the namespace's MPIJobs, as ``kubectl get mpijobs`` asks (served from the API
server's watch cache of the version asked for); ``get``: one job each (read from etcd and
converted on every request)."""


def _paths(request: str, version: str, namespace: str, level: int, jobs: int,
           offset: int) -> list[str]:
    base = f"/apis/{GROUP}/{version}/namespaces/{namespace}/mpijobs"
    if request == "list":
        return [base] * level
    return [f"{base}/job-{(offset + i) % jobs:04d}" for i in range(level)]


_CALLS = ('apiserver_crd_conversion_webhook_duration_seconds_count{crd_name="mpijobs.kubeflow.org",'
          'from_version="v2beta1",succeeded="true",to_version="v1"}')


async def conversion_calls(rest: Any) -> float:
    """The API server's count of conversion webhook calls v2beta1 -> v1 so far (NaN when the
    API server does not answer)."""
    try:
        text = (await rest.request("GET", "/metrics", decode=lambda b: b)).decode()
    except Exception as exc:
        print(f"  metrics unavailable: {exc!r}"[:200], flush=True)
        return float("nan")
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(_CALLS))


async def measure(kubeconfig: str, namespace: str, jobs: int, levels: list[int],
                  rounds: int, requests: list[str], *, client_kubeconfig: str | None = None,
                  watch: RssWatch | None = None) -> list[dict[str, Any]]:
    """The rows of every (request, concurrency, version). The waves are sent as the user of
    ``client_kubeconfig`` (default: ``kubeconfig``'s); the API server's metrics are read as
    ``kubeconfig``'s. With ``watch``, a wave that drives the API server's memory to its limit
    is cancelled: its row says so (``aborted_at_rss_limit``) and the request kind stops there
    (no higher concurrency)."""
    admin = await _client(kubeconfig, 4)
    rest = await _client(client_kubeconfig or kubeconfig, max(levels) + 10)
    rows = []
    try:
        for version in ("v2beta1", "v1"):  # warm both paths once
            await rest.request("GET", f"/apis/{GROUP}/{version}/namespaces/{namespace}/mpijobs",
                               decode=lambda b: b)
        for request in requests:
            for level in levels:
                level_rows = await _level(admin, rest, request, namespace, jobs, level, rounds,
                                          watch)
                rows += level_rows
                if any(r["aborted_at_rss_limit"] for r in level_rows):
                    break
    finally:
        await rest.close()
        await admin.close()
    return rows


async def _level(admin: Any, rest: Any, request: str, namespace: str, jobs: int, level: int,
                 rounds: int, watch: RssWatch | None) -> list[dict[str, Any]]:
    latencies: dict[str, list[float]] = {"v2beta1": [], "v1": []}
    failed = dict.fromkeys(latencies, 0)
    walls = dict.fromkeys(latencies, 0.0)
    sizes = dict.fromkeys(latencies, 0)
    calls = dict.fromkeys(latencies, 0.0)
    peaks = dict.fromkeys(latencies, 0.0)
    aborted = dict.fromkeys(latencies, False)
    for r in range(rounds):  # the versions in turn, each first every other round
        for version in (("v2beta1", "v1") if r % 2 == 0 else ("v1", "v2beta1")):
            if any(aborted.values()):
                break
            before = await conversion_calls(admin)
            paths = _paths(request, version, namespace, level, jobs, r * level)
            if watch is None:
                result: tuple[list[float], int, float, int] | None = await wave(rest, paths)
            else:
                watch.reset()
                result = await watch.guard(wave(rest, paths))
                peaks[version] = max(peaks[version], watch.peak_mb)
            calls[version] += await conversion_calls(admin) - before
            if result is None:
                aborted[version] = True
                print(f"  {request} {version} x{level}: the API server reached "
                      f"{watch.peak_mb if watch else 0:.0f} MB; wave cancelled", flush=True)
                continue
            ok, bad, wall, size = result
            latencies[version] += ok
            failed[version] += bad
            walls[version] += wall
            sizes[version] = size or sizes[version]
    rows = []
    for version, done in latencies.items():
        row = _row(version, level, rounds, done, failed[version], walls[version],
                   sizes[version], jobs if request == "list" else 1)
        row["request"] = request
        row["webhook_calls"] = None if calls[version] != calls[version] else int(calls[version])
        row["apiserver_peak_rss_mb"] = round(peaks[version]) if watch else None
        row["aborted_at_rss_limit"] = aborted[version]
        rows.append(row)
        print(_line(row), flush=True)
    return rows


def _row(version: str, level: int, rounds: int, latencies: list[float], failed: int,
         wall: float, size: int, jobs: int) -> dict[str, Any]:
    done = len(latencies)
    return {
        "version": version, "concurrency": level, "requests": level * rounds,
        "failed": failed, "bytes_per_answer": size,
        "p50_ms": round(statistics.median(latencies) * 1000, 1) if done else None,
        "p95_ms": round(_percentile(latencies, 0.95) * 1000, 1) if done else None,
        "max_ms": round(max(latencies) * 1000, 1) if done else None,
        "requests_per_s": round(done / wall, 2) if wall else None,
        "jobs_per_s": round(done * jobs / wall) if wall else None,
    }


def _line(row: dict[str, Any]) -> str:
    return (f"| {row['request']} | {row['version']} | {row['concurrency']} | {row['requests']} "
            f"| {row['failed']} | {row['p50_ms']} | {row['p95_ms']} | {row['max_ms']} "
            f"| {row['requests_per_s']} | {row['jobs_per_s']} | {row['bytes_per_answer']} "
            f"| {row['webhook_calls']} | {row.get('apiserver_peak_rss_mb')} "
            f"| {'yes' if row.get('aborted_at_rss_limit') else ''} |")


def per_job_cost(rows: list[dict[str, Any]], jobs: int) -> dict[str, dict[int, float | None]]:
    """Conversion's cost per job in ms, per request kind and concurrency (pure): the
    difference of the median latencies of v1 and v2beta1, divided by the jobs in one answer
    (``jobs`` for a list, 1 for a get)."""
    out: dict[str, dict[int, float | None]] = {}
    for request in sorted({r.get("request", "list") for r in rows}):
        mine = [r for r in rows if r.get("request", "list") == request]
        per = jobs if request == "list" else 1
        out[request] = {}
        for level in sorted({r["concurrency"] for r in mine}):
            by = {r["version"]: r for r in mine if r["concurrency"] == level}
            v1, hub = by.get("v1", {}).get("p50_ms"), by.get("v2beta1", {}).get("p50_ms")
            out[request][level] = (round((v1 - hub) / per, 3)
                                   if v1 is not None and hub is not None else None)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster-dir", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--concurrency", default="20,100,500")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", default=",".join(REQUESTS),
                        help="list (as kubectl get mpijobs), get (one job each), or both")
    parser.add_argument("--out", type=Path, default=REPO / "bench-results" / "conversion.json")
    parser.add_argument("--client-kubeconfig", type=Path, default=None,
                        help="send the waves as this kubeconfig's user (default: the cluster's "
                        "admin, whose system:masters group API Priority and Fairness exempts)")
    parser.add_argument("--apiserver-rss-limit", type=float, default=4000.0, metavar="MB",
                        help="cancel a wave when the cluster's kube-apiserver reaches this "
                        "resident memory, and go no higher (0: no watch; the server keeps "
                        "growing for up to its 60 s request timeout after it)")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",") if c]
    kubeconfig = str(args.cluster_dir / "kubeconfig")
    env = {**os.environ, "MPI_CONTROLLER_CLUSTER_DIR": str(args.cluster_dir)}
    bin_dir = subprocess.run(["bash", str(REPO / "hack" / "local-cluster.sh"), "bin-dir"],
                             check=True, capture_output=True, text=True, env=env).stdout.strip()
    kubectl = _kubectl(kubeconfig, str(Path(bin_dir) / "kubectl"))
    tag = uuid.uuid4().hex[:6]
    namespace, home = f"conv-bench-{tag}", f"conv-bench-{tag}-wh"
    for ns in (namespace, home, f"{home}-idle"):
        kubectl("create", "namespace", ns, check=True)
    logs = args.out.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    hooks = WebhookSet(kubeconfig, logs, home=home, reconcile=f"{home}-idle", kubectl=kubectl,
                       extra=("--no-leader-elect",))
    try:
        with_hooks = hooks.__enter__()
        del with_hooks
        created = create_jobs(kubeconfig, namespace, args.jobs)
        print(f"{args.jobs} MPIJobs created through v2beta1 in {created:.1f}s", flush=True)
        print("| request | version | concurrent | requests | failed | p50 ms | p95 ms | max ms "
              "| requests/s | jobs/s | bytes/answer | conversion webhook calls "
              "| kube-apiserver peak RSS MB | cancelled at the RSS limit |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
        pid_file = args.cluster_dir / "pids" / "kube-apiserver.pid"
        watch = (RssWatch(int(pid_file.read_text()), limit_mb=args.apiserver_rss_limit)
                 if args.apiserver_rss_limit > 0 else None)
        rows = asyncio.run(measure(
            kubeconfig, namespace, args.jobs, levels, args.rounds,
            [r for r in args.requests.split(",") if r], watch=watch,
            client_kubeconfig=str(args.client_kubeconfig) if args.client_kubeconfig else None))
    finally:
        hooks.__exit__()
        for ns in (namespace, home, f"{home}-idle"):
            kubectl("delete", "namespace", ns, "--wait=false")
    cost = per_job_cost(rows, args.jobs)
    for request, by_level in cost.items():
        print(f"conversion cost per job, {request} (ms, from the medians): "
              + ", ".join(f"{level} concurrent: {ms}" for level, ms in by_level.items()),
              flush=True)
    record = {"jobs": args.jobs, "rounds": args.rounds, "rows": rows,
              "conversion_ms_per_job": {r: {str(k): v for k, v in c.items()}
                                        for r, c in cost.items()},
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "load_average": os.getloadavg()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
