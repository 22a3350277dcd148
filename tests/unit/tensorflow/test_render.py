"""``mpi-controller render`` with TFJobs: what the first sync creates, in upstream's order."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mpi_controller.cli import main
from tests.tfjobs import dense_config, replica, tfjob

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tensorflow-dist-mnist.yaml"
JOB = "tf-dist-mnist-for-e2e-test"


def test_the_example_renders_pods_then_services_per_type(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "-f", str(EXAMPLE)]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    ps = [f"{JOB}-ps-{i}" for i in range(2)]
    workers = [f"{JOB}-worker-{i}" for i in range(4)]
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == (
        [("Pod", n) for n in ps] + [("Service", n) for n in ps]
        + [("Pod", n) for n in workers] + [("Service", n) for n in workers])
    assert docs[4]["spec"]["containers"][0]["env"] == [{"name": "TF_CONFIG", "value": (
        dense_config(JOB, "kubeflow", {"ps": 2, "worker": 4}, "worker", 0))}]
    assert docs[4]["metadata"]["ownerReferences"][0]["uid"] == (
        "00000000-0000-0000-0000-000000000000")


def test_gang_cluster_domain_warnings_and_errors(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    good = tfjob("g", {"Worker": replica(2, restartPolicy="Always")})
    bad = tfjob("b", {"Chief": replica(1), "Master": replica(1)})
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump(good))
    assert main(["render", "-f", str(path), "--gang-scheduling", "volcano",
                 "--cluster-domain", "cluster.local", "-n", "team"]) == 0
    captured = capsys.readouterr()
    docs = list(yaml.safe_load_all(captured.out))
    assert [d["kind"] for d in docs] == ["PodGroup", "Pod", "Pod", "Service", "Service"]
    assert docs[0]["spec"] == {"minMember": 2, "queue": "default", "minResources": {}}
    assert "g-worker-0.team.svc.cluster.local:2222" in docs[1]["spec"]["containers"][0][
        "env"][0]["value"]
    assert captured.err == (f"{path}: TFJob team/g: warning: Restart policy in pod template "
                            "will be overwritten by restart policy in replica spec\n")
    path.write_text(yaml.safe_dump(bad))
    assert main(["render", "-f", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}:6: TFJob default/b: spec.tfReplicaSpecs: Forbidden: must not have more "
        "than 1 Chief or Master role\n")
