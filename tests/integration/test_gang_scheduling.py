"""Gang scheduling that gangs: every kind of the registry, run by this controller (``mpi-controller
run --gang-scheduling volcano`` or ``--gang-scheduling scheduler-plugins-scheduler``) on the
addons cluster, scheduled by the real Volcano ``vc-scheduler`` v1.10.0 or scheduler-plugins
v0.32.7's Coscheduling (``hack/local-cluster.sh up --addons volcano,scheduler-plugins``).

Each test gives a namespace two KWOK nodes of 2 CPUs and creates three jobs of 3 pods of 1 CPU
at once: A (``schedulingPolicy.priorityClass``) and B (``schedulingPolicy.queue: default``) fit on
the nodes one at a time but not together; C asks for a PodGroup whose ``minResources``
(``schedulingPolicy.minResources: {cpu: 100000}``) no cluster has. It asserts:

* the PodGroups' specs as the Go operators write them (mpi-operator v0.8.2 ``podgroup.go``,
  training-operator v1.9.2 ``SyncPodGroup``): ``minMember``, ``minResources`` (the pods'
  requests, or the policy's verbatim), Volcano's ``queue`` (the policy's; else for an MPIJob
  none, left to the scheduler's default queue, for the training kinds ``default``) and
  ``priorityClassName`` (the policy's), scheduler-plugins' ``scheduleTimeoutSeconds`` (MPIJob:
  0; the training kinds: none);
* that A and B are never partially placed: one of them gets all its pods bound (within the
  scheduler's wait: one Volcano session, Coscheduling's ``permitWaitingTimeSeconds``), the other
  none until the first finishes and frees the nodes; then the second gets all of its own; both
  succeed; the pods are on the test's nodes, at most 2 CPUs a node;
* that C stays Pending with nothing bound: with Volcano the PodGroup stays in phase
  ``Pending`` with an ``Unschedulable`` condition (``NotEnoughResources``) and the training kinds
  create no pod at all (training-operator waits for the PodGroup to leave ``Pending``), the
  MPIJob's pods wait; with Coscheduling every pod is refused for the resource gap; the job's
  conditions and Events are the Go operators' for a job that never starts.

The controller runs once per scheduler for the whole module. What each test measured (its
time, how long after the jobs' creation the first gang was placed, how long after the first gang
began to end the second was, the longest a gang was seen partly bound) is written to
``<cluster dir>/results/gang-scheduling.json``. ``make addons-test`` runs this file on a
cluster with the addons; elsewhere it is skipped.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client

from tests.addons import (
    Addons,
    KindCase,
    NodePool,
    Operator,
    PodLog,
    bind_spread,
    condition,
    condition_true,
    drop_namespace,
    events_of,
    first_end,
    kind_cases,
    new_namespace,
    open_addons,
    quantities_equal,
    write_results,
)
from tests.support import wait_for

pytestmark = pytest.mark.cluster

CASES = kind_cases()
POOL_LABEL = "gang.addons-test.mpi-controller.io/pool"
TOO_BIG = {"cpu": "100000"}
TIMING: dict[str, dict[str, float]] = {}


@dataclass(frozen=True)
class Scheduler:
    addon: str
    name: str
    group: str
    version: str
    wait: float
    """How long a gang may be seen partly bound: Coscheduling holds every member at Permit
    until minMember are (``permitWaitingTimeSeconds: 10``); Volcano binds a gang's tasks
    together at the end of one session (1 s period), the binds reaching the API within a few
    seconds on a loaded machine."""

    @property
    def volcano(self) -> bool:
        return self.addon == "volcano"

    def pod_group(self, addons: Addons, namespace: str, name: str) -> dict[str, Any]:
        got: dict[str, Any] = addons.custom.get_namespaced_custom_object(
            self.group, self.version, namespace, "podgroups", name)
        return got


SCHEDULERS = {
    "volcano": Scheduler("volcano", "volcano", "scheduling.volcano.sh", "v1beta1", wait=5.0),
    "scheduler-plugins": Scheduler("scheduler-plugins", "scheduler-plugins-scheduler",
                                   "scheduling.x-k8s.io", "v1alpha1", wait=10.0),
}


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    opened = open_addons()
    yield opened
    write_results(opened, "gang-scheduling", TIMING)
    opened.api.close()


@pytest.fixture(scope="module", params=sorted(SCHEDULERS))
def scheduler(request: pytest.FixtureRequest, addons: Addons,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scheduler]:
    """This controller with ``--gang-scheduling <scheduler>``, for the module."""
    chosen = SCHEDULERS[request.param]
    addons.require(chosen.addon)
    operator = Operator(addons, "ours", tmp_path_factory.mktemp(f"gang-{chosen.addon}"),
                        "--gang-scheduling", chosen.name)
    operator.start()
    yield chosen
    code = operator.stop()
    assert code == 0, f"the controller exited {code} on SIGTERM:\n{operator.log()[-4000:]}"


@contextlib.contextmanager
def gang_namespace(addons: Addons) -> Iterator[tuple[str, list[str], PodLog]]:
    """A namespace, its two 2-CPU nodes (labelled ``POOL_LABEL=<namespace>``) and a watch of its
    pods; all removed afterwards."""
    namespace = new_namespace(addons, "gang")
    pool = NodePool(addons, namespace)
    log: PodLog | None = None
    try:
        nodes = [pool.add("2", labels={POOL_LABEL: namespace}) for _ in range(2)]
        log = PodLog(addons, namespace)
        yield namespace, nodes, log
    finally:
        if log is not None:
            log.stop()
        pool.close()
        drop_namespace(addons, namespace)


@contextlib.contextmanager
def priority_class(addons: Addons, name: str, value: int) -> Iterator[str]:
    client.SchedulingV1Api(addons.api).create_priority_class(
        {"metadata": {"name": name}, "value": value})
    try:
        yield name
    finally:
        with contextlib.suppress(client.ApiException):
            client.SchedulingV1Api(addons.api).delete_priority_class(name)


def expected_pod_group(case: KindCase, scheduler: Scheduler, *, priority: str = "",
                       queue: str = "",
                       min_resources: dict[str, str] | None = None) -> dict[str, Any]:
    """The PodGroup spec the Go operator writes for a job of the test's layout."""
    spec: dict[str, Any] = {"minMember": case.pods,
                            "minResources": min_resources or {"cpu": "3", "memory": "300Mi"}}
    if scheduler.volcano:
        # The policy's queue; else mpi-operator none (vc-scheduler takes its default queue),
        # training-operator "default".
        if queue or not case.mpi:
            spec["queue"] = queue or "default"
        if priority:
            spec["priorityClassName"] = priority
    elif case.mpi:  # mpi-operator: the policy's timeout or 0; training-operator: none
        spec["scheduleTimeoutSeconds"] = 0
    return spec


