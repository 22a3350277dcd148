"""The runtime snapshot of a TrainJob, as Trainer v2.3.0's ``pkg/runtime/core/snapshot.go``
(``getRuntimeSnapshot``, ``createRuntimeSnapshot``) and the runtimes' ``NewObjects`` use it:
made from the runtime on the first build, then the TrainJob is built from it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from mpi_controller.kube.resources import CONFIGMAPS
from mpi_controller.trainjob import kind, snapshot
from mpi_controller.trainjob.kind import CLUSTER_RUNTIMES, JOBSETS, ResourcesFailed
from mpi_controller.trainjob.snapshot import (
    SnapshotError,
    cache_transform,
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


def test_the_configmap_cache_keeps_whole_only_what_a_trainjob_controls() -> None:
    """The informer's transform (the controller caches ConfigMaps for the snapshot)."""
    snapshot = snapshot_configmap(JOB, TORCH)
    snapshot["metadata"]["managedFields"] = [{"manager": "trainer"}]
    kept = cache_transform(copy.deepcopy(snapshot))
    del snapshot["metadata"]["managedFields"]
    assert kept == snapshot
    foreign = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "kube-root-ca.crt", "namespace": "ns", "uid": "u",
                            "resourceVersion": "7", "labels": {"a": "b"}},
               "data": {"ca.crt": "x" * 1000}}
    assert cache_transform(foreign) == {
        "metadata": {"name": "kube-root-ca.crt", "namespace": "ns", "resourceVersion": "7"}}
    other_kind = snapshot_configmap(JOB, TORCH)
    other_kind["metadata"]["ownerReferences"][0]["kind"] = "MPIJob"
    assert "data" not in cache_transform(other_kind)
    # A stub (or a foreign ConfigMap of the snapshot's name) is owned by another object.
    with pytest.raises(SnapshotError, match="owned by another object"):
        runtime_from_snapshot(JOB, cache_transform(other_kind))


async def test_the_snapshot_is_read_from_the_cache_and_parsed_once_per_resource_version(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every later sync reads the snapshot from the informer: no request for ConfigMaps, and
    its YAML is parsed only when its resourceVersion is not the one this controller made it
    with (the runtime it was made from is what it holds)."""
    parsed: list[str] = []
    real = snapshot.runtime_from_snapshot

    def counting(job: dict[str, Any], configmap: dict[str, Any]) -> dict[str, Any]:
        parsed.append(configmap["metadata"]["resourceVersion"])
        return real(job, configmap)
    monkeypatch.setattr(kind, "runtime_from_snapshot", counting)
    async with harness() as h:
        h.create(trainjob())
        await h.sync("pi", "TrainJob")
        assert parsed == []  # made from the runtime in this sync
        h.mark()
        for _ in range(3):
            await h.sync("pi", "TrainJob")
        assert [r.describe() for r in h.requests() if r.resource == CONFIGMAPS] == []
        stored = h.stored(CONFIGMAPS, "pi-runtime-snapshot")
        assert stored is not None
        assert parsed == []  # the version made in the first sync: its runtime is known

        def taken_over(configmap: dict[str, Any]) -> None:
            configmap["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
        h.api.modify(CONFIGMAPS, "pi-runtime-snapshot", taken_over, namespace="ns")
        await h.settle()
        with pytest.raises(ResourcesFailed, match="owned by another object"):
            await h.sync("pi", "TrainJob")
        changed = h.stored(CONFIGMAPS, "pi-runtime-snapshot")
        assert changed is not None
        assert parsed == [changed["metadata"]["resourceVersion"]]


def test_a_runtime_with_long_quoted_and_multi_line_strings_reads_back_the_same() -> None:
    runtime = copy.deepcopy(TORCH)
    command = ("{{ $now := Now }}\nconditions:\n- lastTransitionTime: {{ $now | Quote }}\n"
               '  status: "False"\n  type: Ready\n' * 6) + "tail \u00e9\t\\ end"
    runtime["metadata"]["annotations"] = {"z-last": "1", "a-first": command, "m": ""}
    text = snapshot_configmap(JOB, runtime)["data"]["runtime"]
    assert yaml.safe_load(text) == runtime
    assert text.index("a-first:") < text.index("m: ''") < text.index("z-last:")  # sorted keys
    assert "{" not in text.split("annotations:", 1)[0]  # block style, not flow
