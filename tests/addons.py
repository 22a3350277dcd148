"""Support for the tests that run job operators under the local cluster's addons (Kueue,
Volcano's scheduler, scheduler-plugins' Coscheduling): ``tests/integration/``
``test_gang_scheduling.py``, ``test_kueue.py`` and ``test_kueue_reference.py``.

* :class:`Addons` / :func:`open_addons`: the addons cluster ``make addons-test`` brings up
  (``$MPI_CONTROLLER_ADDONS_CLUSTER_DIR``); the tests are skipped, with the reason, when the
  variable is unset, the cluster does not answer or the addon is not among those started.
* :func:`new_namespace` / :func:`drop_namespace`, :class:`NodePool`: a namespace and small KWOK
  nodes of the test's own (labelled, optionally tainted), so that what fits is known.
* :class:`KindCase`: one job kind of the registry (:func:`mpi_controller.kinds.plugins`) with a
  small replica layout of 3 pods (:data:`LAYOUTS`, one entry per scheme: a kind added to the
  registry without one fails :func:`kind_cases` loudly) and its manifests.
* :class:`PodLog`: a watch of a namespace's pods in a thread, recording when each pod was seen
  created, bound (``spec.nodeName``), running, finished and deleted.
* Kueue: :class:`Queues` (a ResourceFlavor with a node label and a toleration, a ClusterQueue
  of 3 CPUs with preemption by priority, a LocalQueue) and :func:`kueue_env` (them, a namespace
  and the flavor's two tainted 2-CPU nodes), WorkloadPriorityClasses, a job's Workloads and
  Kueue's Events on it, the job's templates as Kueue restores them.
* :func:`write_results`: figures as JSON under ``<cluster dir>/results/``.
* :class:`Operator`: the operator under test as a process: ours
  (:class:`tests.processes.ControllerProcess`) or a reference Go operator (mpi-operator v0.8.2,
  training-operator v1.9.2, as ``conformance/`` runs them).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, watch

from mpi_controller import kinds
from mpi_controller.engine.plugin import KindPlugin
from mpi_controller.kube.quantity import parse_quantity
from tests.support import unique_name, wait_for

__all__ = [
    "DURATION",
    "ENV",
    "JOB_NAME_LABEL",
    "KUEUE",
    "KUEUE_VERSION",
    "LAYOUTS",
    "PODSET_LABEL",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "Addons",
    "KindCase",
    "KueueEnv",
    "NodePool",
    "Operator",
    "PodLog",
    "PodTrack",
    "Queues",
    "Replica",
    "bind_spread",
    "condition",
    "condition_true",
    "drop_namespace",
    "events_of",
    "first_end",
    "flavor_nodes",
    "job_condition",
    "kind_cases",
    "kueue_env",
    "kueue_job_events",
    "make_queues",
    "new_namespace",
    "open_addons",
    "quantities_equal",
    "running",
    "templates",
    "wait_job",
    "workload_priority_class",
    "workload_when",
    "workloads_of",
    "write_results",
]

ENV = "MPI_CONTROLLER_ADDONS_CLUSTER_DIR"
KUEUE = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
PODSET_LABEL = "kueue.x-k8s.io/podset"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
DURATION = "sim.mpi-controller.io/duration"
Obj = dict[str, Any]


# ---- the cluster --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Addons:
    """The cluster the addons run on: its state directory, the addons started, an API client."""

    state: Path
    enabled: frozenset[str]
    api: client.ApiClient

    @property
    def kubeconfig(self) -> Path:
        return self.state / "kubeconfig"

    @property
    def controller_kubeconfig(self) -> Path:
        """The operators' identity (the local cluster's ``kubeconfig-controller``)."""
        path = self.state / "kubeconfig-controller"
        return path if path.exists() else self.kubeconfig

    def require(self, *addons: str) -> None:
        missing = [a for a in addons if a not in self.enabled]
        if missing:
            pytest.skip(f"{', '.join(missing)} not up on the cluster in {self.state} "
                        f"(started: {', '.join(sorted(self.enabled)) or 'none'}; "
                        "`make addons-test` starts them)")

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    @property
    def custom(self) -> client.CustomObjectsApi:
        return client.CustomObjectsApi(self.api)

    @property
    def batch(self) -> client.BatchV1Api:
        return client.BatchV1Api(self.api)


def open_addons() -> Addons:
    """The addons cluster of ``$MPI_CONTROLLER_ADDONS_CLUSTER_DIR``; skips (with the reason)
    when it is not set or its API server does not answer."""
    directory = os.environ.get(ENV)
    if not directory:
        pytest.skip(f"no addons cluster: `make addons-test` starts one and sets {ENV}")
    state = Path(directory)
    kubeconfig = state / "kubeconfig"
    if not kubeconfig.exists():
        pytest.skip(f"{ENV}={directory} holds no cluster (no kubeconfig): "
                    f"MPI_CONTROLLER_CLUSTER_DIR={directory} hack/local-cluster.sh up --addons ...")
    api = config.new_client_from_config(config_file=str(kubeconfig))
    try:
        client.VersionApi(api).get_code(_request_timeout=5)
    except Exception as err:  # any failure means "not up"
        api.close()
        pytest.skip(f"the addons cluster in {directory} does not answer "
                    f"({err.__class__.__name__})")
    enabled_file = state / "addons" / "enabled"
    enabled = frozenset(enabled_file.read_text().split()) if enabled_file.exists() else frozenset()
    return Addons(state=state, enabled=enabled, api=api)


def new_namespace(addons: Addons, prefix: str, *, labels: Mapping[str, str] | None = None) -> str:
    name = unique_name(prefix)
    addons.core.create_namespace({"metadata": {"name": name, "labels": dict(labels or {})}})
    wait_for(lambda: addons.core.list_namespaced_service_account(
        name, field_selector="metadata.name=default").items,
        timeout=60, what=f"the default ServiceAccount of {name}")
    return name


def drop_namespace(addons: Addons, name: str) -> None:
    """MPIJobs through the stored version first (the namespace controller would list them
    through ``v1``, whose conversion webhook is not served here), then the namespace."""
    with contextlib.suppress(client.ApiException):
        addons.custom.delete_collection_namespaced_custom_object(
            "kubeflow.org", "v2beta1", name, "mpijobs")
    with contextlib.suppress(client.ApiException):
        addons.core.delete_namespace(name, propagation_policy="Background")


class NodePool:
    """Ready KWOK nodes of one test (``add``), named ``<namespace>-n<i>``; :meth:`close` deletes
    the namespace's pods (without a grace period: once their node is gone, nothing would
    confirm their end) and then the nodes."""

    def __init__(self, addons: Addons, namespace: str) -> None:
        self.addons = addons
        self.namespace = namespace
        self.names: list[str] = []

    def add(self, cpu: str = "2", *, labels: Mapping[str, str] | None = None,
            taints: list[Obj] | None = None) -> str:
        name = f"{self.namespace}-n{len(self.names)}"
        capacity = {"cpu": cpu, "memory": "4Gi", "pods": "10"}
        self.addons.core.create_node({
            "metadata": {
                "name": name,
                "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                "labels": {"type": "kwok", "kubernetes.io/hostname": name, **(labels or {})},
            },
            "spec": {"taints": taints or []},
            "status": {"capacity": capacity, "allocatable": capacity},
        })
        self.names.append(name)
        wait_for(lambda: _node_ready(self.addons.core.read_node(name)), timeout=60,
                 what=f"node {name} to be Ready")
        return name

    def close(self) -> None:
        with contextlib.suppress(client.ApiException):
            self.addons.core.delete_collection_namespaced_pod(self.namespace,
                                                              grace_period_seconds=0)
        for name in self.names:
            with contextlib.suppress(client.ApiException):
                self.addons.core.delete_node(name)


def _node_ready(node: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def condition(obj: Mapping[str, Any], kind: str) -> Obj | None:
    """The condition of type ``kind`` in ``obj``'s status (None when it has none)."""
    status = obj.get("status") or {}
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def events_of(addons: Addons, namespace: str, kind: str, name: str) -> list[Obj]:
    """The Events about object ``kind``/``name``, oldest first, as dicts (``type``,
    ``reason``, ``message``, ``count``, ``source``: the reporting component)."""
    items = addons.core.list_namespaced_event(
        namespace, field_selector=f"involvedObject.kind={kind},involvedObject.name={name}").items
    out = [{"type": e.type, "reason": e.reason, "message": e.message, "count": e.count or 1,
            "source": (e.source.component if e.source else None) or e.reporting_component or "",
            "time": e.last_timestamp or e.event_time or e.metadata.creation_timestamp}
           for e in items]
    return sorted(out, key=lambda e: e["time"].timestamp() if e["time"] else 0.0)


