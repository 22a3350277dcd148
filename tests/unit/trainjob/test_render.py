"""``mpi-controller render`` of a TrainJob (:mod:`mpi_controller.trainjob.render`): the objects its
first sync creates (the PodGroup of a runtime with a ``podGroupPolicy``, the MPI SSH Secret
and hostfile ConfigMap, then the JobSet), on a runtime
given with ``-f`` or shipped in ``deploy/runtimes``; a TrainJob the controller would not build
is an error with its file and line (exit status 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.cli import main
from mpi_controller.render import PLACEHOLDER_UID
from mpi_controller.trainjob import api
from mpi_controller.trainjob.build import desired_jobset
from mpi_controller.trainjob.render import Runtimes, TrainJobRenderError, render_trainjob

REPO = Path(__file__).resolve().parents[3]


def trainjob(name: str, runtime: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name}, "spec": {"runtimeRef": {"name": runtime}, **spec}}


def shipped(name: str) -> dict[str, Any]:
    runtime: dict[str, Any] = yaml.safe_load(
        (REPO / "deploy" / "runtimes" / f"{name}.yaml").read_text())
    return runtime


def render(capsys: pytest.CaptureFixture[str], tmp_path: Path, *docs: dict[str, Any],
           args: tuple[str, ...] = ()) -> tuple[int, list[dict[str, Any]], str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    status = main(["render", "-f", str(path), *args])
    out, err = capsys.readouterr()
    return status, [d for d in yaml.safe_load_all(out) if d], err


def test_a_torch_trainjob_on_the_shipped_runtime_is_its_jobset(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    job = trainjob("pt", "torch-distributed", trainer={"numNodes": 2, "image": "busybox"})
    status, objects, err = render(capsys, tmp_path, job, args=("-n", "ml"))
    assert (status, err) == (0, "")
    expected = desired_jobset(api.set_defaults(
        {**job, "metadata": {"name": "pt", "namespace": "ml", "uid": PLACEHOLDER_UID}}),
        shipped("torch-distributed")["spec"])
    assert objects == [expected]
    assert expected["metadata"]["namespace"] == "ml"
    node = expected["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert (node["parallelism"], node["template"]["spec"]["containers"][0]["image"]) == (
        2, "busybox")


def test_an_mpi_trainjob_has_its_secret_and_hostfile_first(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, objects, _ = render(capsys, tmp_path,
                                trainjob("ds", "deepspeed-distributed", trainer={"numNodes": 3}))
    assert status == 0
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Secret", "ds-mpi-ssh-auth"), ("ConfigMap", "ds-mpi-hostfile"), ("JobSet", "ds")]
    assert objects[1]["data"] == {"hostfile": "ds-node-0-0.ds slots=1\nds-node-0-1.ds slots=1\n"
                                              "ds-launcher-0-0.ds slots=1\n"}


def test_a_gang_scheduled_trainjob_has_its_pod_group_first(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Trainer's examples/yaml/04-volcano-integration.yaml in short: the sync writes the
    # PodGroup before the JobSet (trainjob/kind.py), so render shows it first.
    runtime = shipped("torch-distributed")
    runtime["spec"]["podGroupPolicy"] = {"volcano": {}}
    runtime["metadata"]["name"] = "torch-volcano"
    status, objects, err = render(capsys, tmp_path, runtime,
                                  trainjob("g", "torch-volcano", trainer={"numNodes": 2}),
                                  args=("-n", "ml"))
    assert (status, err) == (0, "")
    assert [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("scheduling.volcano.sh/v1beta1", "PodGroup", "g"),
        ("jobset.x-k8s.io/v1alpha2", "JobSet", "g")]
    group = objects[0]
    assert group["spec"]["minMember"] == 2
    assert group["metadata"]["namespace"] == "ml"
    assert group["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"


def test_a_given_runtime_wins_over_the_shipped_one(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    runtime = shipped("torch-distributed")
    container = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"]["spec"]["containers"][0]
    container["image"] = "mine"
    namespaced = {**runtime, "kind": "TrainingRuntime",
                  "metadata": {**runtime["metadata"], "name": "own"}}
    status, objects, _ = render(
        capsys, tmp_path, runtime, namespaced, trainjob("a", "torch-distributed"),
        trainjob("b", "own", runtimeRef={"name": "own", "kind": "TrainingRuntime"}))
    assert status == 0
    images = [o["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]["image"] for o in objects]
    assert images == ["mine", "mine"]


def test_a_trainjob_the_controller_would_not_build_is_an_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, objects, err = render(
        capsys, tmp_path, trainjob("a", "nowhere"),
        trainjob("b", "torch-distributed", trainer={"env": [{"name": "PET_NNODES",
                                                               "value": "1"}]}))
    assert (status, objects) == (2, [])
    path = tmp_path / "in.yaml"
    assert err.splitlines() == [
        f"error: {path}:1: TrainJob default/a: ClusterTrainingRuntime specified in TrainJob is "
        "not found: nowhere (give it with -f)",
        f"error: {path}:9: TrainJob default/b: spec.trainer.env: Invalid value: "
        "[{\"name\": \"PET_NNODES\", \"value\": \"1\"}]: must not have reserved envs, invalid envs "
        "configured: [PET_NNODES]"]


def test_an_unsupported_runtime_kind() -> None:
    job = trainjob("a", "x", runtimeRef={"name": "x", "kind": "Other"})
    job["metadata"]["namespace"] = "d"
    with pytest.raises(TrainJobRenderError, match=r"^unsupported runtime: Other\."
                                                  r"trainer\.kubeflow\.org$"):
        render_trainjob(job, Runtimes())


def test_convert_then_render(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The TrainingRuntime and TrainJob ``convert`` makes of examples/pi.yaml render as one
    input: the MPI objects and the JobSet of 2 nodes and a launcher."""
    assert main(["convert", "-f", str(REPO / "examples" / "pi.yaml"), "--to",
                 "trainer.kubeflow.org/v1alpha1"]) == 0
    converted = capsys.readouterr().out
    path = tmp_path / "pi.yaml"
    path.write_text(converted)
    assert main(["render", "-f", str(path)]) == 0
    objects = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [o["kind"] for o in objects] == ["Secret", "ConfigMap", "JobSet"]
    assert objects[1]["data"]["hostfile"] == "pi-node-0-0.pi slots=1\npi-node-0-1.pi slots=1\n"
    assert [(r["name"], r["template"]["spec"]["parallelism"])
            for r in objects[2]["spec"]["replicatedJobs"]] == [("node", 2), ("launcher", 1)]
