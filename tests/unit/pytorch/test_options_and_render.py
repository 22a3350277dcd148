"""The PyTorchJob flags of ``mpi-controller run`` (training-operator's
``--pytorch-init-container-*``) and ``mpi-controller render`` of PyTorchJobs."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from mpi_controller.cli import main
from mpi_controller.options import ServerOptions, add_run_arguments, options_from_args
from mpi_controller.pytorch import InitContainerTemplate
from tests.pytorchjobs import CPU_METRIC, init_container, pytorchjob, replica


def _parse(*argv: str) -> ServerOptions:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    return options_from_args(parser.parse_args(list(argv)))


def test_defaults_are_upstreams(tmp_path: Path) -> None:
    assert _parse().kinds["pytorchjob"].init_container == InitContainerTemplate()
    opts = _parse("--pytorch-init-container-image", "busybox",
                  "-pytorch-init-container-max-tries", "3",
                  "--pytorch-init-container-template-file", str(tmp_path / "none.yaml"))
    assert opts.kinds["pytorchjob"].init_container.containers("j-master-0") == [
        init_container("j", tries=3, image="busybox")]


def test_a_template_file_is_read_at_startup(tmp_path: Path) -> None:
    path = tmp_path / "init.yaml"
    path.write_text("- name: w\n  image: {{.InitContainerImage}}\n")
    opts = _parse("--pytorch-init-container-template-file", str(path))
    assert opts.kinds["pytorchjob"].init_container.containers("m") == [
        {"name": "w", "image": "alpine:3.10"}]


def test_bad_values_name_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="--pytorch-init-container-max-tries must be greater "
                                         "than 0, got 0"):
        _parse("--pytorch-init-container-max-tries", "0")
    path = tmp_path / "init.yaml"
    path.write_text("- name: {{.Job}}\n")
    assert main(["run", "--pytorch-init-container-template-file", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"mpi-controller run: --pytorch-init-container-template-file: init container template "
        f"{path}: unsupported action '{{{{.Job}}}}' (supported: {{{{.MasterAddr}}}}, "
        "{{.InitContainerImage}}, {{.MaxTries}})\n")


def test_render_an_elastic_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The HPA first, then the pods and Services; the deprecated nProcPerNode warns."""
    body = pytorchjob("el", {"Worker": replica(2)}, elastic={
        "maxReplicas": 3, "metrics": [CPU_METRIC], "nProcPerNode": 2})
    path = tmp_path / "el.yaml"
    path.write_text(yaml.safe_dump(body))
    assert main(["render", "-f", str(path), "-n", "team"]) == 0
    out = capsys.readouterr()
    assert out.err == (f"{path}: PyTorchJob team/el: warning: spec.elasticPolicy.nProcPerNode "
                       "is deprecated, use spec.nprocPerNode instead\n")
    docs = list(yaml.safe_load_all(out.out))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("HorizontalPodAutoscaler", "el"), ("Pod", "el-worker-0"), ("Pod", "el-worker-1"),
        ("Service", "el-worker-0"), ("Service", "el-worker-1")]
    assert docs[0]["spec"]["minReplicas"] == docs[0]["spec"]["maxReplicas"] == 3
    env = {e["name"]: e["value"] for e in docs[1]["spec"]["containers"][0]["env"]}
    assert (env["PET_NNODES"], env["PET_NPROC_PER_NODE"]) == ("3:3", "2")


def test_render_reports_invalid_pytorchjobs(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(pytorchjob("bad", {"Master": replica(2)})))
    assert main(["render", "-f", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}:8: PyTorchJob default/bad: spec.pytorchReplicaSpecs[Master].replicas: "
        "Forbidden: must be 1\n")