def quantities_equal(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Two resource lists hold the same quantities (``3`` equals ``3000m``)."""
    a, b = a or {}, b or {}
    return set(a) == set(b) and all(_value(a[k]) == _value(b[k]) for k in a)


def _value(quantity: object) -> Decimal | None:
    parsed = parse_quantity(quantity)
    return parsed.value if parsed is not None else None


def write_results(addons: Addons, name: str, figures: Mapping[str, Any]) -> Path | None:
    """Writes ``figures`` (merged into what earlier runs wrote) as
    ``<cluster dir>/results/<name>.json``, outside the repository; returns the path."""
    if not figures:
        return None
    path = addons.state / "results" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    merged = json.loads(path.read_text()) if path.exists() else {}
    merged.update(figures)
    path.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
    return path


# ---- the kinds ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replica:
    rtype: str
    count: int
    container: str


# Each kind's replica layout in these tests: 3 pods, so that with 1 CPU each a job fits on two
# 2-CPU nodes but two jobs do not. MPIJob's launcher finishes the job; the training kinds'
# pods all finish (KWOK ends them after sim.mpi-controller.io/duration).
LAYOUTS: dict[str, tuple[Replica, ...]] = {
    "mpijob": (Replica("Launcher", 1, "launcher"), Replica("Worker", 2, "worker")),
    "tfjob": (Replica("Worker", 3, "tensorflow"),),
    "pytorchjob": (Replica("Master", 1, "pytorch"), Replica("Worker", 2, "pytorch")),
    "xgboostjob": (Replica("Master", 1, "xgboost"), Replica("Worker", 2, "xgboost")),
    "paddlejob": (Replica("Worker", 3, "paddle"),),
    "jaxjob": (Replica("Worker", 3, "jax"),),
}


@dataclass(frozen=True)
class KindCase:
    """A kind of the registry with its test layout (see :data:`LAYOUTS`)."""

    plugin: KindPlugin
    replicas: tuple[Replica, ...]

    @property
    def scheme(self) -> str:
        return self.plugin.scheme

    @property
    def kind(self) -> str:
        return self.plugin.kind

    @property
    def version(self) -> str:
        return self.plugin.version

    @property
    def plural(self) -> str:
        return self.plugin.plural

    @property
    def field(self) -> str:
        return self.plugin.replica_specs or "mpiReplicaSpecs"

    @property
    def mpi(self) -> bool:
        return self.scheme == "mpijob"

    @property
    def pods(self) -> int:
        return sum(r.count for r in self.replicas)

    @property
    def reference(self) -> str:
        """The Go operator of the kind (``hack/reference-operators.sh`` name)."""
        return "mpi-operator" if self.mpi else "training-operator"

    def manifest(self, name: str, *, cpu: str = "1", memory: str = "100Mi",
                 duration: str = "6s", node_selector: Mapping[str, str] | None = None,
                 labels: Mapping[str, str] | None = None,
                 run_policy: Mapping[str, Any] | None = None) -> Obj:
        """A job of 3 pods requesting ``cpu`` and ``memory`` each, placed by ``node_selector``,
        that finishes ``duration`` after it starts (MPIJob: its launcher; with cleanPodPolicy
        ``Running`` its workers go when it is done)."""
        policy: Obj = {"cleanPodPolicy": "Running"} if self.mpi else {}
        policy.update(run_policy or {})
        specs: Obj = {}
        for replica in self.replicas:
            pod_spec: Obj = {"containers": [{
                "name": replica.container, "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
            if node_selector:
                pod_spec["nodeSelector"] = dict(node_selector)
            template: Obj = {"spec": pod_spec}
            if not self.mpi or replica.rtype == "Launcher":
                template["metadata"] = {"annotations": {DURATION: duration}}
            spec: Obj = {"replicas": replica.count, "template": template}
            if not self.mpi:
                spec["restartPolicy"] = "Never"
            specs[replica.rtype] = spec
        body: Obj = {"apiVersion": f"{self.plugin.group}/{self.version}", "kind": self.kind,
                     "metadata": {"name": name, "labels": dict(labels or {})},
                     "spec": {self.field: specs}}
        if policy:
            body["spec"]["runPolicy"] = policy
        if self.mpi:
            body["spec"]["slotsPerWorker"] = 1
        return body

    def finished_message(self, namespace: str, name: str) -> str:
        """The ``Succeeded`` condition's message the Go operator writes for this layout (with a
        Master: the Master's rule; else the workers', as MPIJob's)."""
        if any(r.rtype == "Master" for r in self.replicas):
            return f"{self.kind} {name} is successfully completed."
        return f"{self.kind} {namespace}/{name} successfully completed."

    def podsets(self) -> dict[str, int]:
        """Kueue's PodSets of the job: name (the replica type, lower case) -> count."""
        return {r.rtype.lower(): r.count for r in self.replicas}

    # -- API ---------------------------------------------------------------------------------

    def create(self, addons: Addons, namespace: str, body: Obj) -> Obj:
        created: Obj = addons.custom.create_namespaced_custom_object(
            self.plugin.group, self.version, namespace, self.plural, body)
        return created

    def get(self, addons: Addons, namespace: str, name: str) -> Obj:
        got: Obj = addons.custom.get_namespaced_custom_object(
            self.plugin.group, self.version, namespace, self.plural, name)
        return got

    def job_pods(self, addons: Addons, namespace: str, name: str) -> list[Any]:
        return addons.core.list_namespaced_pod(
            namespace, label_selector=f"{JOB_NAME_LABEL}={name}").items


def kind_cases() -> list[KindCase]:
    """Every kind of the registry, with its layout (not TrainJob: it runs only when enabled,
    on JobSet, and its Kueue integration is not tested yet)."""
    cases = []
    for plugin in kinds.plugins():
        if plugin.explicit:
            continue
        assert plugin.scheme in LAYOUTS, (
            f"tests/addons.py LAYOUTS has no replica layout for {plugin.scheme}: add one")
        cases.append(KindCase(plugin, LAYOUTS[plugin.scheme]))
    return cases


# ---- pods over time -----------------------------------------------------------------------------


@dataclass
class PodTrack:
    """What a watch saw of one pod (wall-clock seconds of the observations)."""

    name: str
    job: str
    created: float
    cpu: float = 0.0
    node: str = ""
    bound: float | None = None
    running: float | None = None
    finished: float | None = None
    deleted: float | None = None
    last: Obj = field(default_factory=dict)


class PodLog:
    """Watches the pods of ``namespace`` in a thread (from now on) and records each one's
    life (:class:`PodTrack`); pods are keyed by UID, so a pod made again under the same name is
    a new track."""

    def __init__(self, addons: Addons, namespace: str) -> None:
        self.addons = addons
        self.namespace = namespace
        self.tracks: dict[str, PodTrack] = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.api = config.new_client_from_config(config_file=str(addons.kubeconfig))
        self.core = client.CoreV1Api(self.api)
        self.version = self._list()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _list(self) -> str:
        """Records the pods there are; the list's resourceVersion."""
        listed = self.core.list_namespaced_pod(self.namespace)
        now = time.time()
        for item in listed.items:
            self._seen("ADDED", self.api.sanitize_for_serialization(item), now)
        version: str = listed.metadata.resource_version
        return version

    def _run(self) -> None:
        while not self.stopped.is_set():
            w = watch.Watch()
            try:
                for event in w.stream(self.core.list_namespaced_pod, self.namespace,
                                      resource_version=self.version, timeout_seconds=2,
                                      _request_timeout=30):
                    pod = self.api.sanitize_for_serialization(event["object"])
                    self.version = pod["metadata"]["resourceVersion"]
                    self._seen(event["type"], pod, time.time())
                    if self.stopped.is_set():
                        break
            except client.ApiException as err:
                if err.status == 410:  # too old: list again
                    self.version = self._list()
                time.sleep(0.2)
            except Exception:  # a broken watch is started again
                time.sleep(0.2)
            finally:
                w.stop()

    def _seen(self, kind: str, pod: Obj, now: float) -> None:
        meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        with self.lock:
            track = self.tracks.get(meta["uid"])
            if track is None:
                cpu = sum(float(_value(((c.get("resources") or {}).get("requests") or {})
                                       .get("cpu", "0")) or 0)
                          for c in spec.get("containers") or [])
                track = self.tracks[meta["uid"]] = PodTrack(
                    name=meta["name"], job=(meta.get("labels") or {}).get(JOB_NAME_LABEL, ""),
                    created=now, cpu=cpu)
            track.last = pod
            if spec.get("nodeName") and track.bound is None:
                track.bound, track.node = now, spec["nodeName"]
            phase = status.get("phase")
            if phase == "Running" and track.running is None:
                track.running = now
            if phase in ("Succeeded", "Failed") and track.finished is None:
                track.finished = now
            if kind == "DELETED" and track.deleted is None:
                track.deleted = now

    def of(self, job: str) -> list[PodTrack]:
        with self.lock:
            return [t for t in self.tracks.values() if t.job == job]

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=15)
        self.api.close()


