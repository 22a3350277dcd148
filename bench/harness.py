"""Performance harness: workloads against the local control plane, the controller as a separate
process, every figure from an independent observer.

* Latency: a watcher in this process timestamps the first sighting of each object (wall clock of
  this machine): per MPIJob, create request -> every child exists (``t_children``), -> Running
  condition, -> Succeeded condition.
* Controller CPU seconds and RSS: sampled from ``/proc/<pid>/stat`` and ``/proc/<pid>/status``.
* API requests: the kube-apiserver audit log, user ``mpi-controller`` (the controller runs with
  ``kubeconfig-controller``), in the window between the controller's start and a marker request
  made with the same credentials after the workload (so the batch-mode log has been flushed).
* Parameters: controller flags, versions, machine, load average.

Workloads (``--scale`` multiplies the sizes): ``burst`` (200 jobs x 4 workers at once), ``steady``
(1000 jobs x 8 workers existing, restart the controller), ``wide`` (one job, 256 workers),
``arrival`` (5 jobs/s for 120 s), all MPIJobs (our controller runs with ``--enable-scheme
mpijob``); ``tfjob`` (100 TFJobs x (2 PS + 4 workers) at once, ``--enable-scheme tfjob``),
``pytorchjob`` (100 PyTorchJobs x (1 master + 4 workers)) and ``pytorchjob-elastic`` (100
elastic PyTorchJobs x 4 workers, each with an HPA), ``--enable-scheme pytorchjob``;
``xgboostjob`` (100 XGBoostJobs x (1 master + 4 workers)), ``paddlejob`` and ``jaxjob`` (100
jobs x 4 workers each), each with its own ``--enable-scheme`` (``bench/training.py``);
``trainjob`` (50 TrainJobs x 2 nodes on a namespaced ``torch-distributed`` whose pods end after
10 s, ``--enable-scheme trainjob``; the JobSet addon is started on the cluster first when it is
not running, ``hack/local-cluster.sh up --addons jobset``; the children are the JobSets,
success the ``Complete`` condition); ``scale`` (``bench/scale.py``: 2,000 MPIJobs x 8 workers
and 1,000 PyTorchJobs x 4 pods kept Running, ~22,000 pods cached; start-up to synced, RSS per
cached pod, writes after a restart, idle CPU; run only when named in ``--workloads``). Writes
``bench-results/<workload>.json``, then
``bench-results/bench.md`` (the table) and ``bench-results/bench.png`` (the plot) from every
result present; ``--docs`` copies them to ``docs/performance.md`` and ``docs/bench.png``.
Not a test: nothing asserts on timing.

``--operators ours,go,training-operator,trainer`` also measures the reference operators (built by
``hack/reference-operators.sh``) with the same workloads, QPS, threads and observers: the Go
operator (mpi-operator v0.8.2) the MPIJob workloads, training-operator v1.9.2 the ones of the
training-operator kinds (``--controller-threads`` for ``--threadiness``; run as
``conformance.training_operator`` does: its own mount namespace for its certificate files),
Kubeflow Trainer v2.3.0's manager the ``trainjob`` one (as ``conformance.trainer`` runs it: QPS,
burst and ``--controller-threads`` become its configuration file).
Their results are
``bench-results/<workload>-go.json`` / ``-training-operator.json`` / ``-trainer.json`` and
``bench-results/side-by-side.md`` puts each beside ours (ours / reference / ratio). The Go
operator always runs leader election (its Lease requests are left out of the write counts) and
is ready when it logs ``Started workers``, as is training-operator; the steady workload's jobs
are brought to Running once, then each operator is restarted on them. The restart is measured
the same way on both sides: caches synced and workers started (``synced_log_s``, the median
of three starts on the same jobs, each in ``synced_log_s_starts``; the first start's other
figures are kept) at the timestamp of the operator's own log line for it (ours ``caches
synced; starting controllers``, the Go operator's ``Started workers``; each polls its caches
every 100 ms and writes the line as its workers start), not when the harness notices it
(``synced_readyz_s``: ours /readyz or the Go operator's line, polled every 50 ms); CPU until
idle at the first second under 5 % of a core that begins after its caches synced and its last
write of the restart (Leases aside).
The Go operator's queue spreads its restart's syncs over tens of seconds (every cached child
of a job adds the job rate-limited: a per-job exponential backoff, 5 ms doubling per add, and
a 10/s bucket), each recording an ``MPIJobRunning`` Event, so it drops under 5 % of a core long
before its last write.

A lifecycle workload not finished within its timeout (``--lifecycle-timeout`` sets it), or whose
operator exited mid-workload, reports what it reached instead of raising: ``complete: false``,
``jobs_finished`` of ``jobs``, and in ``lower_bounds`` the figures not reached (lower bounds
only); the tables show them as ``not reached (>= x)`` and rank them only where the bound decides.

    .venv/bin/python bench/harness.py --cluster-dir ~/.cache/mpi-controller/cluster-bench \\
        [--workloads burst,steady,wide,arrival,tfjob,pytorchjob,xgboostjob,...] \\
        [--scale 0.1] \\
        [--operators ours,go,training-operator,trainer] [--docs]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import readme_table  # noqa: E402  (bench/readme_table.py)
import training  # noqa: E402  (bench/training.py)
import yaml  # noqa: E402
from kubernetes import client, config  # noqa: E402

from conformance import trainer, training_operator  # noqa: E402
from conformance.kube import Kube  # noqa: E402
from mpi_controller.engine.pods import POD_CODEC, slim_pod  # noqa: E402
from tests.mpijobs import GROUP, PLURAL, VERSION, small_job  # noqa: E402
from tests.processes import OperatorProcess, ProcSampler, compile_package, free_port, http_get  # noqa: E402
from tests.support import Cluster as TestCluster  # noqa: E402
from tests.webhooks import serving_webhooks  # noqa: E402

RESULTS = REPO / "bench-results"
MPI_WORKLOADS = ("burst", "steady", "wide", "arrival")
WORKLOADS = (*MPI_WORKLOADS, *training.KINDS, training.TRAINJOB.workload, "scale")
# ``scale`` (bench/scale.py: ~22,000 pods, no reference operator) runs only when named.
DEFAULT_WORKLOADS = tuple(w for w in WORKLOADS if w != "scale")
JOB_ROLE = "training.kubeflow.org/job-role"
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
# The job kinds the observer follows: plural -> kind.
JOB_KINDS = {PLURAL: "MPIJob", **{k.plural: k.kind for k in training.KINDS.values()},
             training.TRAINJOB.plural: training.TRAINJOB.kind}
CHILD_RESOURCES = ("pods", "jobs", "services", "configmaps", "secrets", "podgroups",
                   "horizontalpodautoscalers", "jobsets", *JOB_KINDS)
# The condition that says a job succeeded: Succeeded, a TrainJob's Complete.
SUCCESS = ("Succeeded", training.TRAINJOB.success)
# The reference operator of each workload, and how its column is headed.
REFERENCES = {"go": "Go (mpi-operator v0.8.2)", "training-operator": "training-operator v1.9.2",
              "trainer": "Kubeflow Trainer v2.3.0"}
REFERENCE_OF = {**{w: "go" for w in MPI_WORKLOADS},
                **{w: "training-operator" for w in training.KINDS},
                training.TRAINJOB.workload: "trainer"}
CLK_TCK = os.sysconf("SC_CLK_TCK")
# The name of every marker request (:meth:`Cluster.marker`); all are left out of the counts.
MARKER_PREFIX = "bench-marker-"
Obj = dict[str, Any]


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def exit_on_sigterm() -> None:
    """Make SIGTERM end the program as Ctrl-C does: ``SystemExit(143)`` raised in the main
    thread, so the context managers and ``finally`` blocks put the cluster back (the MPIJob
    CRD's conversion webhook, the run's namespace, the controller) instead of the process
    dying with them undone (a CRD left converting through a webhook that is gone stalls every
    later namespace deletion and list of MPIJobs)."""
    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, _exit)


def wait_until(probe: Callable[[], Any], *, timeout: float, what: str,
               interval: float = 0.2) -> Any:
    """Poll ``probe`` until truthy; return its value, or None after ``timeout`` (logged)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            log(f"timed out after {timeout:.0f}s waiting for {what}")
            return None
        time.sleep(interval)


def percentiles(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "p50": None, "p90": None, "p99": None, "max": None}
    xs = sorted(values)

    def q(p: float) -> float:
        return round(xs[min(len(xs) - 1, max(0, math.ceil(p * len(xs)) - 1))], 3)  # nearest rank

    return {"n": len(xs), "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": round(xs[-1], 3)}


def censored_percentiles(values: list[float], bounds: list[float]
                         ) -> tuple[dict[str, float | int | None], list[str]]:
    """Nearest-rank percentiles over every job, ``values`` the latencies measured and
    ``bounds`` lower bounds of the ones not reached (for a job not yet there when the harness
    stopped waiting: the time since its create). Returns the figures (``n``: the measured
    ones, ``of``: all, when some were not reached) and the keys whose figure is a lower bound
    only: a rank is exact when it falls on a measured value under every bound (each job not
    reached then lies above it); otherwise the figure is that rank of values and bounds
    together, which no true figure is under. Without bounds: :func:`percentiles`, none."""
    if not bounds:
        return percentiles(values), []
    both = sorted([(v, True) for v in values] + [(b, False) for b in bounds])
    lowest = min(bounds)
    out: dict[str, float | int | None] = {"n": len(values), "of": len(both)}
    not_reached = []
    for key, p in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)):
        value, measured = both[min(len(both) - 1, max(0, math.ceil(p * len(both)) - 1))]
        if not (measured and value < lowest):
            not_reached.append(key)
        out[key] = round(value, 3)
    return out, not_reached


