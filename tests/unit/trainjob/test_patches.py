"""Runtime patches of the JobSet spec, merged as Trainer v2.3.0's ``mergeRuntimePatches``
(``pkg/runtime/core/trainingruntime.go``: ``strategicpatch.StrategicMergePatch`` against
``jobsetv1alpha2.JobSetSpec``, each patch in turn, then the runtime's order of replicated
Jobs)."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.trainjob.patches import PatchError, merge_runtime_patches, strategic_merge


def rjob(name: str, **pod: Any) -> dict[str, Any]:
    return {"name": name, "template": {"spec": {"template": {"spec": pod}}}}


def job(*specs: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"runtimePatches": [
        {"manager": f"m{i}.io/x", "trainingRuntimeSpec": {"template": {"spec": s}}}
        for i, s in enumerate(specs)]}}


SPEC = {"replicatedJobs": [
    rjob("init", containers=[{"name": "dataset-initializer", "image": "i"}]),
    rjob("node", containers=[{"name": "node", "image": "n", "env": [{"name": "A", "value": "1"}],
                              "ports": [{"containerPort": 29500}]}],
         tolerations=[{"key": "x", "operator": "Exists"}], nodeSelector={"a": "1"}),
]}


def test_containers_merge_by_name_env_by_name_maps_key_by_key_other_lists_replaced() -> None:
    patch = {"replicatedJobs": [rjob(
        "node", containers=[{"name": "node", "env": [{"name": "A", "value": "2"},
                                                     {"name": "B", "value": "3"}]}],
        tolerations=[{"key": "y", "operator": "Exists"}], nodeSelector={"b": "2"},
        serviceAccountName="sa")]}
    merged = strategic_merge(SPEC, patch)
    node = merged["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    assert node == {
        "containers": [{"name": "node", "image": "n",
                        "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}],
                        "ports": [{"containerPort": 29500}]}],
        "tolerations": [{"key": "y", "operator": "Exists"}],
        "nodeSelector": {"a": "1", "b": "2"}, "serviceAccountName": "sa"}
    assert merged["replicatedJobs"][0] == SPEC["replicatedJobs"][0]
    assert SPEC["replicatedJobs"][1]["template"]["spec"]["template"]["spec"][
        "nodeSelector"] == {"a": "1"}, "the original is not changed"


def test_a_new_item_is_appended_and_empty_lists_of_the_patch_are_ignored() -> None:
    patch = {"replicatedJobs": [rjob("node", containers=[{"name": "sidecar", "image": "s"}],
                                     tolerations=[])]}
    node = strategic_merge(SPEC, patch)["replicatedJobs"][1]["template"]["spec"]["template"][
        "spec"]
    assert [c["name"] for c in node["containers"]] == ["node", "sidecar"]
    assert node["tolerations"] == [{"key": "x", "operator": "Exists"}]


def test_patches_apply_in_order_and_the_runtime_order_of_jobs_is_kept() -> None:
    """A later patch wins; a replicated Job the runtime lacks is merged in, then sorted as the
    runtime's first (``order[name]`` is 0 for it, and the sort is stable)."""
    merged = merge_runtime_patches(SPEC, job(
        {"replicatedJobs": [rjob("node", serviceAccountName="one")]},
        {"replicatedJobs": [rjob("node", serviceAccountName="two"), {"name": "extra"}]}))
    assert [r["name"] for r in merged["replicatedJobs"]] == ["init", "extra", "node"]
    assert merged["replicatedJobs"][2]["template"]["spec"]["template"]["spec"][
        "serviceAccountName"] == "two"


def test_a_trainjob_without_spec_patches_keeps_the_spec() -> None:
    patched = job()
    patched["spec"]["runtimePatches"] = [{"manager": "m.io/x", "trainingRuntimeSpec": {
        "template": {"metadata": {"labels": {"a": "b"}}}}}]
    assert merge_runtime_patches(SPEC, patched) == SPEC


def test_an_item_without_its_merge_key_fails() -> None:
    with pytest.raises(PatchError) as caught:
        strategic_merge(SPEC, {"replicatedJobs": [{"replicas": 2}]})
    assert str(caught.value) == \
        "spec.replicatedJobs: an item of the patch has no merge key 'name'"