def bind_spread(tracks: list[PodTrack], *, now: float | None = None) -> float:
    """How long ``tracks`` (one gang's pods) were partially placed, from the watch's view:
    the seconds from the first bind to the last when all were bound, to ``now`` (default: the
    current time) when some are bound and others not; 0 when none is."""
    times = [t.bound for t in tracks if t.bound is not None]
    if not times:
        return 0.0
    last = max(times) if len(times) == len(tracks) else (now or time.time())
    return last - min(times)


def first_end(tracks: list[PodTrack]) -> float | None:
    """When the first of ``tracks`` finished or was deleted (None: none has)."""
    ends = [x for t in tracks for x in (t.finished, t.deleted) if x is not None]
    return min(ends) if ends else None


# ---- Kueue --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Queues:
    """A ResourceFlavor whose node label and toleration Kueue puts on admitted pods, a
    ClusterQueue (preemption within it by priority) and a LocalQueue ``queue``."""

    flavor: str
    cluster_queue: str
    local_queue: str
    node_labels: dict[str, str]
    toleration: Obj

    def delete(self, addons: Addons) -> None:
        for plural, name in (("clusterqueues", self.cluster_queue),
                             ("resourceflavors", self.flavor)):
            with contextlib.suppress(client.ApiException):
                addons.custom.delete_cluster_custom_object(KUEUE, KUEUE_VERSION, plural, name)


