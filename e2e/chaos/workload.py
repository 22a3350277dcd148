"""The workload of a fault run: jobs of every kind (:mod:`e2e.chaos.kinds`; MPIJobs by
default) in one namespace, driven through the official sync client (an observer independent
of the controller), with retries so that the driver itself survives API server restarts and
429s."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from e2e.chaos.kinds import KINDS
from tests.mpijobs import DURATION, EXIT_CODE, GROUP, PLURAL, VERSION, small_job

T = TypeVar("T")
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
ROLE_LABEL = "training.kubeflow.org/job-role"
RTYPE_LABEL = "training.kubeflow.org/replica-type"
V1ALPHA2_JOB_LABEL, V1ALPHA2_ROLE_LABEL = "mpi_job_name", "mpi_role_type"
JOB_KINDS = {s.kind: s for s in reversed(KINDS.values())}  # kind -> how to read it
OWNER_KINDS = frozenset({*JOB_KINDS, "Job", "StatefulSet"})


def resource_of(plan: Any) -> tuple[str, str]:
    """(version, plural) to create ``plan``'s job through (an MPIJob v2beta1 plan has no
    ``key``)."""
    spec = KINDS[getattr(plan, "key", "mpijob-v2beta1")]
    return spec.create_version, spec.plural


def pod_role(labels: dict[str, str]) -> tuple[str | None, str | None]:
    """(job, replica type in lower case) of a pod by its labels, any kind or version."""
    job = labels.get(JOB_NAME_LABEL) or labels.get(V1ALPHA2_JOB_LABEL)
    rtype = labels.get(RTYPE_LABEL) or labels.get(ROLE_LABEL) or labels.get(V1ALPHA2_ROLE_LABEL)
    return job, rtype.lower() if rtype else None


def retrying(call: Callable[[], T], *, timeout: float = 120.0, what: str = "API call") -> T:
    """``call()`` until it stops failing with a transient error (connection refused while the
    API server restarts, 429, 5xx, timeouts); other API errors are raised at once."""
    deadline = time.monotonic() + timeout
    delay = 0.2
    while True:
        try:
            return call()
        except ApiException as exc:
            if exc.status not in (0, 429, 500, 502, 503, 504) or time.monotonic() > deadline:
                raise
        except Exception:
            if time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 3.0)
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: still failing after {timeout}s")


@dataclass
class JobPlan:
    name: str
    workers: int
    expected: str  # "Succeeded" or "Failed"
    body: dict[str, Any]


@dataclass
class Outcome:
    """What the workload observed."""

    converged: int = 0
    expected: int = 0
    wrong: dict[str, str] = field(default_factory=dict)  # name -> condition seen
    stuck: list[str] = field(default_factory=list)
    finished_at: dict[str, float] = field(default_factory=dict)  # name -> monotonic time
    max_workers_over: dict[str, int] = field(default_factory=dict)  # name -> max seen - replicas
    orphans: list[str] = field(default_factory=list)


def plan_jobs(count: int, workers: int, *, seed: int, fail_every: int = 10,
              min_s: int = 10, max_s: int = 30, prefix: str = "cj") -> list[JobPlan]:
    """``count`` jobs; every ``fail_every``-th launcher exits 1 (backoffLimit 0: Failed)."""
    rng = random.Random(seed)
    plans = []
    for i in range(count):
        name = f"{prefix}-{i:03d}"
        body = small_job(name, workers=workers, launcher_runs=f"{rng.randint(min_s, max_s)}s",
                         run_policy={"backoffLimit": 0})
        expected = "Succeeded"
        if fail_every and i % fail_every == fail_every - 1:
            launcher = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"]
            launcher["annotations"][EXIT_CODE] = "1"
            expected = "Failed"
        plans.append(JobPlan(name, workers, expected, body))
    return plans


class Workload:
    """MPIJobs in ``namespace`` on the cluster of ``kubeconfig`` (admin)."""

    def __init__(self, kubeconfig: str, namespace: str) -> None:
        self.api = config.new_client_from_config(config_file=kubeconfig)
        self.custom = client.CustomObjectsApi(self.api)
        self.core = client.CoreV1Api(self.api)
        self.batch = client.BatchV1Api(self.api)
        self.namespace = namespace
        self.plans: dict[str, JobPlan] = {}
        self._sampling = threading.Event()
        self._sampler: threading.Thread | None = None
        self.max_workers: Counter[str] = Counter()
        self.max_pods: Counter[tuple[str, str]] = Counter()  # (job, replica type) -> most live
        self.max_hpas: Counter[str] = Counter()  # job -> most HPAs at once
        self.max_statefulset: Counter[str] = Counter()  # StatefulSet -> highest spec.replicas
        self.autoscaling = client.AutoscalingV2Api(self.api)
        self.apps = client.AppsV1Api(self.api)

    def close(self) -> None:
        self.stop_sampling()
        self.api.close()

    # -- namespace -----------------------------------------------------------------------

    def create_namespace(self) -> None:
        body = {"metadata": {"name": self.namespace, "labels": {"mpi-controller-chaos": "true"}}}
        try:
            retrying(lambda: self.core.create_namespace(body))
        except ApiException as exc:
            if exc.status != 409:
                raise
        deadline = time.monotonic() + 60
        while not self.core.list_namespaced_service_account(
                self.namespace, field_selector="metadata.name=default").items:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no default ServiceAccount in {self.namespace}")
            time.sleep(0.2)

    def delete_namespace(self) -> None:
        # The MPIJobs first, through the stored version (the namespace controller would list
        # them through v1, which needs the conversion webhook).
        with contextlib.suppress(ApiException):
            retrying(lambda: self.custom.delete_collection_namespaced_custom_object(
                GROUP, VERSION, self.namespace, PLURAL))
        try:
            retrying(lambda: self.core.delete_namespace(self.namespace))
        except ApiException as exc:
            if exc.status != 404:
                raise

    # -- jobs ----------------------------------------------------------------------------

    def submit(self, plans: Iterable[JobPlan], *, parallel: int = 8,
               pace: float = 0.0) -> None:
        plans = list(plans)
        for p in plans:
            self.plans[p.name] = p

        def create(p: JobPlan) -> None:
            version, plural = resource_of(p)
            try:
                retrying(lambda: self.custom.create_namespaced_custom_object(
                    GROUP, version, self.namespace, plural, p.body), what=f"create {p.name}")
            except ApiException as exc:
                if exc.status != 409:  # a retried create that had gone through
                    raise
            if pace:
                time.sleep(pace)

        with ThreadPoolExecutor(parallel) as pool:
            list(pool.map(create, plans))

    def submit_raw(self, body: dict[str, Any]) -> dict[str, Any] | ApiException:
        """Create one object as is; returns the API's answer or its error (not raised)."""
        try:
            return retrying(lambda: self.custom.create_namespaced_custom_object(  # type: ignore[no-any-return]
                GROUP, VERSION, self.namespace, PLURAL, body))
        except ApiException as exc:
            return exc

    def read_resources(self) -> list[tuple[str, str]]:
        """(version, plural) of every kind the workload has (MPIJobs always), as read."""
        kinds = {KINDS[getattr(p, "key", "mpijob-v2beta1")] for p in self.plans.values()}
        out = {(VERSION, PLURAL)} | {(s.read_version, s.plural) for s in kinds}
        return sorted(out)

    def list_jobs(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for version, plural in self.read_resources():
            out = retrying(lambda v=version, p=plural: self.custom.list_namespaced_custom_object(  # type: ignore[misc]
                GROUP, v, self.namespace, p), what=f"list {plural}")
            items += out["items"]
        return items

    def delete_job(self, name: str, kind: str = "MPIJob") -> None:
        plan = self.plans.get(name)
        spec = KINDS[plan.key] if plan is not None and hasattr(plan, "key") else JOB_KINDS[kind]
        try:
            retrying(lambda: self.custom.delete_namespaced_custom_object(
                GROUP, spec.read_version, self.namespace, spec.plural, name))
        except ApiException as exc:
            if exc.status != 404:
                raise
        self.plans.pop(name, None)

    @staticmethod
    def terminal(job: dict[str, Any]) -> str | None:
        for cond in (job.get("status") or {}).get("conditions") or []:
            if cond.get("type") in ("Succeeded", "Failed") and cond.get("status") == "True":
                return str(cond["type"])
        return None

    def wait_converged(self, timeout: float, *, on_poll: Callable[[], None] | None = None,
                       interval: float = 2.0) -> Outcome:
        """Poll until every planned job is terminal or ``timeout`` passes."""
        outcome = Outcome(expected=len(self.plans))
        deadline = time.monotonic() + timeout
        while True:
            if on_poll is not None:
                on_poll()
            seen = {j["metadata"]["name"]: self.terminal(j) for j in self.list_jobs()}
            now = time.monotonic()
            for name in self.plans:
                if seen.get(name) and name not in outcome.finished_at:
                    outcome.finished_at[name] = now
            if all(seen.get(n) for n in self.plans) or now > deadline:
                break
            time.sleep(interval)
        for name, plan in self.plans.items():
            got = seen.get(name)
            if got is None:
                outcome.stuck.append(name)
            elif got != plan.expected:
                outcome.wrong[name] = got
            else:
                outcome.converged += 1
        return outcome

    # -- workers beyond replicas -----------------------------------------------------------

    def sample_workers(self) -> None:
        """The most live pods per job's workers and per (job, replica type), HPAs per job
        and StatefulSet replicas seen so far."""
        pods = retrying(lambda: self.core.list_namespaced_pod(self.namespace),
                        what="list pods").items
        by_type: Counter[tuple[str, str]] = Counter()
        for pod in pods:
            job, rtype = pod_role(pod.metadata.labels or {})
            if pod.metadata.deletion_timestamp is None and job and rtype:
                by_type[(job, rtype)] += 1
        for (job, rtype), n in by_type.items():
            self.max_pods[(job, rtype)] = max(self.max_pods[(job, rtype)], n)
            if rtype == "worker":
                self.max_workers[job] = max(self.max_workers[job], n)
        kinds = {getattr(p, "key", "") for p in self.plans.values()}
        if "pytorchjob" in kinds:
            hpas = retrying(lambda: self.autoscaling.list_namespaced_horizontal_pod_autoscaler(
                self.namespace), what="list HPAs").items
            owners: Counter[str] = Counter(
                ref.name for h in hpas for ref in h.metadata.owner_references or [])
            for job, n in owners.items():
                self.max_hpas[job] = max(self.max_hpas[job], n)
        if "mpijob-v1alpha2" in kinds:
            sets = retrying(lambda: self.apps.list_namespaced_stateful_set(self.namespace),
                            what="list StatefulSets").items
            for st in sets:
                name = st.metadata.name
                self.max_statefulset[name] = max(self.max_statefulset[name],
                                                 st.spec.replicas or 0)

    def start_sampling(self, interval: float = 2.0) -> None:
        def loop() -> None:
            while not self._sampling.wait(interval):
                with contextlib.suppress(Exception):
                    self.sample_workers()

        if self._sampler is not None and self._sampler.is_alive():
            return  # already sampling (since the run started)
        self._sampling.clear()
        self._sampler = threading.Thread(target=loop, daemon=True)
        self._sampler.start()

    def stop_sampling(self) -> None:
        self._sampling.set()
        if self._sampler is not None:
            self._sampler.join(timeout=30)
            self._sampler = None

    def workers_over(self) -> dict[str, int]:
        out = {}
        for name, n in self.max_workers.items():
            plan = self.plans.get(name)
            if plan is not None and n > plan.workers:
                out[name] = n - plan.workers
        return out

    # -- cleanup -------------------------------------------------------------------------

    def children(self) -> list[str]:
        """Every object an MPIJob owns that is still in the namespace (kind/name)."""
        ns = self.namespace
        found: list[str] = []
        listings: list[tuple[str, Callable[[], Any]]] = [
            ("pod", lambda: self.core.list_namespaced_pod(ns)),
            ("job", lambda: self.batch.list_namespaced_job(ns)),
            ("service", lambda: self.core.list_namespaced_service(ns)),
            ("configmap", lambda: self.core.list_namespaced_config_map(ns)),
            ("secret", lambda: self.core.list_namespaced_secret(ns)),
            ("statefulset", lambda: self.apps.list_namespaced_stateful_set(ns)),
            ("hpa", lambda: self.autoscaling.list_namespaced_horizontal_pod_autoscaler(ns)),
        ]
        for kind, call in listings:
            for item in retrying(call, what=f"list {kind}s").items:
                refs = item.metadata.owner_references or []
                labels = item.metadata.labels or {}
                if refs or JOB_NAME_LABEL in labels or V1ALPHA2_JOB_LABEL in labels \
                        or "app" in labels:
                    if any(r.kind not in OWNER_KINDS for r in refs):
                        continue
                    found.append(f"{kind}/{item.metadata.name}")
        return found

    def delete_all_and_find_orphans(self, timeout: float = 180.0) -> list[str]:
        for job in self.list_jobs():
            self.delete_job(job["metadata"]["name"], job.get("kind", "MPIJob"))
        deadline = time.monotonic() + timeout
        while True:
            left = self.children()
            if not left and not self.list_jobs():
                return []
            if time.monotonic() > deadline:
                return left
            time.sleep(2.0)


def job_annotations(plan: JobPlan) -> dict[str, str]:
    meta = plan.body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"]
    return dict(meta.get("annotations") or {})


__all__ = ["DURATION", "JobPlan", "Outcome", "Workload", "job_annotations", "plan_jobs",
           "pod_role", "resource_of", "retrying"]
