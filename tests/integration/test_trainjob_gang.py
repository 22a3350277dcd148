"""TrainJob gang scheduling that gangs: a TrainingRuntime with a ``podGroupPolicy``
(``coscheduling`` or ``volcano``) whose pods name the scheduler, run by this controller
(``--enable-scheme trainjob``) through the real JobSet controller, scheduled by the real
scheduler-plugins Coscheduling or Volcano ``vc-scheduler`` of the addons cluster
(``hack/local-cluster.sh up --addons jobset,volcano,scheduler-plugins``).

Each test gives a namespace two KWOK nodes of 2 CPUs and creates two TrainJobs of 3 nodes of 1
CPU at once, which fit one at a time. It asserts:

* each PodGroup as Trainer v2.3.0's plugins make it (``coscheduling.go``/``volcano.go``
  ``Build``): named as the TrainJob, controlled by it, ``minMember`` 3, ``minResources`` 3 CPUs,
  ``scheduleTimeoutSeconds`` the policy's (coscheduling), the runtime's queue annotation and
  the pods' ``priorityClassName`` (Volcano);
* every pod carries the group's label ``scheduling.x-k8s.io/pod-group`` (coscheduling) or
  annotation ``scheduling.k8s.io/group-name`` (Volcano) and the runtime's scheduler;
* one TrainJob's pods are all bound while the other's are none; both complete.

``make addons-test`` runs it; elsewhere it is skipped.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client

from tests.addons import (
    Addons,
    NodePool,
    drop_namespace,
    new_namespace,
    trainjob_addons,
    trainjob_controller,
)
from tests.support import HACK, unique_name, wait_for

pytestmark = pytest.mark.cluster

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
POOL_LABEL = "gang.addons-test.mpi-controller.io/pool"


@dataclass(frozen=True)
class Scheduler:
    addon: str
    name: str
    group: str
    version: str
    policy: dict[str, Any]


SCHEDULERS = {
    "scheduler-plugins": Scheduler("scheduler-plugins", "scheduler-plugins-scheduler",
                                   "scheduling.x-k8s.io", "v1alpha1",
                                   {"coscheduling": {"scheduleTimeoutSeconds": 30}}),
    "volcano": Scheduler("volcano", "volcano", "scheduling.volcano.sh", "v1beta1",
                         {"volcano": {}}),
}


def _kubectl(addons: Addons, *args: str) -> str:
    binary = subprocess.run(["bash", str(HACK), "bin-dir"], capture_output=True, text=True,
                            check=True).stdout.strip() + "/kubectl"
    done = subprocess.run([binary, "--kubeconfig", str(addons.kubeconfig), *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    yield from trainjob_addons()


@pytest.fixture(scope="module")
def controller(addons: Addons, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with trainjob_controller(addons, tmp_path_factory.mktemp("trainjob-gang") / "controller.log"):
        yield


@contextlib.contextmanager
def gang_namespace(addons: Addons) -> Iterator[str]:
    namespace = new_namespace(addons, "tjgang")
    pool = NodePool(addons, namespace)
    try:
        for _ in range(2):
            pool.add("2", labels={POOL_LABEL: namespace})
        yield namespace
    finally:
        pool.close()
        drop_namespace(addons, namespace)


@contextlib.contextmanager
def priority_class(addons: Addons, name: str) -> Iterator[str]:
    client.SchedulingV1Api(addons.api).create_priority_class(
        {"metadata": {"name": name}, "value": 100})
    try:
        yield name
    finally:
        with contextlib.suppress(client.ApiException):
            client.SchedulingV1Api(addons.api).delete_priority_class(name)


def runtime(namespace: str, scheduler: Scheduler, priority: str) -> dict[str, Any]:
    pod: dict[str, Any] = {"schedulerName": scheduler.name, "nodeSelector": {POOL_LABEL: namespace},
                           "containers": [{"name": "node", "image": "busybox", "resources": {
                               "requests": {"cpu": "1"}}}]}
    meta: dict[str, Any] = {}
    if scheduler.addon == "volcano":
        pod["priorityClassName"] = priority
        meta = {"annotations": {"scheduling.volcano.sh/queue-name": "default"}}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainingRuntime",
            "metadata": {"name": "gang", "namespace": namespace},
            "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
                     "podGroupPolicy": scheduler.policy,
                     "template": {"metadata": meta, "spec": {"replicatedJobs": [{
                         "name": "node", "replicas": 1, "template": {
                             "metadata": {"labels": {ANCESTOR: "trainer"}},
                             "spec": {"template": {"spec": pod}}}}]}}}}


def pods_of(addons: Addons, namespace: str, name: str) -> list[Any]:
    pods: list[Any] = addons.core.list_namespaced_pod(
        namespace, label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items
    return pods


def complete(addons: Addons, namespace: str, name: str) -> bool:
    job = addons.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "trainjobs",
                                                     name)
    return any(c["type"] == "Complete" and c["status"] == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


@pytest.mark.parametrize("addon", sorted(SCHEDULERS))
def test_two_trainjob_gangs_placed_one_at_a_time(addons: Addons, controller: None,
                                                 addon: str) -> None:
    scheduler = SCHEDULERS[addon]
    addons.require(addon)
    with gang_namespace(addons) as namespace, \
            priority_class(addons, unique_name("tj-high")) as high:
        addons.custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "trainingruntimes", runtime(namespace, scheduler, high))
        names = ("a", "b")
        for name in names:
            addons.custom.create_namespaced_custom_object(
                GROUP, VERSION, namespace, "trainjobs", {
                    "apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainJob",
                    "metadata": {"name": name},
                    "spec": {"runtimeRef": {"name": "gang", "kind": "TrainingRuntime"},
                             "trainer": {"numNodes": 3}}})
        for name in names:
            group = wait_for(lambda n=name: _pod_group(addons, scheduler, namespace, n),
                             timeout=60, what=f"the PodGroup of {name}")
            uid = addons.custom.get_namespaced_custom_object(
                GROUP, VERSION, namespace, "trainjobs", name)["metadata"]["uid"]
            assert [(o["kind"], o["name"], o["uid"], o["controller"])
                    for o in group["metadata"]["ownerReferences"]] == [
                ("TrainJob", name, uid, True)]
            expected: dict[str, Any] = {"minMember": 3, "minResources": {"cpu": "3"}}
            if addon == "volcano":
                expected.update(queue="default", priorityClassName=high)
            else:
                expected["scheduleTimeoutSeconds"] = 30
            assert {k: group["spec"][k] for k in expected} == expected

        def placed() -> str | None:
            for name in names:
                pods = pods_of(addons, namespace, name)
                if len(pods) == 3 and all(p.spec.node_name for p in pods):
                    return name
            return None

        first = wait_for(placed, timeout=120, what="one TrainJob placed whole")
        second = "b" if first == "a" else "a"
        assert not any(p.spec.node_name for p in pods_of(addons, namespace, second)), \
            "both gangs placed at once"
        for name in (first, second):
            wait_for(lambda n=name: complete(addons, namespace, n), timeout=180,
                     what=f"{name} Complete")
        for name in names:
            for pod in pods_of(addons, namespace, name):
                assert pod.spec.scheduler_name == scheduler.name
                if addon == "volcano":
                    assert pod.metadata.annotations["scheduling.k8s.io/group-name"] == name
                else:
                    assert pod.metadata.labels["scheduling.x-k8s.io/pod-group"] == name


def _pod_group(addons: Addons, scheduler: Scheduler, namespace: str,
               name: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = addons.custom.get_namespaced_custom_object(
            scheduler.group, scheduler.version, namespace, "podgroups", name)
    except client.ApiException as err:
        if err.status == 404:
            return None
        raise
    return found