def make_queues(addons: Addons, namespace: str, *, cpu: str = "3",
                memory: str = "3Gi") -> Queues:
    flavor, cluster_queue = f"{namespace}-flavor", f"{namespace}-cq"
    node_labels = {"pool.addons-test.mpi-controller.io": namespace}
    toleration = {"key": "pool.addons-test.mpi-controller.io", "operator": "Equal",
                  "value": namespace, "effect": "NoSchedule"}
    custom = addons.custom
    custom.create_cluster_custom_object(KUEUE, KUEUE_VERSION, "resourceflavors", {
        "apiVersion": f"{KUEUE}/{KUEUE_VERSION}", "kind": "ResourceFlavor",
        "metadata": {"name": flavor},
        "spec": {"nodeLabels": node_labels, "tolerations": [toleration]}})
    custom.create_cluster_custom_object(KUEUE, KUEUE_VERSION, "clusterqueues", {
        "apiVersion": f"{KUEUE}/{KUEUE_VERSION}", "kind": "ClusterQueue",
        "metadata": {"name": cluster_queue},
        "spec": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{
                "coveredResources": ["cpu", "memory"],
                "flavors": [{"name": flavor, "resources": [
                    {"name": "cpu", "nominalQuota": cpu},
                    {"name": "memory", "nominalQuota": memory}]}],
            }],
        }})
    custom.create_namespaced_custom_object(KUEUE, KUEUE_VERSION, namespace, "localqueues", {
        "apiVersion": f"{KUEUE}/{KUEUE_VERSION}", "kind": "LocalQueue",
        "metadata": {"name": "queue"}, "spec": {"clusterQueue": cluster_queue}})

    def active() -> bool:
        cq = custom.get_cluster_custom_object(KUEUE, KUEUE_VERSION, "clusterqueues", cluster_queue)
        found = condition(cq, "Active")
        return bool(found and found["status"] == "True")

    wait_for(active, timeout=60, what=f"ClusterQueue {cluster_queue} to be Active")
    return Queues(flavor=flavor, cluster_queue=cluster_queue, local_queue="queue",
                  node_labels=node_labels, toleration=toleration)