def ts(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


# -- cluster access -------------------------------------------------------------------------


class Cluster:
    def __init__(self, state: Path) -> None:
        self.state = state
        self.admin_kubeconfig = state / "kubeconfig"
        self.controller_kubeconfig = state / "kubeconfig-controller"
        self.audit_log = state / "logs" / "audit.log"
        self.api = self._client(self.admin_kubeconfig, pool=64)
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)

    @staticmethod
    def _client(path: Path, pool: int) -> Any:
        cfg = client.Configuration()
        config.load_kube_config(config_file=str(path), client_configuration=cfg)
        cfg.connection_pool_maxsize = pool
        return client.ApiClient(cfg)

    def raw_get(self, path: str, query: list[tuple[str, str]], *,
                timeout: tuple[float, float]) -> Any:
        """A GET whose body is read by the caller (a urllib3 response under ``.response``)."""
        method, url, headers, body, post = self.api.param_serialize(
            "GET", path, query_params=query, auth_settings=["BearerToken"])
        resp = self.api.call_api(method, url, header_params=headers, body=body,
                                 post_params=post, _request_timeout=timeout)
        if resp.status != 200:
            raise client.ApiException(status=resp.status, reason=resp.reason)
        return resp

    def create_namespace(self, name: str) -> None:
        self.core.create_namespace({"metadata": {"name": name}})

    def delete_namespace(self, name: str, *, timeout: float = 900) -> float:
        started = time.monotonic()
        # The MPIJobs first, through the stored version (the namespace controller would list
        # them through v1, which needs the conversion webhook).
        with contextlib.suppress(client.ApiException):
            self.custom.delete_collection_namespaced_custom_object(GROUP, VERSION, name, PLURAL)
        with contextlib.suppress(client.ApiException):
            self.core.delete_namespace(name)

        def gone() -> bool:
            try:
                self.core.read_namespace(name)
            except client.ApiException as err:
                return err.status == 404
            return False

        last_unblock = 0.0

        def gone_or_unblock() -> bool:
            nonlocal last_unblock
            if gone():
                return True
            if time.monotonic() - last_unblock > 5:
                last_unblock = time.monotonic()
                self._unblock_pods(name)
                self._unblock_runtimes(name)
            return False

        wait_until(gone_or_unblock, timeout=timeout, what=f"namespace {name} to be deleted",
                   interval=1.0)
        return round(time.monotonic() - started, 1)

    def _unblock_pods(self, namespace: str) -> None:
        """Running Job pods keep the Job controller's tracking finalizer while their namespace
        is deleted (no kubelet ends them): clear it on pods already being deleted."""
        try:  # raw JSON: model objects for thousands of pods cost minutes of CPU
            resp = self.raw_get(f"/api/v1/namespaces/{namespace}/pods", [], timeout=(5, 120))
            pods = json.loads(resp.read())["items"]
        except (client.ApiException, OSError, ValueError):
            return
        for pod in pods:
            meta = pod["metadata"]
            if meta.get("deletionTimestamp") and meta.get("finalizers"):
                with contextlib.suppress(client.ApiException):
                    self.core.patch_namespaced_pod(
                        meta["name"], namespace, {"metadata": {"finalizers": None}})

    def _unblock_runtimes(self, namespace: str) -> None:
        """Trainer's finalizer on a TrainingRuntime in use outlives its TrainJobs when the
        manager has stopped before the namespace is deleted: clear it."""
        group, version = training.TRAINJOB.api_version.split("/")
        with contextlib.suppress(client.ApiException):
            for rt in self.custom.list_namespaced_custom_object(
                    group, version, namespace, "trainingruntimes")["items"]:
                if rt["metadata"].get("finalizers"):
                    self.custom.patch_namespaced_custom_object(
                        group, version, namespace, "trainingruntimes", rt["metadata"]["name"],
                        {"metadata": {"finalizers": None}})

    def create_job(self, namespace: str, body: Obj) -> float:
        """Create a job (its kind's plural from the body); returns the wall time just before
        the request was sent."""
        group, version = body["apiVersion"].split("/")
        plural = next(p for p, k in JOB_KINDS.items() if k == body["kind"])
        sent = time.time()
        self.custom.create_namespaced_custom_object(group, version, namespace, plural, body)
        return sent

    def marker(self) -> tuple[str, float]:
        """A request as the controller's user that closes the audit window."""
        name = f"{MARKER_PREFIX}{uuid.uuid4().hex[:8]}"
        api = self._client(self.controller_kubeconfig, pool=1)
        sent = time.time()
        with contextlib.suppress(client.ApiException):
            client.CoreV1Api(api).read_namespaced_config_map(name, "default")
        api.close()
        return name, sent

    def prepare_go_operator(self) -> None:
        """The Go operator's lock namespace exists and no earlier run's Lease blocks it (it
        does not release its Lease on exit)."""
        with contextlib.suppress(client.ApiException):
            self.core.create_namespace({"metadata": {"name": "mpi-operator"}})
        with contextlib.suppress(client.ApiException):
            client.CoordinationV1Api(self.api).delete_namespaced_lease("mpi-operator",
                                                                       "mpi-operator")

    def ensure_addon(self, addon: str) -> None:
        """``addon`` running on this cluster (``hack/local-cluster.sh up --addons``: started
        when it is not; the earlier workloads ran without it)."""
        subprocess.run(["bash", str(REPO / "hack" / "local-cluster.sh"), "up", "--addons", addon],
                       check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "MPI_CONTROLLER_CLUSTER_DIR": str(self.state)})

    def component_cpu(self) -> dict[str, float]:
        """CPU seconds so far of each control-plane process (from the cluster's pid files)."""
        out: dict[str, float] = {}
        for pidfile in sorted((self.state / "pids").glob("*.pid")):
            try:
                stat = Path(f"/proc/{pidfile.read_text().strip()}/stat").read_text()
            except (OSError, ValueError):
                continue
            fields = stat.rsplit(")", 1)[1].split()
            out[pidfile.stem] = (int(fields[11]) + int(fields[12])) / CLK_TCK
        return out

    def versions(self) -> dict[str, str]:
        info = client.VersionApi(self.api).get_code()
        return {"kubernetes": info.git_version}


# -- observer -------------------------------------------------------------------------------


@dataclass
class JobTrack:
    needed: int  # child objects that mean "every child exists" (training.children_needed)
    created: float | None = None
    first_seen: float | None = None
    children: set[str] = field(default_factory=set)
    children_at: float | None = None
    running_at: float | None = None
    succeeded_at: float | None = None
    failed_at: float | None = None

    @property
    def running_or_done_at(self) -> float | None:
        """The first of Running, Succeeded and Failed seen (a job never seen Running: its
        finish)."""
        seen = [at for at in (self.running_at, self.succeeded_at, self.failed_at)
                if at is not None]
        return min(seen) if seen else None


class Observer:
    """Raw watches of the jobs, pods, Jobs, Services, ConfigMaps and Secrets in one namespace;
    records the first sighting of every object and of each job's conditions."""

    PATHS = {
        "mpijobs": f"/apis/{GROUP}/{VERSION}/namespaces/{{ns}}/{PLURAL}",
        **{k.plural: f"/apis/{k.api_version}/namespaces/{{ns}}/{k.plural}"
           for k in training.KINDS.values()},
        "trainjobs": f"/apis/{training.TRAINJOB.api_version}/namespaces/{{ns}}/trainjobs",
        "jobsets": "/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets",
        "pods": "/api/v1/namespaces/{ns}/pods",
        "jobs": "/apis/batch/v1/namespaces/{ns}/jobs",
        "services": "/api/v1/namespaces/{ns}/services",
        "configmaps": "/api/v1/namespaces/{ns}/configmaps",
        "secrets": "/api/v1/namespaces/{ns}/secrets",
    }

    MPI_KINDS = ("mpijobs", "pods", "jobs", "services", "configmaps", "secrets")

    def __init__(self, cluster: Cluster, namespace: str, *, kinds: tuple[str, ...] | None = None
                 ) -> None:
        self.cluster = cluster
        self.namespace = namespace
        # By default an MPIJob workload's kinds: the TrainJob and JobSet CRDs may be absent
        # (hack/install-crd.sh installs neither), and a LIST of a missing kind is a 404.
        self.kinds = kinds or self.MPI_KINDS
        self.lock = threading.Lock()
        self.jobs: dict[str, JobTrack] = {}
        self.first_seen: dict[str, float] = {}
        self.live_workers: set[str] = set()
        self.events = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def expect(self, name: str, needed: int) -> JobTrack:
        with self.lock:
            return self.jobs.setdefault(name, JobTrack(needed))

    def start(self) -> None:
        for kind in self.kinds:
            rv = self._list_rv(kind)
            thread = threading.Thread(target=self._run, args=(kind, rv), daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()

    def _list_rv(self, kind: str) -> str:
        path = self.PATHS[kind].format(ns=self.namespace)
        resp = self.cluster.raw_get(path, [("limit", "1")], timeout=(5, 30))
        return str(json.loads(resp.read())["metadata"]["resourceVersion"])

    def _run(self, kind: str, rv: str) -> None:
        path = self.PATHS[kind].format(ns=self.namespace)
        while not self._stop.is_set():
            try:
                resp = self.cluster.raw_get(
                    path, [("watch", "true"), ("resourceVersion", rv),
                           ("allowWatchBookmarks", "true"), ("timeoutSeconds", "30")],
                    timeout=(5, 40))
                for line in resp.response:
                    if self._stop.is_set():
                        break
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    obj = event.get("object") or {}
                    rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                    if event.get("type") == "ERROR":
                        rv = self._list_rv(kind)  # lost events are only first sightings missed
                        break
                    if event.get("type") != "BOOKMARK":
                        self._seen(kind, event["type"], obj, time.time())
                resp.response.release_conn()
            except Exception as err:  # transport hiccup: resume from the last resourceVersion
                if self._stop.is_set():
                    return
                log(f"watch {kind}: {type(err).__name__}: {err}; resuming")
                time.sleep(0.5)

    def _seen(self, kind: str, etype: str, obj: Obj, now: float) -> None:
        meta = obj.get("metadata") or {}
        name = meta.get("name", "")
        with self.lock:
            self.events += 1
            key = f"{kind}/{name}"
            self.first_seen.setdefault(key, now)
            if kind in JOB_KINDS:
                track = self.jobs.setdefault(name, JobTrack(training.children_needed(obj)))
                if track.first_seen is None:
                    track.first_seen = now
                for cond in (obj.get("status") or {}).get("conditions") or []:
                    if cond.get("status") != "True":
                        continue
                    if cond.get("type") == "Running" and track.running_at is None:
                        track.running_at = now
                    elif cond.get("type") in SUCCESS and track.succeeded_at is None:
                        track.succeeded_at = now
                    elif cond.get("type") == "Failed" and track.failed_at is None:
                        track.failed_at = now
                return
            labels = meta.get("labels") or {}
            if kind == "pods" and labels.get(JOB_ROLE) == "worker":  # an MPIJob's worker
                if etype == "DELETED" or meta.get("deletionTimestamp"):
                    self.live_workers.discard(name)
                else:
                    self.live_workers.add(name)
            owner = next((ref.get("name") for ref in meta.get("ownerReferences") or []
                          if ref.get("controller") and ref.get("kind") in JOB_KINDS.values()),
                         None)
            if not owner:
                return
            track = self.jobs.setdefault(owner, JobTrack(0))
            track.children.add(key)
            if track.children_at is None and track.needed and \
                    len(track.children) >= track.needed:
                track.children_at = now

    def snapshot(self) -> dict[str, JobTrack]:
        with self.lock:
            return dict(self.jobs)

    def count(self, pred: Callable[[JobTrack], bool]) -> int:
        with self.lock:
            return sum(1 for t in self.jobs.values() if pred(t))


# -- controller process ---------------------------------------------------------------------


def go_operator_binary() -> Path:
    """The reference mpi-operator built (or reused) by hack/reference-operators.sh."""
    script = REPO / "hack" / "reference-operators.sh"
    subprocess.run(["bash", str(script), "build", "mpi-operator"], check=True)
    out = subprocess.run(["bash", str(script), "bin-dir", "mpi-operator"], check=True,
                         capture_output=True, text=True)
    return Path(out.stdout.strip()) / "mpi-operator"


# Each operator's own log line for "caches synced, workers started": ours logs it as its
# manager starts the controllers, once every informer has synced (``caches synced; starting
# controllers``, mpi_controller/runtime/manager.py), the Go operator right after starting its
# workers, once ``cache.WaitForCacheSync`` returned (``Started workers``, mpi-operator
# v0.8.2 pkg/controller/mpi_job_controller.go, ``Run``). Both wait for their caches by polling
# them every 100 ms.
SYNCED_LINES = {"ours": "caches synced; starting controllers", "go": "Started workers"}
# klog's header: severity, MMDD, local time to the microsecond, thread id, file:line.
KLOG_HEADER = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) +\d+ [^\]]+\] ")


def synced_line_time(log_text: str, operator: str, *, year: int) -> float | None:
    """The wall time (epoch seconds) in ``operator``'s own :data:`SYNCED_LINES` line of
    ``log_text``: the ``timestamp`` of our JSON line, the header of the Go operator's klog
    line (local time, no year: ``year`` supplies it); None without such a line."""
    marker = SYNCED_LINES.get(operator)
    if marker is None:
        return None
    for line in log_text.splitlines():
        if marker not in line:
            continue
        if operator == "ours":
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            stamp = entry.get("timestamp") if isinstance(entry, dict) else None
            if entry.get("event") == marker and isinstance(stamp, str):
                return ts(stamp)
            continue
        m = KLOG_HEADER.match(line)
        if m and line[m.end():].rstrip() == marker:
            month, day, hour, minute, second, micro = map(int, m.groups())
            return datetime(year, month, day, hour, minute, second, micro).timestamp()
    return None


