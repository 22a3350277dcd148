"""The shared pod cache keeps exactly what the job kinds read, decoded without the rest, with
repeated strings interned and equal owner references and statuses shared."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from mpi_controller.engine.pods import POD_CODEC, pod_selector, same_for_jobs, slim_pod
from mpi_controller.kube.owners import controller_of
from mpi_controller.kube.pods import is_pod_ready, pod_phase

FULL_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
        "name": "pi-worker-0", "namespace": "ns", "uid": "u-0", "resourceVersion": "7",
        "labels": {"training.kubeflow.org/job-name": "pi",
                   "training.kubeflow.org/job-role": "worker",
                   "training.kubeflow.org/operator-name": "mpi-operator",
                   "training.kubeflow.org/replica-index": "0"},
        "ownerReferences": [{"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                             "name": "pi", "uid": "job-uid", "controller": True,
                             "blockOwnerDeletion": True}],
        "annotations": {"big": "x" * 1000}, "managedFields": [{"manager": "m"}],
        "creationTimestamp": "2026-12-02T16:18:10Z", "generation": 1,
    },
    "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "E"}]}]},
    "status": {"phase": "Running", "podIP": "10.0.0.1", "startTime": "2026-12-02T16:18:11Z",
               "conditions": [
                   {"type": "Initialized", "status": "True"},
                   {"type": "Ready", "status": "True", "lastTransitionTime": "t"},
                   {"type": "PodScheduled", "status": "True"}],
               "containerStatuses": [{"name": "c", "ready": True, "restartCount": 2,
                                      "image": "i", "containerID": "containerd://1",
                                      "state": {"running": {"startedAt": "t"}},
                                      "lastState": {"terminated": {"exitCode": 1}}}],
               "initContainerStatuses": [{"name": "init", "restartCount": 0, "state": {
                   "terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "t",
                                  "finishedAt": "t2", "containerID": "x"}}}]},
}
SLIM = {
    "metadata": {"name": "pi-worker-0", "uid": "u-0", "resourceVersion": "7", "namespace": "ns",
                 "creationTimestamp": "2026-12-02T16:18:10Z",
                 "labels": FULL_POD["metadata"]["labels"],
                 "ownerReferences": FULL_POD["metadata"]["ownerReferences"]},
    "status": {"phase": "Running",
               "conditions": [{"type": "Ready", "status": "True"}],
               "containerStatuses": [{"name": "c", "restartCount": 2, "state": {"running": {}}}],
               "initContainerStatuses": [{"name": "init", "restartCount": 0, "state": {
                   "terminated": {"exitCode": 0, "reason": "Completed"}}}]},
}


def worker(i: int) -> dict[str, Any]:
    pod = copy.deepcopy(FULL_POD)
    pod["metadata"]["name"] = f"pi-worker-{i}"
    pod["metadata"]["uid"] = f"u-{i}"
    pod["metadata"]["labels"]["training.kubeflow.org/replica-index"] = str(i)
    return pod


def test_slim_pod_keeps_only_what_the_controller_reads() -> None:
    assert slim_pod(FULL_POD) == SLIM


def test_failed_pod_keeps_reason_and_message() -> None:
    pod = copy.deepcopy(FULL_POD)
    pod["status"] = {"phase": "Failed", "reason": "Evicted", "message": "low on memory",
                     "conditions": [{"type": "Ready", "status": "False", "reason": "x",
                                     "lastTransitionTime": "t"}],
                     "containerStatuses": [{"name": "c", "restartCount": 0, "state": {
                         "terminated": {"exitCode": 137, "reason": "OOMKilled",
                                        "message": "killed", "signal": 9}}}]}
    pod["metadata"]["deletionTimestamp"] = "2026-12-02T16:20:00Z"
    slim = slim_pod(pod)
    assert slim["status"] == {
        "phase": "Failed", "reason": "Evicted", "message": "low on memory",
        "conditions": [{"type": "Ready", "status": "False", "reason": "x"}],
        "containerStatuses": [{"name": "c", "restartCount": 0, "state": {
            "terminated": {"exitCode": 137, "reason": "OOMKilled", "message": "killed"}}}]}
    assert slim["metadata"]["deletionTimestamp"] == "2026-12-02T16:20:00Z"


def test_the_codec_decodes_watch_events_and_pages_to_the_slim_fields() -> None:
    line = json.dumps({"type": "MODIFIED", "object": FULL_POD}).encode()
    event = POD_CODEC.decode_event(line)
    assert "spec" not in event["object"]
    assert "annotations" not in event["object"]["metadata"]
    assert slim_pod(event["object"]) == SLIM
    page = POD_CODEC.decode_list(json.dumps({"kind": "PodList", "apiVersion": "v1",
                                             "metadata": {"resourceVersion": "8"},
                                             "items": [FULL_POD]}).encode())
    assert [slim_pod(p) for p in page["items"]] == [SLIM]


def test_workers_of_a_job_share_owner_references_and_running_status() -> None:
    a, b = (slim_pod(POD_CODEC.decode_event(json.dumps(
        {"type": "ADDED", "object": worker(i)}).encode())["object"]) for i in (0, 1))
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]
    assert a["status"] is b["status"]
    assert a["metadata"]["labels"] is not b["metadata"]["labels"]
    role = "training.kubeflow.org/job-role"
    assert a["metadata"]["labels"][role] is b["metadata"]["labels"][role]


def test_statuses_share_only_when_every_kept_field_is_equal() -> None:
    base = FULL_POD["status"]
    variants: list[dict[str, Any]] = []
    for path, value in ((("phase",), "Pending"), (("reason",), None), (("message",), "m"),
                        (("conditions", 1, "status"), "False"),
                        (("conditions", 2), {"type": "PodScheduled", "status": "False"}),
                        (("conditions", 2), {"type": "PodScheduled", "status": "False",
                                             "reason": "r"}),
                        (("containerStatuses", 0, "restartCount"), 3),
                        (("containerStatuses", 0, "state"), {"waiting": {"reason": "w"}}),
                        (("containerStatuses", 0, "state"), {"running": {}, "waiting": {}}),
                        (("initContainerStatuses", 0, "state", "terminated", "exitCode"), 1)):
        status = copy.deepcopy(base)
        target = status
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        variants.append(status)
    slims = [decoded_status(s) for s in (base, *variants)]
    for i, a in enumerate(slims):
        for j, b in enumerate(slims):
            assert (a is b) == (i == j), (i, j)
    assert slims[2]["reason"] is None
    assert "reason" not in slims[0]
    # What the codec drops (timestamps, images, lastState) never splits a shared status.
    dropped = copy.deepcopy(base)
    dropped["startTime"] = "later"
    dropped["conditions"][1]["lastTransitionTime"] = "later"
    dropped["containerStatuses"][0]["state"]["running"]["startedAt"] = "later"
    dropped["containerStatuses"][0]["lastState"] = {}
    assert decoded_status(dropped) is slims[0]
    # A full status (not through the codec) slims to the same value, shared only with the
    # same full status.
    assert slim_pod({"status": dropped})["status"] == slims[0]
    assert slim_pod({"status": dropped})["status"] is slim_pod({"status": dropped})["status"]
    assert slim_pod({"status": dropped})["status"] is not slims[0]


def decoded_status(status: dict[str, Any]) -> Any:
    """The slim status of a pod with ``status`` as it reaches the cache: through the codec."""
    event = POD_CODEC.decode_event(json.dumps({"type": "MODIFIED", "object": {
        "metadata": {"name": "p"}, "status": status}}).encode())
    return slim_pod(event["object"])["status"]


def test_the_reconcile_functions_read_the_slim_pod_as_the_full_one() -> None:
    slim = slim_pod(FULL_POD)
    assert is_pod_ready(slim) is is_pod_ready(FULL_POD) is True
    assert pod_phase(slim) == pod_phase(FULL_POD) == "Running"
    assert controller_of(slim) == controller_of(FULL_POD)


def test_malformed_pods_do_not_raise() -> None:
    for odd in ({}, {"metadata": None, "status": None},
                {"metadata": {"labels": "x", "ownerReferences": [{"uid": ["u"]}, 3]},
                 "status": {"conditions": [None, {"type": "Ready", "status": ["x"]}],
                            "message": {"a": 1}}}):
        slim = slim_pod(odd)
        assert set(slim) == {"metadata", "status"}


def test_the_shared_pod_informer_selects_every_kinds_operator_name() -> None:
    assert pod_selector(["mpi-operator"]) == "training.kubeflow.org/operator-name=mpi-operator"
    assert pod_selector(["tfjob-controller", "mpi-operator", "tfjob-controller"]) == (
        "training.kubeflow.org/operator-name in (mpi-operator,tfjob-controller)")


def test_updates_that_change_nothing_a_sync_reads_are_the_same_for_jobs() -> None:
    # KWOK's and the kubelet's steps that move only what the slim pod leaves out (timestamps,
    # nodeName, IPs, a condition's transition time) leave equal slim pods.
    before = copy.deepcopy(FULL_POD)
    after = copy.deepcopy(FULL_POD)
    after["metadata"]["resourceVersion"] = "999"
    after["spec"]["nodeName"] = "kwok-node-7"
    after["status"]["podIP"] = "10.0.0.9"
    for condition in after["status"]["conditions"]:
        condition["lastTransitionTime"] = "2030-01-01T00:00:00Z"
    assert same_for_jobs(slim_pod(before), slim_pod(after))


def test_the_schedulers_binding_is_the_same_for_jobs() -> None:
    """The binding sets ``nodeName`` and adds ``PodScheduled=True`` to a new pod (no
    conditions): nothing a sync reads; a condition that is not True, last, is read."""
    created = copy.deepcopy(FULL_POD)
    created["status"] = {"phase": "Pending"}
    bound = copy.deepcopy(created)
    bound["metadata"]["resourceVersion"] = "8"
    bound["spec"]["nodeName"] = "kwok-node-7"
    bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                      "lastTransitionTime": "2030-01-01T00:00:00Z"}]
    assert same_for_jobs(slim_pod(created), slim_pod(bound))
    unschedulable = copy.deepcopy(created)
    unschedulable["status"]["conditions"] = [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/3 nodes are available", "lastTransitionTime": "t"}]
    assert slim_pod(unschedulable)["status"]["conditions"] == [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/3 nodes are available"}]
    assert not same_for_jobs(slim_pod(created), slim_pod(unschedulable))


@pytest.mark.parametrize("conditions", [
    [],
    [{"type": "PodScheduled", "status": "True"}],
    [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "m"}],
    [{"type": "Initialized", "status": "False", "reason": "i", "message": "m"},
     {"type": "PodScheduled", "status": "True"}],
    [{"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "m"},
     {"type": "PodScheduled", "status": "True"}],
    [{"type": "PodScheduled", "status": "True"},
     {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "m"}],
    [{"type": "Ready", "status": "True"}, {"type": "DisruptionTarget", "status": "Unknown",
                                           "reason": "d", "message": "m"}],
])
def test_a_pending_pods_warning_and_readiness_read_the_slim_pod_as_the_full_one(
        conditions: list[dict[str, Any]]) -> None:
    """The training kinds' warning for a pod without container statuses (its last condition,
    when not True) and readiness are the same from the slim pod as from the full one."""
    from mpi_controller.engine.training.decisions import abnormal_pod_events

    pod = copy.deepcopy(FULL_POD)
    pod["status"] = {"phase": "Pending", "conditions": conditions}
    slim = slim_pod(pod)
    assert abnormal_pod_events([slim]) == abnormal_pod_events([pod])
    assert is_pod_ready(slim) is is_pod_ready(pod)


@pytest.mark.parametrize("change", [
    lambda p: p["status"].update(phase="Succeeded"),
    lambda p: p["status"]["conditions"][1].update(status="False"),  # not Ready
    lambda p: p["status"]["conditions"][2].update(status="False"),  # the last
    lambda p: p["status"]["conditions"].append({"type": "DisruptionTarget", "status": "False"}),
    lambda p: p["status"]["containerStatuses"][0].update(restartCount=3),
    lambda p: p["metadata"].update(deletionTimestamp="2030-01-01T00:00:00Z"),
    lambda p: p["metadata"]["labels"].update(extra="1"),
    lambda p: p["metadata"].pop("labels"),
    lambda p: p["metadata"]["ownerReferences"][0].update(uid="other"),
])
def test_a_change_a_sync_reads_is_not_the_same_for_jobs(change: Any) -> None:
    after = copy.deepcopy(FULL_POD)
    change(after)
    assert not same_for_jobs(slim_pod(FULL_POD), slim_pod(after))
    assert not same_for_jobs(slim_pod(after), slim_pod(FULL_POD))


def test_same_for_jobs_on_full_pods_compares_every_field_but_the_resource_version() -> None:
    after = copy.deepcopy(FULL_POD)
    after["metadata"]["resourceVersion"] = "999"
    assert same_for_jobs(FULL_POD, after)
    after["spec"]["nodeName"] = "kwok-node-7"
    assert not same_for_jobs(FULL_POD, after)
    assert not same_for_jobs({"metadata": {"resourceVersion": "1"}}, {"metadata": {}})
    assert not same_for_jobs({"metadata": {}}, {"metadata": {"resourceVersion": "1"}})