def flavor_nodes(pool: NodePool, queues: Queues, count: int = 2, cpu: str = "2") -> list[str]:
    """``count`` nodes carrying the flavor's label and the taint its toleration tolerates."""
    taint = {k: queues.toleration[k] for k in ("key", "value", "effect")}
    return [pool.add(cpu, labels=queues.node_labels, taints=[taint]) for _ in range(count)]


def workload_priority_class(addons: Addons, name: str, value: int) -> Callable[[], None]:
    """Creates a WorkloadPriorityClass; returns its deletion."""
    addons.custom.create_cluster_custom_object(KUEUE, KUEUE_VERSION, "workloadpriorityclasses", {
        "apiVersion": f"{KUEUE}/{KUEUE_VERSION}", "kind": "WorkloadPriorityClass",
        "metadata": {"name": name}, "value": value})

    def delete() -> None:
        with contextlib.suppress(client.ApiException):
            addons.custom.delete_cluster_custom_object(KUEUE, KUEUE_VERSION,
                                                       "workloadpriorityclasses", name)
    return delete


def workloads_of(addons: Addons, namespace: str, owner_uid: str) -> list[Obj]:
    workloads = addons.custom.list_namespaced_custom_object(
        KUEUE, KUEUE_VERSION, namespace, "workloads")["items"]
    return [w for w in workloads
            if any(r["uid"] == owner_uid for r in w["metadata"].get("ownerReferences", []))]


