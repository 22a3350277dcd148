"""The runtime snapshot of a TrainJob, as Trainer v2.3.0's ``pkg/runtime/core/snapshot.go``
(``getRuntimeSnapshot``, ``createRuntimeSnapshot``) and the runtimes' ``NewObjects`` use it:
made from the runtime on the first build, then the TrainJob is built from it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from mpi_controller.kube.resources import CONFIGMAPS
from mpi_controller.trainjob.kind import CLUSTER_RUNTIMES, JOBSETS
from mpi_controller.trainjob.snapshot import (
    SnapshotError,
    runtime_from_snapshot,
    snapshot_configmap,
)
from tests.unit.trainjob.test_kind import TORCH, harness, trainjob

JOB = {"metadata": {"name": "pi", "namespace": "ns", "uid": "u-1"},
       "spec": {"runtimeRef": {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org",
                               "kind": "ClusterTrainingRuntime"}}}


def test_the_snapshot_configmap_holds_the_runtime_as_yaml_owned_by_the_trainjob() -> None:
    configmap = snapshot_configmap(JOB, TORCH)
    assert configmap["metadata"] == {
        "name": "pi-runtime-snapshot", "namespace": "ns", "ownerReferences": [{
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "pi",
            "uid": "u-1", "controller": True, "blockOwnerDeletion": True}]}
    assert list(configmap["data"]) == ["runtime"]
    assert "kind: ClusterTrainingRuntime\n" in configmap["data"]["runtime"]
    assert yaml.safe_load(configmap["data"]["runtime"]) == TORCH
    assert runtime_from_snapshot(JOB, configmap) == TORCH


def test_an_unusable_snapshot_says_why() -> None:
    configmap = snapshot_configmap(JOB, TORCH)
    foreign = copy.deepcopy(configmap)
    foreign["metadata"]["ownerReferences"][0]["uid"] = "other"
    no_key = {**configmap, "data": {}}
    other = snapshot_configmap(JOB, {**TORCH, "metadata": {"name": "x"}})
    cases: list[tuple[dict[str, Any], str]] = [
        (foreign, "invalid runtime snapshot: a snapshot configmap exists but is owned by "
                  "another object"),
        (no_key, 'invalid runtime snapshot: snapshot ConfigMap missing "runtime" data key'),
        (other, "invalid runtime snapshot: the snapshot refers to the wrong runtime: expecting "
                'a runtime with name, api group and kind of "torch-distributed", '
                '"trainer.kubeflow.org", "ClusterTrainingRuntime" but found runtime with name, '
                'api group and kind of "x", "trainer.kubeflow.org", "ClusterTrainingRuntime"'),
    ]
    for configmap_, message in cases:
        with pytest.raises(SnapshotError) as caught:
            runtime_from_snapshot(JOB, configmap_)
        assert str(caught.value) == message


async def test_a_changed_runtime_does_not_reach_a_trainjob_with_a_snapshot() -> None:
    """Upstream's integration test "Should use the runtime snapshot during reconciliation
    rather than the current runtime contents": a suspended TrainJob, its runtime's template
    label changed, resumed: the JobSet keeps the snapshot's label."""
    async with harness() as h:
        labelled = copy.deepcopy(TORCH)
        labelled["spec"]["template"]["metadata"] = {"labels": {"marker": "v1"}}
        h.api.modify(CLUSTER_RUNTIMES, "torch-distributed",
                     lambda r: r["spec"].update(labelled["spec"]))
        h.create(trainjob(suspend=True))
        await h.sync("pi", "TrainJob")
        stored = h.stored(CONFIGMAPS, "pi-runtime-snapshot")
        assert stored is not None
        assert "marker: v1" in stored["data"]["runtime"]

        def relabel(runtime: dict[str, Any]) -> None:
            runtime["spec"]["template"]["metadata"]["labels"]["marker"] = "v2"
        h.api.modify(CLUSTER_RUNTIMES, "torch-distributed", relabel)
        h.mark()
        # While suspended the JobSet is applied server-side, which the in-memory API does not
        # implement: the request it refuses carries what would be applied.
        with pytest.raises(NotImplementedError):
            await h.sync("pi", "TrainJob")
        applied = [r.body for r in h.api.requests if r.verb == "patch" and r.resource == JOBSETS]
        assert applied[-1]["metadata"]["labels"] == {"marker": "v1"}
        assert ("create", "configmaps", "ns", "pi-runtime-snapshot") not in h.writes()
        stored = h.stored(CONFIGMAPS, "pi-runtime-snapshot")
        assert stored is not None
        assert "marker: v1" in stored["data"]["runtime"]
