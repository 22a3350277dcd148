"""Issue 29's story on a real API server: a TFJob deleted and created again under the same
name while its old pods and Services are still there (the garbage collector is behind). The new
job's creates fail on the old children (``ErrResourceExists``, ``FailedCreatePod``,
``FailedCreateService``) until they go; its retries repeat the same warnings, which raise the
count of the Events already recorded; then its pods run and its ``SuccessfulCreatePod``,
``ExitedWithCode`` and ``TFJobSucceeded`` Events are recorded (client-go's spam filter had
spent the job's budget on the warnings and lost them)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from kubernetes import client

from tests.integration.test_tfjob import tf_controller
from tests.support import Cluster, wait_for
from tests.tfjobs import TFJobs, replica, tfjob, wait_pods

pytestmark = pytest.mark.cluster

CHILDREN = ("story-worker-0", "story-worker-1")


@pytest.fixture
def jobs(kube_api: Any, namespace: str, tfjob_crd: str) -> TFJobs:
    return TFJobs(kube_api, namespace)


def test_a_recreated_tfjob_records_its_success_after_the_old_pods_go(
        cluster: Cluster, jobs: TFJobs) -> None:
    body = tfjob("story", {"Worker": replica(2, restart="Never")})
    with tf_controller(cluster, jobs.namespace):
        jobs.create(body)
        wait_pods(jobs, "story", 2)
        # Deleted, its children kept (orphaned): they stand for pods the GC has not removed.
        jobs.custom.delete_namespaced_custom_object(
            jobs.group, jobs.version, jobs.namespace, jobs.plural, "story",
            body=client.V1DeleteOptions(propagation_policy="Orphan"))
        wait_for(lambda: all(not p["metadata"].get("ownerReferences")
                             for p in jobs.pods("story")), timeout=60, what="orphaned pods")

        def old_job_gone() -> bool:  # the GC drops its orphan finalizer after the pods
            try:
                jobs.get("story")
            except client.ApiException as err:
                if err.status == 404:
                    return True
                raise
            return False
        wait_for(old_job_gone, timeout=60, what="the deleted TFJob gone")
        jobs.create(body)

        def warned() -> bool:
            counts = {e.reason: e.count for e in _events(jobs, "")}
            return counts.get("ErrResourceExists", 0) >= 2  # a retry repeated it
        wait_for(warned, timeout=60, what="a repeated ErrResourceExists")
        for name in CHILDREN:  # the garbage collector catches up
            jobs.core.delete_namespaced_pod(name, jobs.namespace, grace_period_seconds=0)
            jobs.core.delete_namespaced_service(name, jobs.namespace)
        uid = jobs.wait_condition("story", "Succeeded", timeout=180)["metadata"]["uid"]
        wait_for(lambda: "TFJobSucceeded" in {e.reason for e in _events(jobs, uid)},
                 timeout=30, what="the TFJobSucceeded Event")
    events = _events(jobs, uid)
    reasons = Counter(e.reason for e in events)
    # One Event per distinct warning, however many retries repeated it.
    warnings = Counter((e.reason, e.message) for e in events if e.type == "Warning")
    assert set(warnings.values()) == {1}
    assert max(e.count for e in events if e.reason == "ErrResourceExists") >= 2
    assert {r: reasons[r] for r in ("SuccessfulCreatePod", "SuccessfulCreateService",
                                    "TFJobSucceeded")} == {
        "SuccessfulCreatePod": 2, "SuccessfulCreateService": 2, "TFJobSucceeded": 1}


def _events(jobs: TFJobs, uid: str) -> list[Any]:
    """The Events of the TFJob ``story`` (of the life with ``uid``; both when empty)."""
    items = jobs.core.list_namespaced_event(
        jobs.namespace, field_selector="involvedObject.name=story,"
                                       "involvedObject.kind=TFJob").items
    return [e for e in items if not uid or e.involved_object.uid == uid]
