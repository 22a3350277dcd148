"""Reading manifests (``render``, ``convert``): every example, every MPIJob generation,
directories, ``kind: List``, line numbers in errors, empty input, the size and alias limits;
``convert`` between MPIJob versions."""

from __future__ import annotations

import io
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mpi_controller import manifests
from mpi_controller.cli import main
from mpi_controller.manifests import ManifestError, read_manifests

REPO = Path(__file__).resolve().parents[2]
ALL_EXAMPLES = sorted((REPO / "examples").rglob("*.yaml"))
V1 = REPO / "examples" / "v1" / "tensorflow-mnist-elastic.yaml"
V1ALPHA2 = REPO / "examples" / "v1alpha2" / "tensorflow-benchmarks.yaml"


def _kinds(text: str) -> list[str]:
    return [d["kind"] for d in yaml.safe_load_all(text)]


@pytest.mark.parametrize("example", ALL_EXAMPLES,
                         ids=[str(p.relative_to(REPO)) for p in ALL_EXAMPLES])
def test_render_accepts_every_example(example: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "-f", str(example)]) == 0
    assert _kinds(capsys.readouterr().out)


@pytest.mark.parametrize("example", [V1, V1ALPHA2], ids=["v1", "v1alpha2"])
def test_older_mpijobs_render_through_the_conversion(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The launch mode of the older generations is not rendered: a warning says so."""
    assert main(["render", "-f", str(example)]) == 0
    captured = capsys.readouterr()
    assert _kinds(captured.out)[:3] == ["Service", "ConfigMap", "Secret"]
    origin = yaml.safe_load(example.read_text())["apiVersion"]
    assert f"warning: rendered through the conversion from {origin} to kubeflow.org/v2beta1" \
        in captured.err


def test_a_directory_and_its_subdirectories(capsys: pytest.CaptureFixture[str]) -> None:
    top = sorted((REPO / "examples").glob("*.yaml"))
    assert main(["render", "-f", str(REPO / "examples")]) == 0
    flat = capsys.readouterr().out
    assert _kinds(flat).count("Service") >= len(top) - 3  # TFJob/PyTorchJob services too
    assert [m.source for m in read_manifests([str(REPO / "examples")])] == [str(p) for p in top]
    deep = read_manifests([str(REPO / "examples")], recursive=True)
    assert sorted(m.source for m in deep) == sorted(str(p) for p in ALL_EXAMPLES)


def test_kind_list_items_are_read_with_their_lines(tmp_path: Path) -> None:
    job = (REPO / "examples" / "pi.yaml").read_text()
    listed = {"apiVersion": "v1", "kind": "List",
              "items": [yaml.safe_load(job), yaml.safe_load(job)]}
    path = tmp_path / "list.yaml"
    path.write_text(yaml.safe_dump(listed, sort_keys=False))
    found = read_manifests([str(path)])
    assert [(m.item, m.obj["kind"]) for m in found] == [(0, "MPIJob"), (1, "MPIJob")]
    assert found[0].line == 4
    assert found[1].line > found[0].line
    assert main(["render", "-f", str(path)]) == 0


def test_field_paths_map_to_lines(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("# a comment\napiVersion: kubeflow.org/v2beta1\nkind: MPIJob\n"
                    "metadata: {name: pi}\nspec:\n  mpiReplicaSpecs:\n    Worker:\n"
                    "      replicas: 2\n      template:\n        spec:\n          containers:\n"
                    "          - name: a\n          - name: b\n            image: x\n")
    (doc,) = read_manifests([str(path)])
    assert doc.line == 2
    assert doc.line_of("spec.mpiReplicaSpecs[Worker].replicas") == 8
    assert doc.line_of("spec.mpiReplicaSpecs[Worker].template.spec.containers[1].image") == 14
    assert doc.line_of("spec.mpiReplicaSpecs[Launcher].replicas") == 6
    assert doc.line_of("metadata.name") == 4
    assert doc.line_of("status") == 2


@pytest.mark.parametrize("text", ["", "---\n---\n", "# nothing\n"])
def test_empty_input_is_an_error_exit_2(text: str, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main(["render", "-f", "-"]) == 2
    assert capsys.readouterr().err == "error: no objects in <stdin>: the input is empty\n"


def test_an_empty_directory_is_an_error(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "-f", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: a directory with no .yaml, .yml, .json files\n")


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifests, "MAX_BYTES", 100)
    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * 200)
    with pytest.raises(ManifestError, match=r"big\.yaml: larger than 0 MiB; refusing"):
        read_manifests([str(path)])


BOMB = "\n".join(["a: &a [" + ",".join(['"lol"'] * 9) + "]"] + [
    f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]"
    for p, n in zip("abcdefgh", "bcdefghi", strict=True)]) + "\n"


def test_an_alias_bomb_fails_fast_in_little_memory(tmp_path: Path) -> None:
    """9^9 strings once expanded; refused after composing ~90 nodes, in a child process
    whose address space is capped at 1 GiB (the bomb alone would need far more)."""
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    probe = ("import resource, sys\n"
             "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
             "from mpi_controller.cli import main\n"
             f"sys.exit(main(['render', '-f', {str(path)!r}]))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, cwd=REPO, check=False)
    assert (done.returncode, done.stderr) == (2, (
        f"error: {path}:1: document 1 expands to more than {manifests.MAX_NODES} YAML nodes "
        "through its aliases; refusing it (an alias bomb?)\n"))
    assert resource.RLIMIT_AS  # the limit exists on this platform


def test_aliases_within_the_limit_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("a: &x {k: v}\nb: *x\n")
    (doc,) = read_manifests([str(path)])
    assert doc.obj == {"a": {"k": "v"}, "b": {"k": "v"}}


def test_convert_between_mpijob_versions(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    assert main(["convert", "-f", str(V1), "--to", "v2beta1"]) == 0
    converted = yaml.safe_load(capsys.readouterr().out)
    assert (converted["apiVersion"], converted["kind"]) == ("kubeflow.org/v2beta1", "MPIJob")
    path = tmp_path / "v2.yaml"
    path.write_text(yaml.safe_dump(converted))
    assert main(["convert", "-f", str(path), "--to", "kubeflow.org/v1"]) == 0
    back = yaml.safe_load(capsys.readouterr().out)
    original = yaml.safe_load(V1.read_text())
    assert (back["apiVersion"], back["spec"]) == (original["apiVersion"], original["spec"])
    assert main(["convert", "-f", str(V1ALPHA2), "--to", "v1alpha2"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == yaml.safe_load(V1ALPHA2.read_text())


def test_convert_refuses_unknown_versions_and_kinds(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    pi = REPO / "examples" / "pi.yaml"
    line = next(i for i, text in enumerate(pi.read_text().splitlines(), 1)
                if text and not text.startswith("#"))
    assert main(["convert", "-f", str(pi), "--to", "v3"]) == 2
    assert capsys.readouterr().err == (
        f"error: {pi}:{line}: MPIJob has no version 'v3' (versions: kubeflow.org/v2beta1, "
        "kubeflow.org/v1, kubeflow.org/v1alpha2)\n")
    svc = tmp_path / "svc.yaml"
    svc.write_text("apiVersion: v1\nkind: Service\n")
    assert main(["convert", "-f", str(svc), "--to", "v1"]) == 2
    assert capsys.readouterr().err == (
        f"error: {svc}:1: kind 'Service' (apiVersion 'v1') is not a job kind served here\n")
