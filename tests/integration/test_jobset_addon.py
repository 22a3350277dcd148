"""The local cluster's JobSet addon (``hack/local-cluster.sh up --addons jobset``,
hack/lib/addons.sh): the real JobSet controller of ``sigs.k8s.io/jobset`` (the version Kubeflow
Trainer v2.3.0 requires), run beside the control plane with its webhooks served at 127.0.0.1.

* a JobSet of one replicated Job of 2 pods runs to ``Completed`` (KWOK ends Job pods), with the
  controller's status (``terminalState``, ``replicatedJobsStatus``);
* its pod webhook labels the pods (``jobset.sigs.k8s.io/jobset-name``, ...);
* its validating webhook refuses a JobSet whose success policy names a replicated Job that
  does not exist, with JobSet's own message.

Run on a cluster with the addon up, as the other addon tests are:
``MPI_CONTROLLER_CLUSTER_DIR=DIR hack/local-cluster.sh up --addons jobset`` then
``MPI_CONTROLLER_ADDONS_CLUSTER_DIR=DIR pytest tests/integration/test_jobset_addon.py``
(skipped, saying so, without such a cluster).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.addons import Addons, drop_namespace, new_namespace, open_addons
from tests.support import wait_for

pytestmark = pytest.mark.cluster

GROUP, VERSION, PLURAL = "jobset.x-k8s.io", "v1alpha2", "jobsets"


@pytest.fixture(scope="module")
def addons() -> Iterator[Addons]:
    found = open_addons()
    found.require("jobset")
    yield found
    found.api.close()


@pytest.fixture
def namespace(addons: Addons) -> Iterator[str]:
    name = new_namespace(addons, "jobset")
    yield name
    drop_namespace(addons, name)


def jobset(name: str, *, success_targets: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicatedJobs": [{"name": "node", "replicas": 1, "template": {
        "spec": {"parallelism": 2, "completions": 2, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "node", "image": "busybox"}]}}}}}]}
    if success_targets is not None:
        spec["successPolicy"] = {"operator": "All", "targetReplicatedJobs": success_targets}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "JobSet",
            "metadata": {"name": name}, "spec": spec}


def test_a_jobset_runs_to_completed(addons: Addons, namespace: str) -> None:
    addons.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL,
                                                  jobset("smoke"))

    def completed() -> dict[str, Any] | None:
        found: dict[str, Any] = addons.custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, "smoke")
        status = found.get("status", {})
        return status if status.get("terminalState") == "Completed" else None

    status = wait_for(completed, timeout=90, what="the JobSet Completed")
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("Completed", "True", "AllJobsCompleted")]
    assert status["replicatedJobsStatus"] == [{"name": "node", "active": 0, "failed": 0,
                                               "ready": 0, "succeeded": 1, "suspended": 0}]
    pods = addons.core.list_namespaced_pod(namespace).items
    assert sorted(p.metadata.labels["batch.kubernetes.io/job-completion-index"]
                  for p in pods) == ["0", "1"]
    assert {p.metadata.labels["jobset.sigs.k8s.io/jobset-name"] for p in pods} == {"smoke"}
    assert {p.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] for p in pods} == {"node"}
    assert {p.status.phase for p in pods} == {"Succeeded"}


def test_the_validating_webhook_refuses_an_unknown_success_target(
        addons: Addons, namespace: str) -> None:
    with pytest.raises(client.ApiException) as refused:
        addons.custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, jobset("bad", success_targets=["nope"]))
    assert refused.value.status == 422
    assert "invalid replicatedJob name 'nope' does not appear in .spec.ReplicatedJobs" in \
        str(refused.value.body)