def first_quiet(samples: list[tuple[float, float, int]], since: float, *, window: float = 1.0,
                below: float = 0.05) -> float | None:
    """The first sample time ``t0 >= since`` from which the CPU of ``samples`` ((wall, cpu
    seconds, rss) in time order) stays under ``below`` of a core over the next ``window``
    seconds (to the first sample at least ``window`` later); None before such a window."""
    xs = [s for s in samples if s[0] >= since]
    for i, (t0, c0, _) in enumerate(xs):
        j = next((k for k in range(i, len(xs)) if xs[k][0] - t0 >= window), None)
        if j is None:
            return None
        if (xs[j][1] - c0) / (xs[j][0] - t0) < below:
            return t0
    return None


class ControllerProcess(OperatorProcess):
    """The measured operator as a child process (:class:`tests.processes.OperatorProcess`),
    sampled every 0.2 s from /proc (:class:`tests.processes.ProcSampler`): ``mpi-controller
    run`` (``operator="ours"``, ``--enable-scheme <scheme>``, ready on ``/readyz``), the Go
    mpi-operator (``"go"``, ready once it logs ``Started workers``) or training-operator
    (``"training-operator"``, ``--enable-scheme <scheme>``, ready once it logs ``Starting
    workers``)."""

    def __init__(self, cluster: Cluster, *, qps: float, burst: int, threadiness: int,
                 log_path: Path, extra: tuple[str, ...] = (), operator: str = "ours",
                 scheme: str = "mpijob") -> None:
        self.health_port = free_port()
        self.operator = operator
        self.private_tmp: Path | None = None
        threads = "--controller-threads" if operator in ("training-operator", "trainer") \
            else "--threadiness"
        self.flags = ["--kube-api-qps", f"{qps:g}", "--kube-api-burst", str(burst),
                      threads, str(threadiness), *extra]
        env: dict[str, str] = {}
        if operator == "go":
            # Leader election is always on there: its Lease must exist to be taken at once.
            cluster.prepare_go_operator()
            argv = [str(go_operator_binary()),
                    "--kubeConfig", str(cluster.controller_kubeconfig), *self.flags]
        elif operator == "training-operator":
            self.flags += ["--enable-scheme", scheme]
            argv = self._training_operator(cluster, scheme, log_path)
            env = {"KUBECONFIG": str(cluster.controller_kubeconfig)}
        elif operator == "trainer":
            # --enable-scheme is ours (the manager serves TrainJob alone; its configuration
            # leaves the flag out), the rest become its configuration file.
            self.flags += ["--enable-scheme", scheme]
            argv = self._trainer(cluster, log_path)
            env = {"KUBECONFIG": str(cluster.controller_kubeconfig)}
        else:
            self.flags += ["--enable-scheme", scheme, "--no-leader-elect",
                           "--health-port", str(self.health_port), "--log-format", "json"]
            compile_package(REPO / "mpi_controller")  # as installed: no compiling at each start
            argv = [str(REPO / ".venv" / "bin" / "mpi-controller"), "run",
                    "--kubeConfig", str(cluster.controller_kubeconfig), *self.flags]
            if os.environ.get("BENCH_CPROFILE"):
                # Exact call counts (syncs, requests, watch events) for the CPU accounting;
                # cProfile's own overhead makes its times only relative.
                # BENCH_CPROFILE=cpu: timed by the CPU clock (bench/cpu_cprofile.py).
                out = str(log_path.with_suffix(".cprofile"))
                argv[:1] = ([str(REPO / ".venv" / "bin" / "python"),
                             str(REPO / "bench" / "cpu_cprofile.py"), out]
                            if os.environ["BENCH_CPROFILE"] == "cpu" else
                            [str(REPO / ".venv" / "bin" / "python"), "-m", "cProfile", "-o", out,
                             "-m", "mpi_controller"])
        super().__init__(operator, argv, log_path, env=env,
                         ready_marker="" if operator in ("ours", "trainer") else
                         "Started workers" if operator == "go" else training_operator.READY)
        log_path.unlink(missing_ok=True)
        self.start()
        self.started = self.started_at
        self.sampler = ProcSampler(self.pid)
        self.profiler: subprocess.Popen[bytes] | None = None
        spy = Path(shutil.which("py-spy") or REPO / ".venv" / "bin" / "py-spy")
        if os.environ.get("BENCH_PROFILE") and spy.exists():
            # Collapsed stacks (flamegraph.pl / speedscope input); costs the controller ~5% CPU
            # at the default 50 Hz (BENCH_PROFILE_RATE: more samples for a short run).
            rate = os.environ.get("BENCH_PROFILE_RATE", "50")
            self.profiler = subprocess.Popen(
                [str(spy), "record", "--pid", str(self.pid), "--rate", rate,
                 "--nonblocking", "--format", "raw",
                 "--output", str(log_path.with_suffix(".profile.txt"))],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def _training_operator(self, cluster: Cluster, scheme: str, log_path: Path) -> list[str]:
        """training-operator's argv (its certificates ready, in a private /tmp; its CRD
        installed)."""
        kube = Kube(cluster.admin_kubeconfig)
        subprocess.run(["bash", str(REPO / "hack" / "reference-operators.sh"), "build",
                        "training-operator"], check=True)
        files = training_operator.ready_certificates(
            kube, cluster.controller_kubeconfig, log_path.with_suffix(".certificates.log"))
        training_operator.prepare(kube, [scheme])
        self.private_tmp = Path(tempfile.mkdtemp(prefix="training-operator-tmp-"))
        training_operator.write_certificates(self.private_tmp, files)
        return training_operator.command(self.private_tmp, self.flags)

    def _trainer(self, cluster: Cluster, log_path: Path) -> list[str]:
        """Trainer's manager's argv (its certificates and configuration file in a private /tmp;
        its CRDs installed by the workload), as :class:`conformance.trainer.TrainerProcess`
        runs it."""
        kube = Kube(cluster.admin_kubeconfig)
        subprocess.run(["bash", str(REPO / "hack" / "reference-operators.sh"), "build",
                        "trainer"], check=True)
        files = trainer.ready_certificates(kube, cluster.controller_kubeconfig,
                                           log_path.with_suffix(".certificates.log"))
        self.private_tmp = Path(tempfile.mkdtemp(prefix="trainer-tmp-"))
        training_operator.write_certificates(self.private_tmp, files)
        config = trainer.configuration(self.flags, webhook_port=free_port(),
                                       metrics_port=free_port(), health_port=free_port())
        (self.private_tmp / "config.yaml").write_text(yaml.safe_dump(config))
        return trainer.command(self.private_tmp, Path("/tmp/config.yaml"))

    @property
    def samples(self) -> list[tuple[float, float, int]]:
        """(wall, cpu seconds, rss bytes) every 0.2 s."""
        return self.sampler.samples

    @property
    def peak_rss(self) -> int:
        return self.sampler.peak_rss

    def read(self) -> tuple[float, int, int] | None:
        """(cpu seconds, rss bytes, peak rss bytes) of the controller, None once it exited."""
        return self.sampler.read()

    def cpu(self) -> float:
        return self.sampler.cpu()

    def switches(self) -> tuple[int, int] | None:
        """(voluntary, involuntary) context switches of the controller's threads so far
        (:meth:`tests.processes.ProcSampler.switches_pid`); None once it exited."""
        return ProcSampler.switches_pid(self.pid)

    def ready(self) -> bool:
        if self.operator == "trainer":
            return trainer.is_ready(self.log())
        if self.operator != "ours":  # its log says when workers start
            return super().ready()
        return http_get(self.health_port, "/readyz")[0] == 200

    def wait_ready(self, timeout: float = 300) -> float | None:
        """Seconds from start to /readyz 200 (informers synced), polled every 50 ms."""
        if wait_until(lambda: self.ready() or self.proc.poll() is not None,
                      timeout=timeout, what="controller /readyz", interval=0.05) is None:
            return None
        if self.proc.poll() is not None:
            raise RuntimeError(f"controller exited with {self.proc.returncode}; "
                               f"see {self.log_path}")
        return round(time.time() - self.started, 3)

    def synced_logged_at(self, timeout: float = 10) -> float | None:
        """Wall time in the operator's own "caches synced, workers started" log line
        (:func:`synced_line_time`), waiting up to ``timeout`` s for it; None without one."""
        if self.operator not in SYNCED_LINES:
            return None
        year = time.localtime(self.started).tm_year
        return wait_until(lambda: synced_line_time(self.log(), self.operator, year=year),
                          timeout=timeout, what="the synced log line", interval=0.05)

    def wait_idle(self, since: float, *, window: float = 1.0, below: float = 0.05,
                  timeout: float = 600) -> float | None:
        """Wall time when the controller's CPU first stays under ``below`` of a core for
        ``window`` seconds (after ``since``; :func:`first_quiet`)."""
        return wait_until(lambda: first_quiet(self.samples, since, window=window, below=below),
                          timeout=timeout, what="controller idle", interval=0.5)

    def peak_core_fraction(self, start: float, end: float, window: float = 1.0) -> float:
        xs = [s for s in self.samples if start <= s[0] <= end]
        peak = 0.0
        j = 0
        for i in range(len(xs)):
            while j < len(xs) and xs[j][0] - xs[i][0] < window:
                j += 1
            if j >= len(xs):
                break
            peak = max(peak, (xs[j][1] - xs[i][1]) / (xs[j][0] - xs[i][0]))
        return round(peak, 3)

    def stop(self, timeout: float = 30) -> int | None:
        if self.profiler is not None:
            self.profiler.send_signal(signal.SIGINT)
            try:
                self.profiler.wait(30)
            except subprocess.TimeoutExpired:
                self.profiler.kill()
        code = super().stop(timeout)
        self.sampler.stop()
        if self.private_tmp is not None:
            shutil.rmtree(self.private_tmp, ignore_errors=True)
        return code

    def series(self, start: float) -> dict[str, list[float]]:
        xs = self.samples[:: max(1, len(self.samples) // 400)]
        return {"t": [round(s[0] - start, 2) for s in xs],
                "cpu_s": [round(s[1], 3) for s in xs],
                "rss_mb": [round(s[2] / 2**20, 1) for s in xs]}


# -- audit log ------------------------------------------------------------------------------


class Audit:
    """Requests of one user from the kube-apiserver audit log, one entry per request."""

    def __init__(self, path: Path, user: str = "mpi-controller") -> None:
        self.path = path
        self.user = user
        self.offset = path.stat().st_size if path.exists() else 0

    def _entries(self) -> Iterator[Obj]:
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            f.seek(self.offset if self.path.stat().st_size >= self.offset else 0)
            for line in f:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue

    def wait_marker(self, marker: str, timeout: float = 120) -> bool:
        def found() -> bool:
            return any((e.get("objectRef") or {}).get("name") == marker for e in self._entries())
        return bool(wait_until(found, timeout=timeout, what="audit marker", interval=1.0))

    def requests(self, start: float, marker: str) -> list[Obj]:
        """Each request once (watches at ResponseStarted, others at ResponseComplete)."""
        seen: dict[str, Obj] = {}
        for e in self._entries():
            if (e.get("user") or {}).get("username") != self.user:
                continue
            ref = e.get("objectRef") or {}
            if ref.get("name") == marker or str(ref.get("name", "")).startswith(MARKER_PREFIX):
                continue
            if ts(e["requestReceivedTimestamp"]) < start:
                continue
            stage = e.get("stage")
            if e.get("verb") == "watch":
                if stage != "ResponseStarted":
                    continue
            elif stage not in ("ResponseComplete", "Panic"):
                continue
            seen.setdefault(e["auditID"], e)
        return sorted(seen.values(), key=lambda e: e["requestReceivedTimestamp"])


def resource_of(e: Obj) -> str:
    ref = e.get("objectRef") or {}
    res = ref.get("resource", "?")
    return f"{res}/{ref['subresource']}" if ref.get("subresource") else res


def summarize_requests(entries: list[Obj], namespace: str, jobs: int) -> Obj:
    by = Counter(f"{e['verb']} {resource_of(e)}" for e in entries)
    ns_writes = [e for e in entries if e["verb"] in WRITE_VERBS
                 and (e.get("objectRef") or {}).get("namespace") == namespace]
    child = [e for e in ns_writes
             if (e.get("objectRef") or {}).get("resource") in CHILD_RESOURCES]
    events = [e for e in ns_writes if (e.get("objectRef") or {}).get("resource") == "events"]
    codes = Counter(str((e.get("responseStatus") or {}).get("code")) for e in entries)
    out: Obj = {
        "total": len(entries),
        "by_verb_resource": dict(sorted(by.items())),
        "response_codes": dict(sorted(codes.items())),
        "writes_in_namespace": dict(sorted(Counter(
            f"{e['verb']} {resource_of(e)}" for e in ns_writes).items())),
        "get_list": sum(1 for e in entries if e["verb"] in ("get", "list")),
    }
    if jobs:
        out["child_and_status_writes_per_job"] = round(len(child) / jobs, 2)
        out["event_writes_per_job"] = round(len(events) / jobs, 2)
    return out


# -- workloads ------------------------------------------------------------------------------


@dataclass
class Settings:
    cluster: Cluster
    qps: float
    burst: int
    threadiness: int
    scale: float
    extra: tuple[str, ...] = ()
    operator: str = "ours"
    # Seconds a lifecycle workload waits for its jobs (--lifecycle-timeout) instead of its
    # own timeout; None: the workload's own.
    timeout: float | None = None

    def wait_for(self, default: float) -> float:
        """The lifecycle timeout: :attr:`timeout` when set, else the workload's ``default``."""
        return default if self.timeout is None else self.timeout

    def n(self, default: int, minimum: int = 1) -> int:
        return max(minimum, round(default * self.scale))


def _job(name: str, workers: int, runs: str) -> Obj:
    return small_job(name, workers=workers, launcher_runs=runs,
                     run_policy={"cleanPodPolicy": "Running"})


def min_writes(workers: int) -> int:
    """Service + ConfigMap + Secret + workers + launcher creates, the ConfigMap update, status
    writes for Created, Running and Succeeded, and the worker deletes (cleanPodPolicy Running)."""
    return 3 + workers + 1 + 1 + 3 + workers


def target(figure: str, value: Any, goal: str, met: bool | None) -> Obj:
    return {"figure": figure, "value": value, "target": goal, "met": met}


class Run:
    """One workload: namespace, observer, controller, audit window; cleans up on exit."""

    def __init__(self, s: Settings, workload: str, *, kinds: tuple[str, ...] | None = None,
                 start_controller: bool = True, scheme: str = "mpijob") -> None:
        self.s = s
        self.workload = workload
        self.scheme = scheme
        self.namespace = f"bench-{workload}-{uuid.uuid4().hex[:5]}"
        self.kinds = kinds
        self.start_controller = start_controller
        self.controller: ControllerProcess | None = None
        self.audit = Audit(s.cluster.audit_log)
        self.result: Obj = {"workload": workload, "namespace": self.namespace}

    def __enter__(self) -> Run:
        self.s.cluster.create_namespace(self.namespace)
        self.observer = Observer(self.s.cluster, self.namespace, kinds=self.kinds)
        self.observer.start()
        if self.start_controller:
            self.controller = self.new_controller()
        return self

    def new_controller(self, *, qps: float | None = None, burst: int | None = None,
                       threadiness: int | None = None, tag: str = "",
                       extra: tuple[str, ...] = (), operator: str | None = None
                       ) -> ControllerProcess:
        operator = operator or self.s.operator
        ctl = ControllerProcess(
            self.s.cluster, qps=qps or self.s.qps, burst=burst or self.s.burst,
            threadiness=threadiness or self.s.threadiness, extra=extra or self.s.extra,
            log_path=RESULTS / f"{self.workload}{tag}{_suffix(operator)}-controller.log",
            operator=operator, scheme=self.scheme)
        ready = ctl.wait_ready()
        log(f"controller{tag} pid {ctl.proc.pid} ready after {ready}s")
        return ctl

    def event_figures(self, ctl: ControllerProcess) -> Obj:
        """The Events on the jobs once the operator has written them all (their number held
        for 5 s; the scheduler's and KWOK's on pods left out): how many Event objects, the
        sum of their counts (occurrences recorded), and, for ours, the events its recorder
        dropped (log lines ``event queue full``)."""
        def on_jobs() -> list[Any]:
            return [e for e in self.s.cluster.core.list_namespaced_event(self.namespace).items
                    if e.involved_object.kind in JOB_KINDS.values()]
        # The operator's event writer may still be behind: wait until the count holds 5 s.
        items, since, deadline = on_jobs(), time.monotonic(), time.monotonic() + 120
        while time.monotonic() - since < 5 and time.monotonic() < deadline:
            time.sleep(1)
            now = on_jobs()
            if len(now) != len(items):
                items, since = now, time.monotonic()
        out: Obj = {"objects": len(items), "occurrences": sum(e.count or 1 for e in items)}
        if ctl.operator == "ours":
            out["dropped"] = ctl.log().count("event queue full")
        return out

    def close_window(self, start: float, jobs: int) -> list[Obj]:
        marker, _ = self.s.cluster.marker()
        self.audit.wait_marker(marker)
        entries = self.audit.requests(start, marker)
        self.result["api_requests"] = summarize_requests(entries, self.namespace, jobs)
        return entries

    def __exit__(self, *exc: object) -> None:
        # The controller is stopped and the namespace deleted even when the figures are cut
        # short (SIGTERM or Ctrl-C while the Events settle, an API error).
        try:
            if self.controller is not None:
                try:
                    self.result["events"] = self.event_figures(self.controller)
                finally:
                    self.controller.stop()
        finally:
            self.observer.stop()
            took = self.s.cluster.delete_namespace(self.namespace)
            self.result["namespace_delete_s"] = took
            log(f"{self.workload}: namespace {self.namespace} deleted in {took}s")


def _create_all(s: Settings, namespace: str, bodies: list[Obj], obs: Observer,
                *, rate: float | None = None, pool: int = 32) -> None:
    """Create ``bodies`` at once (rate None) or at ``rate`` per second, from a thread pool."""
    errors: list[str] = []

    def one(body: Obj) -> None:
        track = obs.expect(body["metadata"]["name"], training.children_needed(body))
        try:
            track.created = s.cluster.create_job(namespace, body)
        except client.ApiException as err:
            errors.append(f"{body['metadata']['name']}: {err.status} {err.reason}")

    with ThreadPoolExecutor(pool) as executor:
        start = time.monotonic()
        for i, body in enumerate(bodies):
            if rate:
                delay = start + i / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            executor.submit(one, body)
    if errors:
        log(f"{len(errors)} creates failed, first: {errors[0]}")


def _suffix(operator: str) -> str:
    """File-name suffix of an operator's results: none for ours, ``-go`` for the Go one."""
    return "" if operator == "ours" else f"-{operator}"


def _machine_busy(since: tuple[float, float] | None = None) -> Any:
    """Without ``since``: a (busy, total) jiffies reading of /proc/stat; with it: the cores
    busy on average since that reading (everything on the machine, other users included)."""
    cpu = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    busy, total = sum(cpu) - cpu[3] - cpu[4], sum(cpu)
    if since is None:
        return busy, total
    return (busy - since[0]) / max(total - since[1], 1) * (os.cpu_count() or 1)


QUIET_CORES = 0.35
"""The machine's busy cores (everything on it, averaged over :data:`QUIET_WINDOW`) under which
a measurement may start: an idle local cluster takes ~0.05."""
QUIET_WINDOW = 2.0
QUIET_TIMEOUT = 120.0
"""Seconds a measurement waits at most for a quiet machine; then it starts anyway, saying so."""


def wait_for_quiet(what: str, *, read: Callable[..., Any] = _machine_busy,
                   sleep: Callable[[float], None] = time.sleep,
                   clock: Callable[[], float] = time.monotonic,
                   threshold: float = QUIET_CORES, window: float = QUIET_WINDOW,
                   timeout: float = QUIET_TIMEOUT) -> Obj:
    """Wait until the machine is quiet (busy cores over ``window`` at most ``threshold``) or
    ``timeout`` passed, and say how it was when ``what`` started: ``{"waited_s", "busy_cores",
    "quiet"}``. Work left by what ran before (a namespace of 10,000 pods being deleted, the
    kubelet's and the job controller's follow-ups) otherwise lands in one operator's figures
    and not the other's. ``read``, ``sleep`` and ``clock`` are injected by tests."""
    start = clock()
    while True:
        before = read()
        sleep(window)
        busy = read(before)
        waited = clock() - start
        if busy <= threshold or waited >= timeout:
            quiet = busy <= threshold
            if not quiet or waited > 1.5 * window:
                log(f"{what}: {'quiet' if quiet else 'still busy'} after {waited:.0f}s "
                    f"({busy:.2f} cores busy)")
            return {"waited_s": round(waited, 1), "busy_cores": round(busy, 2), "quiet": quiet}


def _latencies(jobs: dict[str, JobTrack], stopped: float | None = None
               ) -> tuple[Obj, list[str]]:
    """Each job's create -> every child, -> Running, -> Succeeded percentiles and samples,
    and the dotted paths of those figures that are lower bounds only. ``stopped``: the wall
    time the harness stopped waiting when jobs were left unfinished; each job not yet at a
    point then counts as a bound (:func:`censored_percentiles`), except a finished job the
    observer never saw Running and a failed job's success.

    ``t_running`` is over the jobs seen Running only: an operator that misses the Running
    state of some jobs (it syncs them only after they finished) is measured over the others.
    ``t_running_or_done`` is over every job: create -> its status first said Running or the
    job finished (Succeeded or Failed), so a job never seen Running counts at its finish."""
    out: Obj = {}
    not_reached: list[str] = []
    for key, attr in (("t_children", "children_at"), ("t_running", "running_at"),
                      ("t_running_or_done", "running_or_done_at"),
                      ("t_succeeded", "succeeded_at")):
        values, bounds = [], []
        for t in jobs.values():
            if t.created is None:
                continue
            at = getattr(t, attr)
            if at is not None:
                values.append(at - t.created)
            elif stopped is not None and not t.failed_at and (
                    attr != "running_at" or not t.succeeded_at):  # finished unseen Running
                bounds.append(stopped - t.created)
        figures, bound_keys = censored_percentiles(values, bounds)
        out[key] = {**figures, "samples": _round(values)}
        not_reached += [f"latency_s.{key}.{k}" for k in bound_keys]
    return out, not_reached


def _round(xs: list[float]) -> list[float]:
    return [round(x, 3) for x in xs]


def _lifecycle(s: Settings, run: Run, *, jobs: int, workers: int, runs: str,
               rate: float | None, timeout: float, bodies: list[Obj] | None = None
               ) -> tuple[float, float, float]:
    """Create ``jobs`` jobs (``bodies``, default MPIJobs of ``workers`` workers and launchers
    running ``runs``), wait until each finished and every MPI worker is gone.
    Returns (start, all children exist, end) wall times."""
    assert run.controller is not None
    obs = run.observer
    bodies = bodies or [_job(f"job-{i:04d}", workers, runs) for i in range(jobs)]
    run.result["quiet_start"] = wait_for_quiet(run.workload)
    start = time.time()
    cpu0 = run.controller.cpu()
    switches0 = run.controller.switches()
    cluster0 = s.cluster.component_cpu()
    machine0 = _machine_busy()
    harness0 = time.process_time()
    _create_all(s, run.namespace, bodies, obs, rate=rate)
    log(f"{run.workload}: created {jobs} jobs in {time.time() - start:.1f}s")
    ctl = run.controller
    deadline = time.monotonic() + timeout  # one timeout for the whole lifecycle
    wait_until(lambda: ctl.proc.poll() is not None
               or obs.count(lambda t: t.children_at is not None) >= jobs,
               timeout=timeout, what="all children", interval=0.1)
    wait_until(lambda: ctl.proc.poll() is not None
               or (obs.count(lambda t: t.succeeded_at or t.failed_at) >= jobs
                   and not obs.live_workers),
               timeout=max(0.0, deadline - time.monotonic()),
               what="jobs finished, workers deleted", interval=0.2)
    end = time.time()
    exit_code = ctl.proc.poll()
    snap = obs.snapshot()
    finished = sum(1 for t in snap.values() if t.succeeded_at or t.failed_at)
    complete = finished >= jobs and not obs.live_workers
    if exit_code is not None:
        # e.g. the Go operator lost its Lease (a loaded machine): what it reached until then
        log(f"{run.workload}: the {ctl.operator} operator exited with {exit_code} "
            f"mid-workload, after {end - start:.0f}s; see {ctl.log_path}")
        run.result["exit_code"] = exit_code
    with_children = [t.children_at for t in snap.values() if t.children_at is not None]
    children_done = max(with_children) if len(with_children) >= jobs else end
    if not complete and exit_code is None:
        log(f"{run.workload}: the {ctl.operator} operator did not finish within {timeout:.0f}s: "
            f"{finished} of {jobs} jobs finished, {len(with_children)} with every child, "
            f"{len(obs.live_workers)} workers left; the figures not reached are lower bounds")
    cpu = run.controller.cpu() - cpu0
    switches1 = run.controller.switches()
    # None when the controller exited mid-workload (its counts went with it).
    voluntary, involuntary = ((switches1[0] - switches0[0], switches1[1] - switches0[1])
                              if switches0 and switches1 else (None, None))
    run.result["control_plane_cores"] = {
        k: round((v - cluster0.get(k, 0.0)) / (end - start), 2)
        for k, v in s.cluster.component_cpu().items()}
    busy = _machine_busy(machine0)
    harness = (time.process_time() - harness0) / (end - start)
    run.result["machine_busy_cores"] = round(busy, 2)
    run.result["harness_cores"] = round(harness, 2)
    # Everything else on the machine (other engineers' clusters and tests, the kernel).
    run.result["other_load_cores"] = round(
        busy - harness - cpu / (end - start) - sum(run.result["control_plane_cores"].values()), 2)
    latency, not_reached = _latencies(snap, None if complete else end)
    run.result.update({
        "jobs": jobs, "workers_per_job": workers, "launcher_runs": runs,
        "complete": complete, "jobs_finished": finished,
        "timeout_s": round(timeout if exit_code is None else end - start),
        "succeeded": sum(1 for t in snap.values() if t.succeeded_at),
        "failed": sum(1 for t in snap.values() if t.failed_at),
        "latency_s": latency,
        "all_children_s": round(children_done - start, 2),
        "lifecycle_wall_s": round(end - start, 2),
        "controller_cpu_s": round(cpu, 2),
        "controller_cpu_ms_per_job": round(cpu * 1000 / jobs, 1),
        # Wake-ups (a thread going to sleep, then woken by I/O or a timer) and preemptions
        # per job: each costs CPU beyond the work itself (caches refilled, the scheduler).
        "controller_wakeups_per_job": None if voluntary is None else round(voluntary / jobs, 1),
        "controller_preemptions_per_job":
            None if involuntary is None else round(involuntary / jobs, 1),
        "controller_cpu_us_per_wakeup": round(cpu * 1e6 / voluntary) if voluntary else None,
        "controller_peak_core_fraction": run.controller.peak_core_fraction(start, end),
        "controller_peak_rss_mb": round(run.controller.peak_rss / 2**20, 1),
        "lower_bounds": [] if complete else unfinished_bounds(
            not_reached, all_children=len(with_children) >= jobs),
    })
    return start, children_done, end


# What a lifecycle that did not finish leaves a lower bound only, besides its latencies: every
# figure that only grows while the jobs go on (wall time, CPU, peak RSS, writes).
UNFINISHED_BOUNDS = ("lifecycle_wall_s", "controller_cpu_s", "controller_cpu_ms_per_job",
                     "controller_peak_rss_mb", "api_requests.child_and_status_writes_per_job",
                     "api_requests.event_writes_per_job", "api_requests.total",
                     "controller_wakeups_per_job", "controller_preemptions_per_job")
# Reported beside a lifecycle's CPU (see _lifecycle): what the CPU per job is spent around.
WAKEUP_FIGURES = ("controller_wakeups_per_job", "controller_preemptions_per_job",
                  "controller_cpu_us_per_wakeup")


def unfinished_bounds(latencies: list[str], *, all_children: bool) -> list[str]:
    """The dotted paths of an unfinished lifecycle's figures that are lower bounds only: its
    latencies not reached, :data:`UNFINISHED_BOUNDS`, and the time until every child exists
    unless every job got its children."""
    return [*latencies, *UNFINISHED_BOUNDS, *([] if all_children else ["all_children_s"])]


# The figure a target grades (its label's words -> the dotted path of the result's figure).
TARGET_FIGURES = (("writes per job", "api_requests.child_and_status_writes_per_job"),
                  ("time until every", "all_children_s"),
                  ("CPU per", "controller_cpu_ms_per_job"),
                  ("peak RSS", "controller_peak_rss_mb"),
                  ("t_children p99", "latency_s.t_children.p99"),
                  ("workers + launcher exist", "all_objects_s"))


def unfinished_targets(res: Obj) -> None:
    """A run that did not finish grades none of its targets; a target whose figure it did
    not reach is marked ``not_reached`` (its value a lower bound)."""
    if res.get("complete") is not False:
        return
    bounds = res.get(readme_table.LOWER_BOUNDS) or []
    for t in res.get("targets", []):
        t["met"] = None
        path = next((p for words, p in TARGET_FIGURES if words in t["figure"]), None)
        t["not_reached"] = path in bounds


def burst(s: Settings) -> Obj:
    jobs, workers = s.n(200), 4
    with Run(s, "burst") as run:
        assert run.controller is not None
        # The Go operator rate-limits every event with per-job exponential backoff: ~10 min.
        start, _, end = _lifecycle(s, run, jobs=jobs, workers=workers, runs="10s", rate=None,
                                   timeout=s.wait_for(900 if s.operator == "ours" else 3600))
        entries = run.close_window(run.controller.started, jobs)
        run.result["series"] = run.controller.series(start)
        run.result["flags"] = run.controller.flags
    res = run.result
    per_job = res["api_requests"].get("child_and_status_writes_per_job")
    needed = jobs * (workers + 4 + 1)  # children creates + the Created status write
    children_target = 1.25 * needed / s.qps
    writes_before = sum(1 for e in entries if e["verb"] in WRITE_VERBS
                        and ts(e["requestReceivedTimestamp"]) <= start + res["all_children_s"])
    res["writes_until_all_children"] = writes_before
    res["targets"] = [
        target("writes per job lifecycle (children + status)", per_job,
               f"<= {min_writes(workers) + 3} (minimum {min_writes(workers)})",
               per_job is not None and per_job <= min_writes(workers) + 3),
        target("time until every child of every job exists (s)", res["all_children_s"],
               f"<= {children_target:.1f} (1.25 x {needed} writes / {s.qps:g} QPS)",
               res["all_children_s"] <= children_target),
        target("controller CPU per 4-worker job lifecycle (ms)",
               res["controller_cpu_ms_per_job"], "<= 50", res["controller_cpu_ms_per_job"] <= 50),
    ]
    unfinished_targets(res)
    del end
    return res


def arrival(s: Settings) -> Obj:
    rate, duration, workers = 5.0, 120 * s.scale, 4
    jobs = max(1, round(rate * duration))
    with Run(s, "arrival") as run:
        assert run.controller is not None
        start, _, _ = _lifecycle(s, run, jobs=jobs, workers=workers, runs="10s", rate=rate,
                                 timeout=s.wait_for(duration + 600))
        run.close_window(run.controller.started, jobs)
        run.result["series"] = run.controller.series(start)
        run.result["flags"] = run.controller.flags
        run.result["rate_per_s"] = rate
    res = run.result
    per_job = res["api_requests"].get("child_and_status_writes_per_job")
    res["targets"] = [
        target("writes per job lifecycle (children + status)", per_job,
               f"<= {min_writes(workers) + 3} (minimum {min_writes(workers)})",
               per_job is not None and per_job <= min_writes(workers) + 3),
        target("t_children p99 (s)", res["latency_s"]["t_children"]["p99"], "(reported)", None),
        target("controller CPU per job lifecycle (ms)", res["controller_cpu_ms_per_job"],
               "<= 50", res["controller_cpu_ms_per_job"] <= 50),
    ]
    unfinished_targets(res)
    return res


def wide(s: Settings) -> Obj:
    workers = s.n(256, minimum=2)
    objects = workers + 1
    with Run(s, "wide") as run:
        assert run.controller is not None
        obs = run.observer
        run.result["quiet_start"] = wait_for_quiet(run.workload)
        cpu0 = run.controller.cpu()
        _create_all(s, run.namespace, [_job("wide", workers, "1h")], obs)
        track = obs.expect("wide", workers + 4)

        def done() -> bool:
            with obs.lock:
                seen = [k for k in track.children if k.startswith(("pods/", "jobs/"))]
            return len(seen) >= objects
        reached = wait_until(done, timeout=300, what="wide: workers and launcher",
                             interval=0.05)
        stopped = time.time()
        assert track.created is not None
        with obs.lock:
            times = sorted(obs.first_seen[k] - track.created for k in track.children
                           if k.startswith(("pods/", "jobs/")))
        # Not all there within the timeout: the time waited, a lower bound.
        took = round(times[-1] if reached else stopped - track.created, 3)
        run.result.update({
            "workers": workers, "objects": objects, "all_objects_s": took,
            "complete": bool(reached), "objects_seen": len(times), "timeout_s": 300,
            "lower_bounds": [] if reached else ["all_objects_s"],
            "first_object_s": round(times[0], 3) if times else None,
            "all_children_s": round(track.children_at - track.created, 3)
            if track.children_at else None,
            "controller_cpu_s": round(run.controller.cpu() - cpu0, 2),
            "controller_peak_rss_mb": round(run.controller.peak_rss / 2**20, 1),
        })
        run.close_window(run.controller.started, 1)
        run.result["flags"] = run.controller.flags
    goal = 1.25 * objects / s.qps
    res = run.result
    res["targets"] = [target(f"all {objects} workers + launcher exist (s)", took,
                             f"<= {goal:.2f} (1.25 x {objects} / {s.qps:g} QPS)",
                             took is not None and took <= goal)]
    unfinished_targets(res)
    return res


def training_burst(kind: training.TrainingKind) -> Callable[[Settings], Obj]:
    """The workload of a training-operator kind: 100 jobs (``--scale``) created at once, each
    ``kind.replicas`` with workers running 10 s; until every job has Succeeded."""
    def run_workload(s: Settings) -> Obj:
        jobs = s.n(100)
        bodies = [kind.job(f"job-{i:04d}", "10s") for i in range(jobs)]
        with Run(s, kind.workload, kinds=(kind.plural, "pods", "services"),
                 scheme=kind.scheme) as run:
            assert run.controller is not None
            start, _, _ = _lifecycle(s, run, jobs=jobs, workers=kind.replicas.get("Worker", 0),
                                     runs="10s", rate=None, timeout=s.wait_for(1800),
                                     bodies=bodies)
            entries = run.close_window(run.controller.started, jobs)
            run.result["series"] = run.controller.series(start)
            run.result["flags"] = run.controller.flags
            run.result["replicas_per_job"] = kind.replicas
        res = run.result
        per_job = res["api_requests"].get("child_and_status_writes_per_job")
        needed = jobs * (kind.children_per_job + 1)  # pods, Services, the Created status
        children_target = 1.25 * needed / s.qps
        res["writes_until_all_children"] = sum(
            1 for e in entries if e["verb"] in WRITE_VERBS
            and ts(e["requestReceivedTimestamp"]) <= start + res["all_children_s"])
        res["targets"] = [
            target("writes per job lifecycle (children + status)", per_job,
                   f"<= {kind.min_writes + 3} (minimum {kind.min_writes})",
                   per_job is not None and per_job <= kind.min_writes + 3),
            target("time until every pod and Service of every job exists (s)",
                   res["all_children_s"],
                   f"<= {children_target:.1f} (1.25 x {needed} writes / {s.qps:g} QPS)",
                   res["all_children_s"] <= children_target),
            target(f"controller CPU per {kind.pods_per_job}-pod job lifecycle (ms)",
                   res["controller_cpu_ms_per_job"], "(reported)", None),
            target("peak RSS (MB)", res["controller_peak_rss_mb"], "(reported)", None),
        ]
        unfinished_targets(res)
        return res
    return run_workload


def trainjob(s: Settings) -> Obj:
    """50 TrainJobs (``--scale``) of 2 nodes on a namespaced ``torch-distributed`` whose pods
    run 10 s, created at once; until every TrainJob is Complete. The CRDs and shipped runtimes
    are installed first (both operators need them to start); the JobSet controller (the
    cluster's ``jobset`` addon) is the same under both."""
    kind = training.TRAINJOB
    jobs = s.n(50)
    s.cluster.ensure_addon("jobset")
    trainer.install(Kube(s.cluster.admin_kubeconfig))
    shipped = yaml.safe_load((REPO / "deploy" / "runtimes" / "torch-distributed.yaml").read_text())
    group, version = kind.api_version.split("/")
    with Run(s, kind.workload, kinds=(kind.plural, "jobsets"), scheme=kind.scheme) as run:
        assert run.controller is not None
        s.cluster.custom.create_namespaced_custom_object(
            group, version, run.namespace, "trainingruntimes", kind.runtime(shipped, "10s"))
        start, _, _ = _lifecycle(s, run, jobs=jobs, workers=kind.nodes, runs="10s", rate=None,
                                 timeout=s.wait_for(1800),
                                 bodies=[kind.job(f"job-{i:04d}") for i in range(jobs)])
        run.close_window(run.controller.started, jobs)
        run.result["series"] = run.controller.series(start)
        run.result["flags"] = run.controller.flags
        run.result["nodes_per_job"] = kind.nodes
    res = run.result
    per_job = res["api_requests"].get("child_and_status_writes_per_job")
    res["targets"] = [
        target("writes per job lifecycle (JobSet + TrainJob status)", per_job,
               f"(reported; minimum {kind.min_writes})", None),
        target("time until every JobSet exists (s)", res["all_children_s"], "(reported)", None),
        target("controller CPU per 2-node TrainJob lifecycle (ms)",
               res["controller_cpu_ms_per_job"], "(reported)", None),
        target("peak RSS (MB)", res["controller_peak_rss_mb"], "(reported)", None),
    ]
    unfinished_targets(res)
    return res


def pod_cache_bytes(cluster: Cluster, namespace: str) -> tuple[float, int]:
    """(bytes per pod, pods) that the controller's pod cache holds for ``namespace``'s pods:
    their LIST body decoded and slimmed as the controller does it (``mpi_controller.engine.pods``)
    under tracemalloc, counting what stays referenced."""
    import gc
    import tracemalloc

    raw = cluster.core.list_namespaced_pod(namespace, _preload_content=False).data
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    page = POD_CODEC.decode_list(raw)
    cache = {p["metadata"]["name"]: slim_pod(p) for p in page["items"]}
    del page
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return (held / len(cache) if cache else 0.0), len(cache)


def steady(s: Settings) -> Obj:
    jobs, workers = s.n(1000), 8
    with Run(s, "steady", kinds=("mpijobs",), start_controller=False) as run:
        # Baseline: the same controller watching an empty namespace.
        base = ControllerProcess(s.cluster, qps=s.qps, burst=s.burst, threadiness=s.threadiness,
                                 log_path=RESULTS /
                                 f"steady-baseline{_suffix(s.operator)}-controller.log",
                                 extra=("--namespace", f"{run.namespace}-empty"),
                                 operator=s.operator)
        base.wait_ready()
        time.sleep(3)
        base_rss = (base.read() or (0.0, 0, 0))[1]
        base.stop()
        # Setup: a fast controller brings every job to Running, then stops.
        setup = run.new_controller(qps=1000, burst=2000, threadiness=max(4, s.threadiness),
                                   tag="-setup", operator="ours")
        obs = run.observer
        t0 = time.time()
        _create_all(s, run.namespace, [_job(f"job-{i:04d}", workers, "10h")
                                       for i in range(jobs)], obs)
        wait_until(lambda: obs.count(lambda t: t.running_at is not None) >= jobs,
                   timeout=1800, what="steady: every job Running", interval=1.0)
        setup_s = round(time.time() - t0, 1)
        log(f"steady: {jobs} jobs Running after {setup_s}s")
        setup.stop()
        time.sleep(2)
        # The measured restart, once the setup's follow-ups (KWOK, the job controller) are done.
        quiet = [wait_for_quiet("steady: restart")]
        audit = Audit(s.cluster.audit_log)
        machine0 = _machine_busy()
        ctl = run.controller = ControllerProcess(
            s.cluster, qps=s.qps, burst=s.burst, threadiness=s.threadiness, extra=s.extra,
            log_path=RESULTS / f"steady{_suffix(s.operator)}-controller.log",
            operator=s.operator)
        ready_s = ctl.wait_ready(timeout=600)
        synced_at = ctl.synced_logged_at()
        ctl.wait_idle(ctl.started + (ready_s or 0))
        hold_from = time.time()
        busy = _machine_busy(machine0)
        time.sleep(max(10.0, 30 * s.scale))  # steady state: nothing should happen
        hold_to = time.time()
        rss = (ctl.read() or (0.0, 0, 0))[1]
        cpu = ctl.cpu()
        synced = synced_at or ctl.started + (ready_s or 0)
        entries, idle_at, last_write = _restart_requests(s, audit, ctl, synced)
        pods = int(jobs * (workers + 1))
        per_pod, measured_pods = pod_cache_bytes(s.cluster, run.namespace)
        lists = [e for e in entries if e["verb"] == "list"]
        synced_audit = max((ts(e["stageTimestamp"]) for e in lists), default=None)
        steady_gets = [e for e in entries if e["verb"] in ("get", "list")
                       and resource_of(e) != "leases"
                       and ts(e["requestReceivedTimestamp"]) > (synced_audit or 0)]
        writes = [e for e in entries if e["verb"] in WRITE_VERBS and resource_of(e) != "leases"]
        run.result.update({
            "jobs": jobs, "workers_per_job": workers, "cached_pods": pods,
            "setup_s": setup_s,
            "synced_log_s": round(synced_at - ctl.started, 3) if synced_at else None,
            "synced_readyz_s": ready_s,
            "synced_audit_last_list_s": round(synced_audit - ctl.started, 3)
            if synced_audit else None,
            "last_write_after_restart_s": round(last_write - ctl.started, 3)
            if last_write else None,
            "reconciled_idle_s": round(idle_at - ctl.started, 2) if idle_at else None,
            "controller_cpu_s_until_idle": round(
                next((c for t, c, _ in ctl.samples if t >= (idle_at or time.time())),
                     ctl.cpu()), 2),
            # Not idle after its last write within a minute of the hold: a lower bound.
            "lower_bounds": [] if idle_at else ["controller_cpu_s_until_idle"],
            "controller_cpu_s_total": round(cpu, 2),
            "peak_core_fraction_restart": ctl.peak_core_fraction(ctl.started, hold_from),
            "peak_core_fraction_steady": ctl.peak_core_fraction(hold_from, hold_to),
            "machine_busy_cores_restart": round(busy, 2),
            "controller_peak_rss_mb": round(ctl.peak_rss / 2**20, 1),
            "controller_rss_mb": round(rss / 2**20, 1),
            "baseline_rss_mb": round(base_rss / 2**20, 1),
            "bytes_per_cached_pod": round(per_pod),
            "bytes_per_cached_pod_pods": measured_pods,
            "rss_growth_per_pod_all_caches": round((rss - base_rss) / pods) if pods else None,
            "writes_after_restart": len(writes),
            "get_list_after_sync": len(steady_gets),
            "api_requests": summarize_requests(entries, run.namespace, 0),
            "series": ctl.series(ctl.started),
            "flags": ctl.flags,
        })
        ctl.stop()
        starts = [run.result["synced_log_s"]]
        for i in range(2, STEADY_STARTS + 1):
            time.sleep(2)
            quiet.append(wait_for_quiet(f"steady: start {i}"))
            starts.append(_synced_after_start(s, RESULTS / (
                f"steady{_suffix(s.operator)}-start{i}-controller.log")))
        run.result["synced_log_s_starts"] = starts
        run.result["quiet_starts"] = quiet
        run.result["synced_log_s"] = median_start(starts)
    res = run.result
    res["targets"] = [
        target("writes after restart", res["writes_after_restart"], "0 (no writes needed)",
               res["writes_after_restart"] == 0),
        target("GET/LIST after caches synced", res["get_list_after_sync"], "0",
               res["get_list_after_sync"] == 0),
        target("peak CPU, 1 s window (cores)", max(res["peak_core_fraction_restart"],
                                                    res["peak_core_fraction_steady"]),
               "< 0.95 (never saturating a core)",
               max(res["peak_core_fraction_restart"], res["peak_core_fraction_steady"]) < 0.95),
        target("peak RSS (MB)", res["controller_peak_rss_mb"], "<= 200",
               res["controller_peak_rss_mb"] <= 200),
        target("bytes per cached pod (the pod cache of this run's pods, tracemalloc)",
               res["bytes_per_cached_pod"], "<= 2048", res["bytes_per_cached_pod"] <= 2048),
    ]
    return res


STEADY_STARTS = 3
"""Starts of the operator on the steady workload's jobs: its ``synced_log_s`` is their median
(one start's figure moves by half with the page cache and the machine's load)."""


def median_start(starts: list[float | None]) -> float | None:
    """The median of the starts that logged their synced line (None when none did)."""
    done = [x for x in starts if x is not None]
    return round(statistics.median(done), 3) if done else None


def _synced_after_start(s: Settings, log_path: Path) -> float | None:
    """One more start of the operator on the steady jobs: seconds to its synced log line."""
    ctl = ControllerProcess(s.cluster, qps=s.qps, burst=s.burst, threadiness=s.threadiness,
                            extra=s.extra, log_path=log_path, operator=s.operator)
    try:
        ctl.wait_ready(timeout=600)
        at = ctl.synced_logged_at()
    finally:
        ctl.stop()
    return round(at - ctl.started, 3) if at else None


def restart_idle(samples: list[tuple[float, float, int]], synced: float,
                 writes: list[Obj]) -> tuple[float | None, float | None]:
    """(idle, last write) after a restart: the start of the first second under 5 % of a core
    (:func:`first_quiet`) that begins once the operator's caches synced (``synced``) and its
    last write of the restart (``writes``: its audit entries, Leases aside; the end of the
    last, None without any) is done: the restart's work finished, whatever paced it."""
    last = max((ts(e["stageTimestamp"]) for e in writes), default=None)
    return first_quiet(samples, max(synced, last or synced)), last


def _restart_requests(s: Settings, audit: Audit, ctl: ControllerProcess, synced: float, *,
                      longer: float = 60.0) -> tuple[list[Obj], float | None, float | None]:
    """The restarted operator's requests (its audit entries from its start to a marker made
    now) and :func:`restart_idle` over its writes (Leases aside); while it is not idle after
    its last write yet (a paced queue), again every 2 s for up to ``longer`` seconds more."""
    deadline = time.time() + longer
    while True:
        marker, _ = s.cluster.marker()
        audit.wait_marker(marker)
        entries = audit.requests(ctl.started, marker)
        writes = [e for e in entries if e["verb"] in WRITE_VERBS and resource_of(e) != "leases"]
        idle_at, last_write = restart_idle(ctl.samples, synced, writes)
        if idle_at is not None or time.time() >= deadline:
            return entries, idle_at, last_write
        time.sleep(2.0)


def scale_workload(s: Settings) -> Obj:
    import scale  # bench/scale.py (it imports this module)
    return scale.run(s)


RUNNERS: dict[str, Callable[[Settings], Obj]] = {
    "burst": burst, "steady": steady, "wide": wide, "arrival": arrival,
    **{name: training_burst(kind) for name, kind in training.KINDS.items()},
    training.TRAINJOB.workload: trainjob, "scale": scale_workload}


# -- environment, table and plot ------------------------------------------------------------


def environment(s: Settings) -> Obj:
    cpu_model = next((line.split(":", 1)[1].strip()
                      for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), platform.processor())
    versions = dict(line.split("=", 1) for line in
                    (REPO / "hack" / "versions.env").read_text().splitlines()
                    if "=" in line and not line.startswith("#"))
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "commit": commit, "python": platform.python_version(),
        **s.cluster.versions(),
        "pinned": {k: v.strip('"') for k, v in versions.items()},
        "machine": f"{os.cpu_count()} cores, {cpu_model}, {mem_kb // 2**20} GiB",
        "loadavg_start": Path("/proc/loadavg").read_text().split()[:3],
        "controller_flags": {"kube-api-qps": s.qps, "kube-api-burst": s.burst,
                             "threadiness": s.threadiness, "more": " ".join(s.extra)},
        "scale": s.scale,
    }


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_fmt(v)}" for k, v in value.items())
    return "-" if value is None else str(value)


def table(results: dict[str, Obj]) -> str:
    lines = []
    env = next((r["environment"] for r in results.values() if "environment" in r), {})
    if env:
        lines += [f"Run {env.get('date')} at commit `{env.get('commit')}` on {env.get('machine')};"
                  f" Python {env.get('python')}, Kubernetes {env.get('kubernetes')}; controller "
                  f"flags {env.get('controller_flags')}; scale {env.get('scale')}; "
                  f"load average at start {' '.join(env.get('loadavg_start', []))}.", ""]
    lines += ["| workload | figure | value | target | met |", "|---|---|---|---|---|"]
    for name in WORKLOADS:
        res = results.get(name)
        if not res:
            continue
        if res.get("complete") is False:
            lines.append(f"| {name} | **not finished** | {readme_table.unfinished(res)} | "
                         f"(reported) | |")
        for t in res.get("targets", []):
            met = {True: "yes", False: "**no**", None: ""}[t["met"]]
            shown = readme_table.shown(t["value"], t.get("not_reached", False))
            lines.append(f"| {name} | {t['figure']} | {shown} | {t['target']} | {met} |")
        lat = res.get("latency_s")
        if lat:
            for key in ("t_children", "t_running", "t_running_or_done", "t_succeeded"):
                p = lat.get(key)
                if p is None:  # a result written before the figure was
                    continue
                cells = " / ".join(readme_table.shown(p[q], readme_table.is_bound(
                    res, ("latency_s", key, q))) for q in ("p50", "p90", "p99", "max"))
                of = f" of {p['of']}" if "of" in p else ""
                lines.append(f"| {name} | {key} p50 / p90 / p99 / max (s) | {cells} | "
                             f"(reported, n={p['n']}{of}) | |")
        extra = {
            "burst": ("controller_cpu_s", "controller_peak_rss_mb", "lifecycle_wall_s",
                      *WAKEUP_FIGURES, "quiet_start", "machine_busy_cores",
                      "control_plane_cores", "harness_cores", "other_load_cores"),
            "arrival": ("jobs", "controller_cpu_s", "controller_peak_rss_mb",
                        *WAKEUP_FIGURES, "quiet_start", "machine_busy_cores",
                        "control_plane_cores", "harness_cores", "other_load_cores"),
            "steady": ("synced_log_s", "synced_log_s_starts", "quiet_starts", "synced_readyz_s",
                       "synced_audit_last_list_s", "last_write_after_restart_s",
                       "reconciled_idle_s", "controller_cpu_s_until_idle", "controller_rss_mb",
                       "baseline_rss_mb", "rss_growth_per_pod_all_caches",
                       "machine_busy_cores_restart", "setup_s"),
            "wide": ("first_object_s", "all_children_s", "controller_cpu_s", "quiet_start"),
            "scale": ("pods", "baseline_rss_mb", "controller_rss_mb", "controller_peak_rss_mb",
                      "model"),
        }.get(name, ("controller_cpu_s", "lifecycle_wall_s", *WAKEUP_FIGURES, "quiet_start",
                     "machine_busy_cores", "control_plane_cores", "harness_cores",
                     "other_load_cores"))
        for key in extra:
            value = res.get(key)
            cell = (_fmt(value) if isinstance(value, dict)
                    else "; ".join(_fmt(v) for v in value)
                    if isinstance(value, list) and all(isinstance(v, dict) for v in value)
                    else readme_table.shown(value, readme_table.is_bound(res, (key,))))
            lines.append(f"| {name} | {key} | {cell} | (reported) | |")
        hook = res.get("conversion_webhook")
        if hook:
            served = f"served, CPU {_fmt(hook.get('cpu_s'))} s" if hook["served"] else "not served"
            lines.append(f"| {name} | MPIJob conversion webhook (a process of its own) | "
                         f"{served} | (reported) | |")
        api = res.get("api_requests") or {}
        if api:
            writes = ", ".join(f"{k}: {v}" for k, v in api.get("writes_in_namespace", {}).items())
            lines.append(f"| {name} | API requests (all) / GET+LIST | {api.get('total')} / "
                         f"{api.get('get_list')} | (reported) | |")
            if writes:
                lines.append(f"| {name} | writes in the namespace | {writes} | (reported) | |")
    return "\n".join(lines) + "\n"


# (workload, label, key path into the result) of the side-by-side table.
SIDE_BY_SIDE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("burst", "whole lifecycle, create to every job finished and workers gone (s)",
     ("lifecycle_wall_s",)),
    ("burst", "jobs finished within the harness's timeout", ("jobs_finished",)),
    ("burst", "time until every child of every job exists (s)", ("all_children_s",)),
    ("burst", "t_running p50 (s)", ("latency_s", "t_running", "p50")),
    ("burst", "t_running p99 (s)", ("latency_s", "t_running", "p99")),
    ("burst", "jobs seen Running", ("latency_s", "t_running", "n")),
    ("burst", "Running or finished p50 (s; every job)", ("latency_s", "t_running_or_done", "p50")),
    ("burst", "Running or finished p99 (s; every job)", ("latency_s", "t_running_or_done", "p99")),
    ("burst", "t_succeeded p50 (s)", ("latency_s", "t_succeeded", "p50")),
    ("burst", "t_succeeded p99 (s)", ("latency_s", "t_succeeded", "p99")),
    ("burst", "controller CPU per job lifecycle (ms)", ("controller_cpu_ms_per_job",)),
    ("burst", "peak RSS (MB)", ("controller_peak_rss_mb",)),
    ("burst", "writes per job (children + status)",
     ("api_requests", "child_and_status_writes_per_job")),
    ("burst", "Event writes per job", ("api_requests", "event_writes_per_job")),
    ("steady", "caches synced, workers started after a restart (s; its own log line, "
               "median of 3 starts)",
     ("synced_log_s",)),
    ("steady", "writes after the restart (Leases aside)", ("writes_after_restart",)),
    ("steady", "GET/LIST after caches synced (Leases aside)", ("get_list_after_sync",)),
    ("steady", "peak RSS (MB)", ("controller_peak_rss_mb",)),
    ("steady", "RSS after sync (MB)", ("controller_rss_mb",)),
    ("steady", "CPU until idle after the restart's last write (s)",
     ("controller_cpu_s_until_idle",)),
    ("wide", "all workers + launcher exist (s)", ("all_objects_s",)),
    ("arrival", "whole lifecycle, first create to every job finished and workers gone (s)",
     ("lifecycle_wall_s",)),
    ("arrival", "jobs finished within the harness's timeout", ("jobs_finished",)),
    ("arrival", "t_children p50 (s)", ("latency_s", "t_children", "p50")),
    ("arrival", "t_succeeded p99 (s)", ("latency_s", "t_succeeded", "p99")),
    ("arrival", "controller CPU per job lifecycle (ms)", ("controller_cpu_ms_per_job",)),
    *((name, label, path) for name in training.KINDS for label, path in (
        ("whole lifecycle, create to every job Succeeded (s)", ("lifecycle_wall_s",)),
        ("time until every pod and Service of every job exists (s)", ("all_children_s",)),
        ("t_children p50 (s)", ("latency_s", "t_children", "p50")),
        ("t_running p50 (s)", ("latency_s", "t_running", "p50")),
        ("t_running p99 (s)", ("latency_s", "t_running", "p99")),
        ("jobs seen Running", ("latency_s", "t_running", "n")),
        ("Running or finished p50 (s; every job)", ("latency_s", "t_running_or_done", "p50")),
        ("Running or finished p99 (s; every job)", ("latency_s", "t_running_or_done", "p99")),
        ("t_succeeded p50 (s)", ("latency_s", "t_succeeded", "p50")),
        ("t_succeeded p99 (s)", ("latency_s", "t_succeeded", "p99")),
        ("controller CPU per job lifecycle (ms)", ("controller_cpu_ms_per_job",)),
        ("peak RSS (MB)", ("controller_peak_rss_mb",)),
        ("writes per job (children + status)",
         ("api_requests", "child_and_status_writes_per_job")),
        ("Event writes per job", ("api_requests", "event_writes_per_job")))),
    *((training.TRAINJOB.workload, label, path) for label, path in (
        ("whole lifecycle, create to every TrainJob Complete (s)", ("lifecycle_wall_s",)),
        ("time until every JobSet exists (s)", ("all_children_s",)),
        ("t_children (JobSet) p50 (s)", ("latency_s", "t_children", "p50")),
        ("t_children (JobSet) p99 (s)", ("latency_s", "t_children", "p99")),
        ("t_succeeded (Complete) p50 (s)", ("latency_s", "t_succeeded", "p50")),
        ("t_succeeded (Complete) p99 (s)", ("latency_s", "t_succeeded", "p99")),
        ("controller CPU per job lifecycle (ms)", ("controller_cpu_ms_per_job",)),
        ("peak RSS (MB)", ("controller_peak_rss_mb",)),
        ("writes per job (JobSet + TrainJob status)",
         ("api_requests", "child_and_status_writes_per_job")),
        ("Event writes per job", ("api_requests", "event_writes_per_job")))),
)