def condition_true(obj: Mapping[str, Any], kind: str) -> bool:
    found = condition(obj, kind)
    return bool(found and found.get("status") == "True")


@dataclass(frozen=True)
class KueueEnv:
    """One test's namespace, its queues, the flavor's two nodes and a watch of its pods."""

    addons: Addons
    namespace: str
    queues: Queues
    nodes: list[str]
    pods: PodLog


@contextlib.contextmanager
def kueue_env(addons: Addons, prefix: str = "kueue", *,
              labels: Mapping[str, str] | None = None) -> Iterator[KueueEnv]:
    """A namespace (with ``labels``) with its Kueue queues (:func:`make_queues`) and the
    flavor's nodes (:func:`flavor_nodes`); all removed afterwards."""
    namespace = new_namespace(addons, prefix, labels=labels)
    pool = NodePool(addons, namespace)
    queues: Queues | None = None
    log: PodLog | None = None
    try:
        queues = make_queues(addons, namespace)
        nodes = flavor_nodes(pool, queues)
        log = PodLog(addons, namespace)
        yield KueueEnv(addons, namespace, queues, nodes, log)
    finally:
        if log is not None:
            log.stop()
        pool.close()
        drop_namespace(addons, namespace)
        if queues is not None:
            queues.delete(addons)


def workload_when(env: KueueEnv, uid: str, kind: str, status: str = "True",
                  timeout: float = 90) -> Obj:
    """The job's one Workload once its condition ``kind`` has ``status``."""
    def probe() -> Obj | None:
        found = workloads_of(env.addons, env.namespace, uid)
        got = condition(found[0], kind) if len(found) == 1 else None
        return found[0] if got and got["status"] == status else None

    return wait_for(probe, timeout=timeout, what=f"the Workload to be {kind}={status}")


def job_condition(case: KindCase, env: KueueEnv, name: str, kind: str) -> Obj | None:
    return condition(case.get(env.addons, env.namespace, name), kind)


def wait_job(case: KindCase, env: KueueEnv, name: str, kind: str, timeout: float = 120) -> None:
    wait_for(lambda: condition_true(case.get(env.addons, env.namespace, name), kind),
             timeout=timeout, what=f"{case.kind} {name} to be {kind}")


def templates(case: KindCase, job: Mapping[str, Any]) -> dict[str, Obj]:
    """The job's pod templates, without empty ``metadata`` (Kueue's restore writes Go's
    empty ObjectMeta as ``metadata: {}``)."""
    out = {}
    for rtype, spec in job["spec"][case.field].items():
        template = dict(spec["template"])
        if not template.get("metadata"):
            template.pop("metadata", None)
        out[rtype] = template
    return out


def kueue_job_events(env: KueueEnv, case: KindCase, name: str) -> dict[str, int]:
    """Kueue's Events on the job (its job reconciler's reasons): reason -> count."""
    out: dict[str, int] = {}
    for event in events_of(env.addons, env.namespace, case.kind, name):
        if event["reason"] in ("CreatedWorkload", "Started", "Stopped", "FinishedWorkload"):
            out[event["reason"]] = out.get(event["reason"], 0) + event["count"]
    return out