def assert_pod_group(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    spec = dict(actual["spec"])
    assert quantities_equal(spec.pop("minResources", None), expected["minResources"]), (
        actual["spec"], expected)
    rest = {k: v for k, v in expected.items() if k != "minResources"}
    assert spec == rest, (actual["spec"], expected)


def succeeded(case: KindCase, addons: Addons, namespace: str, name: str) -> bool:
    return condition_true(case.get(addons, namespace, name), "Succeeded")


@pytest.mark.parametrize("case", CASES, ids=[c.scheme for c in CASES])
def test_two_gangs_never_partially_placed(addons: Addons, scheduler: Scheduler,
                                          case: KindCase) -> None:
    started = time.monotonic()
    with gang_namespace(addons) as (namespace, nodes, log):
        suffix = namespace.rsplit("-", 1)[1][:6]
        a, b, c = (f"{x}-{suffix}" for x in "abc")
        with priority_class(addons, f"{namespace}-high", 1000) as high:
            selector = {POOL_LABEL: namespace}
            created = time.time()
            for name, policy in ((a, {"priorityClass": high}), (b, {"queue": "default"}),
                                 (c, {"minResources": TOO_BIG})):
                body = case.manifest(name, node_selector=selector,
                                     run_policy={"schedulingPolicy": policy} if policy else None)
                case.create(addons, namespace, body)

            # The PodGroups, as the Go operators write them.
            groups = {name: wait_for(
                lambda n=name: scheduler.pod_group(addons, namespace, n), timeout=60,
                what=f"the PodGroup of {name}") for name in (a, b, c)}
            assert_pod_group(groups[a], expected_pod_group(case, scheduler, priority=high))
            assert_pod_group(groups[b], expected_pod_group(case, scheduler, queue="default"))
            assert_pod_group(groups[c], expected_pod_group(case, scheduler,
                                                           min_resources=TOO_BIG))

            # One gang is placed whole; the other waits with nothing bound.
            def placed() -> str | None:
                return next((n for n in (a, b) if len(log.of(n)) == case.pods
                             and all(t.bound for t in log.of(n))), None)

            first = wait_for(placed, timeout=120, what=f"{a} or {b} to be placed whole")
            second = b if first == a else a
            placed_in = max(t.bound or 0 for t in log.of(first)) - created
            assert not any(t.bound for t in log.of(second)), "both gangs placed at once"
            wait_for(lambda: succeeded(case, addons, namespace, first), timeout=120,
                     what=f"{first} to succeed")
            wait_for(lambda: len(log.of(second)) == case.pods
                     and all(t.bound for t in log.of(second)), timeout=120,
                     what=f"{second} to be placed once {first} is done")
            wait_for(lambda: succeeded(case, addons, namespace, second), timeout=120,
                     what=f"{second} to succeed")

            for name in (first, second):
                tracks = log.of(name)
                spread = bind_spread(tracks)
                assert spread < scheduler.wait, (name, spread, [(t.name, t.bound)
                                                               for t in tracks])
                per_node: dict[str, float] = {}
                for t in tracks:
                    assert t.node in nodes, (t.name, t.node)
                    assert (t.last.get("spec") or {}).get("schedulerName") == scheduler.name
                    per_node[t.node] = per_node.get(t.node, 0.0) + t.cpu
                assert all(cpu <= 2 for cpu in per_node.values()), per_node
            # The second gang's first pod was bound only after the first gang began to end.
            end = first_end(log.of(first))
            assert end is not None
            bound_second = min(t.bound or 0 for t in log.of(second))
            assert bound_second >= end, (end, bound_second)

            assert_never_started(addons, scheduler, case, namespace, c, log)
    TIMING[f"{scheduler.addon}/{case.scheme}"] = {
        "seconds": round(time.monotonic() - started, 1),
        "first_placed_after": round(placed_in, 2),
        "second_placed_after_first_ended": round(bound_second - end, 2),
        "max_bind_spread": round(max(bind_spread(log.of(n)) for n in (a, b)), 2),
    }


def assert_never_started(addons: Addons, scheduler: Scheduler, case: KindCase, namespace: str,
                         name: str, log: PodLog) -> None:
    """Job ``name``, whose PodGroup asks for more than any cluster has, is Pending."""
    tracks = log.of(name)
    assert not any(t.bound for t in tracks), [(t.name, t.node) for t in tracks]
    job = case.get(addons, namespace, name)
    conditions = [(x["type"], x["status"], x["reason"])
                  for x in (job.get("status") or {}).get("conditions") or []]
    assert conditions == [("Created", "True", f"{case.kind}Created")], conditions
    group = scheduler.pod_group(addons, namespace, name)
    if scheduler.volcano:
        # vc-scheduler's enqueue action refuses the group (overcommit: its minResources exceed
        # what the cluster has), so the group stays Pending, Unschedulable.
        status = group.get("status") or {}
        assert status.get("phase") == "Pending", status
        unschedulable = condition(group, "Unschedulable") or {}
        assert (unschedulable.get("status"), unschedulable.get("reason")) == (
            "True", "NotEnoughResources"), status
        if not case.mpi:
            # training-operator creates no pod while its PodGroup is Pending.
            assert tracks == [], [t.name for t in tracks]
            assert case.job_pods(addons, namespace, name) == []
    else:
        pods = case.job_pods(addons, namespace, name)
        assert len(pods) == case.pods
        for pod in pods:
            message = next((x.message or "" for x in pod.status.conditions or []
                            if x.type == "PodScheduled" and x.status == "False"), "")
            assert "resource gap" in message or "rejected" in message, (pod.metadata.name,
                                                                         message)
    # Our Events on the job, as the Go operators record them for a job that never starts.
    events = [e for e in events_of(addons, namespace, case.kind, name)
              if e["source"] not in ("volcano", scheduler.name)]
    if case.mpi:
        assert [(e["type"], e["reason"], e["message"]) for e in events] == [
            ("Normal", "MPIJobCreated", f"MPIJob {namespace}/{name} is created.")], events
    elif scheduler.volcano:
        # training-operator: nothing while the PodGroup is Pending, only lastReconcileTime.
        assert events == [], events
        assert (job.get("status") or {}).get("lastReconcileTime"), job.get("status")
    else:
        # training-operator: each pod and Service created, then each unscheduled pod's last
        # condition (RecordAbnormalPods): "Error pod <pod> condition message: <message>".
        names = [f"{name}-{r.rtype.lower()}-{i}" for r in case.replicas for i in range(r.count)]
        normal = sorted((e["reason"], e["message"]) for e in events if e["type"] == "Normal")
        assert normal == sorted([("SuccessfulCreatePod", f"Created pod: {n}") for n in names]
                                + [("SuccessfulCreateService", f"Created service: {n}")
                                   for n in names]), normal
        warnings = [e for e in events if e["type"] == "Warning"]
        pattern = re.compile(rf"Error pod ({'|'.join(names)}) condition message: .+")
        assert warnings, events
        assert all(e["reason"] == "Unschedulable" and pattern.fullmatch(e["message"])
                   for e in warnings), warnings
    if scheduler.volcano:
        group_events = events_of(addons, namespace, "PodGroup", name)
        assert any(e["type"] == "Warning" and e["reason"] == "Unschedulable"
                   and e["source"] == "volcano" for e in group_events), group_events
