"""The TrainJob defaulter, Trainer v2.3.0's mutating webhook
``defaulter.trainjob.trainer.kubeflow.org`` (``pkg/webhooks/trainjob_webhook.go``
``TrainJobDefaulter.Default``; its integration test "Should set Time on each RuntimePatch when
creating a TrainJob"): the ``time`` of each runtime patch, and the AdmissionReview answer that
carries it as a JSON patch."""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
from typing import Any

from mpi_controller.kinds import plugin
from mpi_controller.testing.patches import json_patch
from mpi_controller.trainjob.api import stamp_runtime_patches
from mpi_controller.webhook.registry import default_registry
from mpi_controller.webhook.reviews import mutating_review

NOW = "2026-12-05T15:00:00Z"
EARLIER = "2026-12-01T08:00:00Z"


def job(*patches: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "tj", "namespace": "ns"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "suspend": True,
                     "runtimePatches": list(patches)}}


def selector(manager: str, pool: str, **extra: Any) -> dict[str, Any]:
    return {"manager": manager, **extra, "trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
            "nodeSelector": {"pool": pool}}}}}}]}}}}


def times(obj: dict[str, Any]) -> list[str | None]:
    return [p.get("time") for p in obj["spec"]["runtimePatches"]]


def test_on_create_every_patch_without_a_time_gets_now() -> None:
    created = job({"manager": "acme.io/manager-one"},
                  {"manager": "acme.io/manager-two", "time": EARLIER})
    stamped = stamp_runtime_patches(created, None, NOW)
    assert times(stamped) == [NOW, EARLIER]
    assert "time" not in created["spec"]["runtimePatches"][0]  # the argument is not changed


def test_on_update_only_a_changed_or_new_managers_patch_gets_now() -> None:
    old = job(selector("kueue.x-k8s.io/manager", "a", time=EARLIER),
              selector("acme.io/same", "a", time=EARLIER),
              selector("acme.io/untimed", "a"))
    new = job(selector("kueue.x-k8s.io/manager", "b", time=EARLIER),  # changed: now
              selector("acme.io/same", "a", time=NOW[:-3] + "9Z"),  # unchanged: the old time
              selector("acme.io/untimed", "a"),  # unchanged, never timed: stays without
              selector("acme.io/new", "a"),  # a new manager: now
              selector("acme.io/new-timed", "a", time=EARLIER))  # new, timed: kept
    assert times(stamp_runtime_patches(new, old, NOW)) == [NOW, EARLIER, None, NOW, EARLIER]


def test_a_trainjob_without_patches_is_left_as_it_is() -> None:
    plain = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
             "metadata": {"name": "tj"}, "spec": {"runtimeRef": {"name": "r"}}}
    assert stamp_runtime_patches(plain, None, NOW) == plain


def _review(operation: str, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "uid": "u-1", "operation": operation, "object": obj,
        "kind": {"group": "trainer.kubeflow.org", "version": "v1alpha1", "kind": "TrainJob"}}
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def test_the_webhook_answers_with_the_json_patch_that_sets_the_times() -> None:
    registry = default_registry([plugin("trainjob")],
                                wall=lambda: dt.datetime(2026, 12, 5, 15, tzinfo=dt.UTC))
    [webhook] = registry.mutating
    assert (webhook.name, webhook.path) == ("defaulter.trainjob.trainer.kubeflow.org",
                                            "/mutate-trainer-kubeflow-org-v1alpha1-trainjob")
    created = job({"manager": "acme.io/manager-one"}, {"manager": "acme.io/manager-two"})
    answer = mutating_review(_review("CREATE", created, None), webhook)["response"]
    assert (answer["uid"], answer["allowed"], answer["patchType"]) == ("u-1", True, "JSONPatch")
    ops = json.loads(base64.b64decode(answer["patch"]))
    assert ops == [{"op": "add", "path": "/spec/runtimePatches/0/time", "value": NOW},
                   {"op": "add", "path": "/spec/runtimePatches/1/time", "value": NOW}]
    stamped = json_patch(copy.deepcopy(created), ops)
    assert times(stamped) == [NOW, NOW]
    # An update that changes nothing in the patches: allowed, no patch.
    answer = mutating_review(_review("UPDATE", stamped, stamped), webhook)["response"]
    assert answer == {"uid": "u-1", "allowed": True}


def test_a_malformed_review_is_refused_with_400() -> None:
    [webhook] = default_registry([plugin("trainjob")]).mutating
    review = _review("CREATE", job(), None)
    review["request"]["kind"]["kind"] = "JobSet"
    answer = mutating_review(review, webhook)["response"]
    assert answer["allowed"] is False
    assert answer["status"] == {
        "code": 400, "reason": "BadRequest",
        "message": "request.kind: /mutate-trainer-kubeflow-org-v1alpha1-trainjob defaults "
                   "trainer.kubeflow.org/v1alpha1 TrainJob, got {'group': "
                   "'trainer.kubeflow.org', 'version': 'v1alpha1', 'kind': 'JobSet'}"}