# ---- operators ----------------------------------------------------------------------------------


class Operator:
    """The operator under test as a process: ``ours`` (``mpi-controller run``, no leader
    election, every kind whose CRD is installed unless ``flags`` say otherwise) or a reference
    Go operator (``mpi-operator``: v0.8.2; ``training-operator``: v1.9.2 with the five
    training kinds), started with ``flags`` against the cluster's controller identity. Only
    one may run at a time: they would fight over the same jobs."""

    def __init__(self, addons: Addons, name: str, log_dir: Path, *flags: str) -> None:
        self.addons = addons
        self.name = name
        log = log_dir / f"{name}.log"
        kubeconfig = addons.controller_kubeconfig
        self.proc: Any
        if name == "ours":
            from tests.processes import ControllerProcess

            self.proc = ControllerProcess(str(kubeconfig), log, "--no-leader-elect", *flags)
        elif name == "mpi-operator":
            from conformance import operators

            self._lock_namespace()
            self.proc = operators.go_mpi_operator(kubeconfig, list(flags), log)
        elif name == "training-operator":
            from conformance.training_operator import reference_process

            self.proc = reference_process(kubeconfig, list(flags), log)
        else:
            raise ValueError(f"unknown operator {name!r}")

    def _lock_namespace(self) -> None:
        """mpi-operator's Lease namespace exists and no earlier run's Lease blocks it (it does
        not release its Lease on exit)."""
        with contextlib.suppress(client.ApiException):
            self.addons.core.create_namespace({"metadata": {"name": "mpi-operator"}})
        with contextlib.suppress(client.ApiException):
            client.CoordinationV1Api(self.addons.api).delete_namespaced_lease(
                "mpi-operator", "mpi-operator")

    ready_seconds = 0.0
    """How long the last start took to be ready."""

    def start(self) -> float:
        """Starts it; the seconds until it is ready."""
        started = time.monotonic()
        self.proc.start()
        self.proc.wait_ready(180)
        self.ready_seconds = round(time.monotonic() - started, 1)
        return self.ready_seconds

    def stop(self) -> int | None:
        code: int | None = self.proc.stop()
        return code

    def log(self) -> str:
        text: str = self.proc.log()
        return text


@contextlib.contextmanager
def running(operator: Operator) -> Iterator[Operator]:
    operator.start()
    try:
        yield operator
    finally:
        operator.stop()


@contextlib.contextmanager
def ours_for_module(addons: Addons, log_dir: Path, *flags: str) -> Iterator[Operator]:
    """This controller (:class:`Operator` ``ours`` with ``flags``) for a test module; at the
    end it must exit 0 on SIGTERM."""
    operator = Operator(addons, "ours", log_dir, *flags)
    operator.start()
    yield operator
    code = operator.stop()
    assert code == 0, f"the controller exited {code} on SIGTERM:\n{operator.log()[-4000:]}"


@contextlib.contextmanager
def trainjob_controller(addons: Addons, log: Path) -> Iterator[None]:
    """``mpi-controller run --enable-scheme trainjob`` as the cluster's admin, ready."""
    from tests.processes import ControllerProcess

    process = ControllerProcess(str(addons.kubeconfig), log, "--enable-scheme", "trainjob",
                                "--no-leader-elect")
    process.start()
    try:
        process.wait_ready(120)
        yield
    finally:
        process.stop()


def install_trainer_crds(addons: Addons) -> None:
    """The ``trainer.kubeflow.org`` CRDs (``deploy/crd/trainjob``, outside the default
    install) applied on the addons cluster and Established (``hack/install-crd.sh`` polls)."""
    import subprocess

    from tests.support import REPO

    done = subprocess.run(["bash", str(REPO / "hack" / "install-crd.sh"), "deploy/crd/trainjob"],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "KUBECONFIG": str(addons.kubeconfig)})
    assert done.returncode == 0, done.stdout + done.stderr


def trainjob_addons() -> Iterator[Addons]:
    """A TrainJob test module's addons cluster (the module's ``addons`` fixture yields from
    it): JobSet up, the trainer CRDs installed; closed afterwards."""
    found = open_addons()
    found.require("jobset")
    install_trainer_crds(found)
    yield found
    found.api.close()