def side_by_side_rows(name: str) -> list[tuple[str, tuple[str, ...]]]:
    """The side-by-side figures (label, key path) of workload ``name``."""
    return [(figure, path) for workload, figure, path in SIDE_BY_SIDE if workload == name]


def side_by_side(ours: dict[str, Obj], ref: dict[str, Obj],
                 label: str = REFERENCES["go"]) -> str:
    """The figures both operators have, ours / the reference (``label``) / ratio (ours
    divided by the reference)."""
    short = label.split(" (")[0].split(" v")[0]
    lines = [f"| workload | figure | ours | {label} | ours / {short} | at or ahead |",
             "|---|---|---|---|---|---|"]
    other_jobs: list[str] = []
    for name, figure, path in SIDE_BY_SIDE:
        if name not in ours or name not in ref:
            continue
        a, b = readme_table.dig(ours[name], path), readme_table.dig(ref[name], path)
        a_bound = readme_table.is_bound(ours[name], path)
        b_bound = readme_table.is_bound(ref[name], path)
        # A ratio only of figures both runs reached.
        ratio = f"{a / b:.2f}" if isinstance(a, int | float) and isinstance(b, int | float) \
            and b and not (a_bound or b_bound) else "-"
        verdict = {True: "yes", False: "**no**", None: ""}[readme_table.rank(
            figure, ours[name], ref[name], path)]
        if readme_table.population(ours[name], path) != \
                readme_table.population(ref[name], path):
            other_jobs.append(f"{name} {figure}")
        lines.append(f"| {name} | {figure} | {readme_table.shown(a, a_bound)} | "
                     f"{readme_table.shown(b, b_bound)} | {ratio} | {verdict} |")
    runs = "; ".join(
        f"{name} at scale {(ref[name].get('environment') or {}).get('scale')}: ours "
        f"{(ours[name].get('environment') or {}).get('date')}, {short} "
        f"{(ref[name].get('environment') or {}).get('date')}"
        for name in WORKLOADS if name in ours and name in ref)
    flags = "; ".join(f"{op}: {' '.join(res.get('flags') or [])}" for op, res in (
        ("ours", next((ours[n] for n in WORKLOADS if n in ours and n in ref), {})),
        (short, next(iter(ref.values())))))
    lines.append(f"\nSame workloads, QPS, threads and observers (flags {flags}); {runs}.")
    unfinished = [f"{who}'s {name} {readme_table.unfinished(res[name])}"
                  for name in WORKLOADS if name in ours and name in ref
                  for who, res in (("ours", ours), (short, ref))
                  if res[name].get("complete") is False]
    if other_jobs:
        lines.append("Not ranked, each side's figure being over other jobs (a percentile over "
                     "those its observer saw Running; writes per job where the operators saw "
                     "different numbers of jobs Running, a job whose Running state its "
                     "operator missed costing it no Running status write): "
                     + "; ".join(other_jobs) + ". The Running or finished rows are over every "
                     "job, one never seen Running at its finish.")
    if unfinished:
        lines.append("Not finished within the harness's timeout (a figure marked not reached "
                     "is what the run had reached when the harness stopped waiting, a lower "
                     "bound; it is ranked only where the bound decides): "
                     + "; ".join(unfinished) + ".")
    return "\n".join(lines) + "\n"


