"""The test cluster is a real one: the Job controller, the scheduler, KWOK and the garbage
collector are at work (none of this could pass against a fake API server)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from kubernetes import client, watch

from tests.support import unique_name, wait_for

pytestmark = pytest.mark.cluster

EXIT_CODE = "sim.mpi-controller.io/exit-code"
DURATION = "sim.mpi-controller.io/duration"


def _job(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"annotations": annotations or {}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36", "command": ["true"]}],
                },
            },
        },
    }


def _condition(obj: Any, ctype: str) -> str | None:
    for cond in obj.status.conditions or []:
        if cond.type == ctype:
            return str(cond.status)
    return None


def test_batch_job_runs_to_completion(kube_api: Any, namespace: str) -> None:
    batch = client.BatchV1Api(kube_api)
    core = client.CoreV1Api(kube_api)
    batch.create_namespaced_job(namespace, _job("hello", {DURATION: "1s"}))

    job = wait_for(
        lambda: (j := batch.read_namespaced_job("hello", namespace)) and
        _condition(j, "Complete") == "True" and j,
        timeout=90, what="Job hello to complete",
    )
    assert job.status.succeeded == 1
    pods = core.list_namespaced_pod(namespace, label_selector="job-name=hello").items
    assert len(pods) == 1
    pod = pods[0]
    assert pod.spec.node_name.startswith("kwok-node-")  # placed by the scheduler
    assert pod.status.phase == "Succeeded"
    terminated = pod.status.container_statuses[0].state.terminated
    assert (terminated.exit_code, terminated.reason) == (0, "Completed")


def test_pod_fails_with_the_chosen_exit_code(kube_api: Any, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    core.create_namespaced_pod(namespace, {
        "metadata": {"name": "crash", "annotations": {EXIT_CODE: "3", DURATION: "500ms"}},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "main", "image": "busybox:1.36"}]},
    })
    pod = wait_for(
        lambda: (p := core.read_namespaced_pod("crash", namespace)).status.phase == "Failed" and p,
        timeout=60, what="pod crash to fail",
    )
    terminated = pod.status.container_statuses[0].state.terminated
    assert (terminated.exit_code, terminated.reason) == (3, "Error")


def test_pod_without_owner_job_keeps_running(kube_api: Any, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    core.create_namespaced_pod(namespace, {
        "metadata": {"name": "worker"},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]},
    })
    pod = wait_for(
        lambda: (p := core.read_namespaced_pod("worker", namespace)).status.phase == "Running"
        and p,
        timeout=60, what="pod worker to run",
    )
    assert _condition(pod, "Ready") == "True"
    assert pod.status.pod_ip
    # Well past the default 3 s run time of Job pods, it still runs.
    with pytest.raises(AssertionError):
        wait_for(lambda: core.read_namespaced_pod("worker", namespace).status.phase != "Running",
                 timeout=5, what="worker to stop")


def _training_pod(name: str, operator: str, rtype: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {
        "training.kubeflow.org/operator-name": operator,
        "training.kubeflow.org/replica-type": rtype},
        "annotations": {DURATION: "1s"}},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "tensorflow", "image": "busybox:1.36"}]}}


def test_training_workers_finish_and_parameter_servers_serve(kube_api: Any,
                                                             namespace: str) -> None:
    """The pods of every training-operator kind (by their operator-name label): workers,
    chiefs and masters (XGBoostJob's tracker, PaddleJob's parameter servers) exit 0 after the
    duration; TFJob's parameter servers and evaluators, and MPI workers, keep running."""
    core = client.CoreV1Api(kube_api)
    finishing = [("tf-worker", "tfjob-controller", "worker"),
                 ("tf-chief", "tfjob-controller", "chief"),
                 ("pt-master", "pytorchjob-controller", "master"),
                 ("xgb-master", "xgboostjob-controller", "master"),
                 ("xgb-worker", "xgboostjob-controller", "worker"),
                 ("paddle-master", "paddlejob-controller", "master"),
                 ("paddle-worker", "paddlejob-controller", "worker"),
                 ("jax-worker", "jaxjob-controller", "worker")]
    serving = [("tf-ps", "tfjob-controller", "ps"),
               ("tf-evaluator", "tfjob-controller", "evaluator"),
               ("mpi-worker", "mpi-operator", "worker"),
               ("mpi-v1-worker", "mpijob-controller", "worker")]
    for name, operator, rtype in finishing + serving:
        core.create_namespaced_pod(namespace, _training_pod(name, operator, rtype))
    for name, _, _ in finishing:
        pod = wait_for(lambda name=name: (p := core.read_namespaced_pod(name, namespace))
                       .status.phase == "Succeeded" and p, timeout=60, what=f"{name} to finish")
        terminated = pod.status.container_statuses[0].state.terminated
        assert (terminated.exit_code, terminated.reason) == (0, "Completed")
    for name, _, _ in serving:
        assert core.read_namespaced_pod(name, namespace).status.phase == "Running", name


def test_garbage_collector_deletes_dependents(kube_api: Any, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    owner = core.create_namespaced_config_map(namespace, {"metadata": {"name": "owner"}})
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid,
           "controller": True, "blockOwnerDeletion": True}
    core.create_namespaced_secret(
        namespace, {"metadata": {"name": "child", "ownerReferences": [ref]}})
    core.delete_namespaced_config_map("owner", namespace)

    def child_gone() -> bool:
        names = [s.metadata.name for s in core.list_namespaced_secret(namespace).items]
        return "child" not in names

    wait_for(child_gone, timeout=60, what="the garbage collector to delete the dependent")


def test_pod_watch_sees_added_modified_deleted_in_order(kube_api: Any, namespace: str) -> None:
    core = client.CoreV1Api(kube_api)
    name = unique_name("watched")
    events: list[tuple[str, str]] = []
    rv = core.list_namespaced_pod(namespace).metadata.resource_version
    done = threading.Event()

    def watch_pods() -> None:
        w = watch.Watch()
        for ev in w.stream(core.list_namespaced_pod, namespace, resource_version=rv,
                           timeout_seconds=60):
            events.append((ev["type"], ev["object"].status.phase or ""))
            if ev["type"] == "DELETED":
                break
        done.set()

    thread = threading.Thread(target=watch_pods, daemon=True)
    thread.start()
    core.create_namespaced_pod(namespace, {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]},
    })
    wait_for(lambda: ("MODIFIED", "Running") in events, timeout=60, what="the pod to run")
    core.delete_namespaced_pod(name, namespace)
    assert done.wait(60), f"no DELETED event; saw {events}"
    kinds = [k for k, _ in events]
    assert kinds[0] == "ADDED"
    assert kinds[-1] == "DELETED"
    assert set(kinds[1:-1]) == {"MODIFIED"}
