"""``mpi-controller render``: exit codes, stderr messages and the order of objects."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from mpi_controller.cli import main
from mpi_controller.kinds import plugins

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(text)]


def test_pi_example_renders_in_creation_order(capsys: pytest.CaptureFixture[str]) -> None:
    """Creation order of a first sync (``syncHandler``): Service, ConfigMap, Secret, workers,
    Job."""
    assert main(["render", "-f", str(REPO / "examples" / "pi.yaml")]) == 0
    out = capsys.readouterr().out
    assert _kinds(out) == [
        ("Service", "pi"),
        ("ConfigMap", "pi-config"),
        ("Secret", "pi-ssh"),
        ("Pod", "pi-worker-0"),
        ("Pod", "pi-worker-1"),
        ("Job", "pi-launcher"),
    ]
    docs = list(yaml.safe_load_all(out))
    assert docs[0]["metadata"]["namespace"] == "default"
    assert (
        docs[0]["metadata"]["ownerReferences"][0]["uid"] == "00000000-0000-0000-0000-000000000000"
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_renders_cleanly(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The PodGroup comes after the MPIJob's Service, ConfigMap and Secret; first for a TFJob
    or PyTorchJob."""
    assert main(["render", "-f", str(example), "--gang-scheduling", "volcano"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    kind = yaml.safe_load(example.read_text())["kind"]
    first_pod_group = 0 if kind in ("TFJob", "PyTorchJob") else 3
    assert [k for k, _ in _kinds(captured.out)][first_pod_group] == "PodGroup"


def test_flags_and_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-f -` reads stdin; --cluster-domain, --running-workers, scheduler-plugins gang; the
    manifest's uid and namespace are used; multi-document input keeps document order."""
    text = (REPO / "examples" / "pi.yaml").read_text()
    doc = yaml.safe_load(text)
    doc["metadata"].update(uid="abc", namespace="ns1")
    second = yaml.safe_load(text)
    second["metadata"]["name"] = "pi2"
    monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump_all([doc, None, second])))
    rc = main(
        [
            "render",
            "-f",
            "-",
            "--cluster-domain",
            "cluster.local",
            "--running-workers",
            "5",
            "--gang-scheduling",
            "scheduler-plugins-scheduler",
        ]
    )
    assert rc == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["metadata"]["name"] for d in docs][:4] == ["pi", "pi-config", "pi-ssh", "pi"]
    assert docs[3]["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert docs[1]["data"]["discover_hosts.sh"] == (
        "#!/bin/sh\necho pi-worker-0.pi.ns1.svc.cluster.local\n"
        "echo pi-worker-1.pi.ns1.svc.cluster.local\n"
    )
    assert docs[0]["metadata"]["ownerReferences"][0]["uid"] == "abc"
    assert docs[4]["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
    assert docs[7]["metadata"]["name"] == "pi2"


def test_suspended_job_renders_no_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Created suspended (3.6): Service, ConfigMap, Secret and a suspended launcher Job only."""
    doc = yaml.safe_load((REPO / "examples" / "pi.yaml").read_text())
    doc["spec"]["runPolicy"]["suspend"] = True
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert main(["render", "-f", str(path), "--gang-scheduling", "volcano"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["kind"] for d in docs] == ["Service", "ConfigMap", "Secret", "Job"]
    assert docs[-1]["spec"]["suspend"] is True


def test_invalid_mpijob_exits_2_with_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: pi}\n"
        "spec:\n  slotsPerWorker: -1\n  mpiReplicaSpecs:\n    Launcher: {replicas: 2}\n"
    )
    assert main(["render", "-f", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"error: {path}:7: MPIJob default/pi: spec.mpiReplicaSpecs[Launcher].template.spec."
        "containers: Required value: must define at least one container",
        f"error: {path}:7: MPIJob default/pi: spec.mpiReplicaSpecs[Launcher].replicas: "
        "Invalid value: 2: must be 1",
        f"error: {path}:5: MPIJob default/pi: spec.slotsPerWorker: Invalid value: -1: "
        "must be greater than or equal to 0",
    ]


def test_unparsable_yaml_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("apiVersion: v1\nkind: [\n")
    assert main(["render", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:3: invalid YAML: ")


def test_non_mpijob_names_its_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "svc.yaml"
    path.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
    assert main(["render", "-f", str(path)]) == 2
    kinds = [p.kind for p in plugins() if p.renderer is not None]
    versions = {"MPIJob": "'kubeflow.org/v2beta1' or 'kubeflow.org/v1' or "
                          "'kubeflow.org/v1alpha2'"}
    expected = ", or ".join(f"kind {k!r}, apiVersion {versions.get(k, repr('kubeflow.org/v1'))}"
                            for k in kinds)
    assert capsys.readouterr().err == (
        f"error: {path}:1: kind 'Service' (apiVersion 'v1') is not an "
        f"{', '.join(kinds[:-1])} or {kinds[-1]}; expected {expected}\n"
    )


def test_missing_file_and_bad_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "-f", "/nonexistent.yaml"]) == 2
    assert "error: /nonexistent.yaml: cannot read:" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["render", "-f", "x", "--running-workers", "-1"])
    assert exc.value.code == 2


def test_help_says_the_key_is_fresh(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["render", "--help"])
    assert "freshly generated" in capsys.readouterr().out