def plot(results: dict[str, Obj], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    ax = axes[0][0]
    for name in ("burst", "arrival", *training.KINDS):
        lat = (results.get(name) or {}).get("latency_s")
        if not lat:
            continue
        for key, style in (("t_children", "-"), ("t_running", "--"), ("t_succeeded", ":")):
            xs = sorted(lat[key]["samples"])
            if xs:
                ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))], style,
                        label=f"{name} {key}")
    ax.set(title="latency per job (CDF)", xlabel="seconds after create", ylabel="fraction")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    for ax, key, label in ((axes[0][1], "cpu", "controller CPU (cores, 1 s)"),
                           (axes[1][0], "rss_mb", "controller RSS (MB)")):
        for name in WORKLOADS:
            series = (results.get(name) or {}).get("series")
            if not series:
                continue
            t = series["t"]
            if key == "cpu":
                c = series["cpu_s"]
                ys = [(c[i] - c[i - 1]) / max(t[i] - t[i - 1], 1e-3) for i in range(1, len(t))]
                ax.plot(t[1:], ys, label=name, lw=0.8)
            else:
                ax.plot(t, series[key], label=name, lw=0.8)
        ax.set(title=label, xlabel="seconds")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    ax = axes[1][1]
    names, writes, reads, watches = [], [], [], []
    for name in WORKLOADS:
        api = (results.get(name) or {}).get("api_requests")
        if not api:
            continue
        by = api["by_verb_resource"]
        names.append(name)
        writes.append(sum(v for k, v in by.items() if k.split()[0] in WRITE_VERBS))
        reads.append(sum(v for k, v in by.items() if k.split()[0] in ("get", "list")))
        watches.append(sum(v for k, v in by.items() if k.split()[0] == "watch"))
    xs = range(len(names))
    ax.bar([x - 0.25 for x in xs], writes, 0.25, label="writes")
    ax.bar(list(xs), reads, 0.25, label="get/list")
    ax.bar([x + 0.25 for x in xs], watches, 0.25, label="watch")
    ax.set_xticks(list(xs), names)
    ax.set_yscale("symlog")
    ax.set(title="controller API requests (audit log)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# Hand-written sections of docs/performance.md that ``--docs`` keeps (from the heading on).
KEPT_SECTIONS = ("## Issue 29, latency and CPU per job", "## CPU per job", "## Scale")


def kept_sections(doc: Path) -> str:
    """The text of ``doc`` from its first hand-written heading on: a line that is one of
    :data:`KEPT_SECTIONS` or starts with one and goes on after a colon
    (``## Issue 29, latency and CPU per job: before and after``)."""
    text = doc.read_text() if doc.exists() else ""
    starts = [m.start() for h in KEPT_SECTIONS
              if (m := re.search(rf"\n{re.escape(h)}(:[^\n]*)?\n", text))]
    return "\n" + text[min(starts) + 1:] if starts else ""


def report(docs: bool) -> None:
    results = {}
    for name in WORKLOADS:
        path = RESULTS / f"{name}.json"
        if path.exists():
            results[name] = json.loads(path.read_text())
    md = table(results)
    (RESULTS / "bench.md").write_text(md)
    plot(results, RESULTS / "bench.png")
    print(md)
    sides, pairs = [], []
    for operator, label in REFERENCES.items():
        ref = {name: json.loads((RESULTS / f"{name}-{operator}.json").read_text())
               for name in WORKLOADS if (RESULTS / f"{name}-{operator}.json").exists()}
        if ref:
            sides.append(f"## Side by side with {label}\n\n" + side_by_side(results, ref, label))
            pairs += [(name, label, results[name], ref[name])
                      for name in WORKLOADS if name in results and name in ref]
    if sides:
        side = "\n".join(sides)
        (RESULTS / "side-by-side.md").write_text(side)
        print(side)
        md += "\n" + side
    if docs:
        doc = REPO / "docs" / "performance.md"
        doc.write_text(
            "# Performance\n\nWritten by `make bench` (bench/harness.py); the plot is "
            "[bench.png](bench.png).\n\n" + md + kept_sections(doc))
        shutil.copy(RESULTS / "bench.png", REPO / "docs" / "bench.png")
        log("copied the table and plot to docs/performance.md and docs/bench.png")
        rows = readme_table.summary(pairs, side_by_side_rows)
        if readme_table.write_block(REPO / "README.md", rows):
            log("wrote the side-by-side summary into README.md")


class ConversionWebhook:
    """The MPIJob webhooks served for the whole bench by a process of their own (as
    ``tests.webhooks.serving_webhooks`` serves them for the tests), or not at all.

    Served, the cluster is as deployed: the API server's watch caches of MPIJob ``v1`` and
    ``v1alpha2`` convert every MPIJob change through the webhook. Unserved, each of those
    caches fails and relists every MPIJob, again and again, which loads the API server (and
    so every operator measured) with work a deployed cluster does not do. The process is
    not the measured controller: its CPU is reported beside each workload's figures."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid

    def cpu_seconds(self) -> float | None:
        sample = ProcSampler.read_pid(self.pid) if self.pid else None
        return sample[0] if sample else None

    def describe(self, cpu_before: float | None) -> Obj:
        cpu = self.cpu_seconds()
        if self.pid is None or cpu is None or cpu_before is None:
            return {"served": self.pid is not None}
        return {"served": True, "cpu_s": round(cpu - cpu_before, 2)}


@contextlib.contextmanager
def conversion_webhook(cluster: Cluster, *, serve: bool) -> Iterator[ConversionWebhook]:
    if not serve:
        log("conversion webhook: not served (--no-conversion-webhook)")
        yield ConversionWebhook(None)
        return
    logs = RESULTS / "webhook-logs"
    logs.mkdir(parents=True, exist_ok=True)
    target = TestCluster(kubeconfig=str(cluster.admin_kubeconfig), local=True)
    with serving_webhooks(target, logs) as proc:
        log(f"conversion webhook: served by pid {proc.pid}")
        yield ConversionWebhook(proc.pid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster-dir", type=Path,
                        default=Path(os.environ.get("MPI_CONTROLLER_CLUSTER_DIR") or
                                     Path.home() / ".cache/mpi-controller/cluster-bench"))
    parser.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS),
                        help=f"of {', '.join(WORKLOADS)} (default all but scale)")
    parser.add_argument("--scale", type=float,
                        default=float(os.environ.get("BENCH_SCALE") or 1.0))
    parser.add_argument("--qps", type=float, default=100)
    parser.add_argument("--burst", type=int, default=200)
    parser.add_argument("--threadiness", type=int, default=16,
                        help="the syncs are I/O-bound: 2 (the default) leaves QPS unused")
    parser.add_argument("--controller-args", default="",
                        help="more flags for the measured controller, e.g. "
                             "'--worker-create-concurrency 64'")
    parser.add_argument("--lifecycle-timeout", type=float, default=None,
                        help="seconds a lifecycle workload (burst, arrival, the training "
                             "kinds, trainjob) waits for its jobs after creating them, instead "
                             "of its own timeout (burst 900, 3600 for a reference; arrival its "
                             "duration + 600; the others 1800); a run not finished by then "
                             "reports what it reached, the rest as lower bounds")
    parser.add_argument("--docs", action="store_true",
                        help="copy the table and plot to docs/performance.md and docs/bench.png")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--no-conversion-webhook", action="store_true",
                        help="leave the MPIJob CRD's conversion webhook unserved (the API "
                             "server's v1 and v1alpha2 watch caches then fail and relist)")
    parser.add_argument("--operators", default="ours",
                        help="comma-separated, of ours, go (the MPIJob workloads), "
                             "training-operator (the training-operator kinds' ones) and trainer "
                             "(trainjob): which operators to measure; all: ours and every "
                             "reference")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    if args.operators.strip() == "all":
        args.operators = ",".join(["ours", *REFERENCES])
    RESULTS.mkdir(exist_ok=True)
    if not args.report_only:
        cluster = Cluster(args.cluster_dir)
        with conversion_webhook(cluster, serve=not args.no_conversion_webhook) as webhook:
            for operator in [o.strip() for o in args.operators.split(",") if o.strip()]:
                s = Settings(cluster, args.qps, args.burst, args.threadiness, args.scale,
                             tuple(args.controller_args.split()), operator=operator,
                             timeout=args.lifecycle_timeout)
                env = {**environment(s), "operator": operator}
                for name in [w.strip() for w in args.workloads.split(",") if w.strip()]:
                    if operator != "ours" and REFERENCE_OF.get(name) != operator:
                        log(f"workload {name}: not one of {operator}'s kinds; skipped")
                        continue
                    log(f"workload {name} (scale {args.scale}), operator {operator}")
                    cpu0 = time.process_time()
                    webhook_cpu0 = webhook.cpu_seconds()
                    res = RUNNERS[name](s)
                    res["environment"] = {**env, "loadavg_end":
                                          Path("/proc/loadavg").read_text().split()[:3]}
                    res["harness_cpu_s"] = round(time.process_time() - cpu0, 2)
                    res["conversion_webhook"] = webhook.describe(webhook_cpu0)
                    path = RESULTS / f"{name}{_suffix(operator)}.json"
                    path.write_text(json.dumps(res, indent=1) + "\n")
                    log(f"wrote {path}")
    report(args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
