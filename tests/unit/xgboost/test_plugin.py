"""The XGBoostJob kind's registry entry (``mpi_controller.kinds``) and what the rest of the
program reads from it: scheme, CRD, operator name, the validating webhook of
training-operator v1.9 (``pkg/webhooks/xgboost``, ``validator.xgboostjob.training-operator.
kubeflow.org`` at ``/validate-kubeflow-org-v1-xgboostjob``), examples, and ``render``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mpi_controller.cli import main
from mpi_controller.engine.plugin import RenderOptions
from mpi_controller.kinds import plugin, schemes
from mpi_controller.xgboost.crd import XGBOOSTJOB
from mpi_controller.xgboost.plugin import PLUGIN
from tests.support import REPO
from tests.unit.xgboost.jobs import EXAMPLES, example, xgboostjob

JOB = "xgboost-dist-iris-test-train"


def test_the_kind_is_registered_once() -> None:
    """``--enable-scheme xgboostjob`` (training-operator's scheme name)."""
    assert plugin("XGBoostJob") is PLUGIN
    assert schemes().count("xgboostjob") == 1


def test_names_of_the_kind() -> None:
    """xgboost_types.go and xgboostjob_controller.go: kind, plural, ``xgboostjob-controller``
    (the pods' operator-name label and the Events' source), framework ``xgboost`` (metrics)."""
    assert (PLUGIN.scheme, PLUGIN.kind, PLUGIN.group, PLUGIN.api_versions, PLUGIN.plural) == (
        "xgboostjob", "XGBoostJob", "kubeflow.org", ("v1",), "xgboostjobs")
    assert PLUGIN.crd is XGBOOSTJOB
    assert PLUGIN.crd_name == "xgboostjobs.kubeflow.org"
    assert PLUGIN.operator_names == ("xgboostjob-controller",)
    assert PLUGIN.component == "xgboostjob-controller"
    assert PLUGIN.framework_name == "xgboost"
    assert (PLUGIN.flags, PLUGIN.rbac, PLUGIN.children) == (None, (), ())


def test_the_validating_webhook() -> None:
    """SetupWebhook: the path controller-runtime derives for kubeflow.org/v1 XGBoostJob; the
    webhook's checks on a new job and, against the old one, on an update; no warnings."""
    (admission,) = PLUGIN.admission
    assert admission.name == "validator.xgboostjob.training-operator.kubeflow.org"
    assert admission.path == "/validate-kubeflow-org-v1-xgboostjob"
    assert (admission.version, admission.failure_policy) == ("v1", "Fail")
    job = xgboostjob("j", {"Worker": {"replicas": 1}})
    errors, warnings = admission.judge(job, None)
    assert list(errors)[-1] == "spec.xgbReplicaSpecs[Master]: Required value: must be present"
    assert list(warnings) == []
    assert admission.judge(example(), None) == ([], [])
    moved = {**example(), "spec": {**example()["spec"],
                                   "runPolicy": {"managedBy": "kueue.x-k8s.io/multikueue"}}}
    assert admission.judge(moved, example()) == ([
        'spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is '
        "immutable"], [])


def test_the_examples_are_upstreams_xgboostjobs() -> None:
    """Every XGBoostJob manifest of upstream's examples/xgboost, listed once."""
    files = sorted(p.relative_to(REPO).as_posix() for p in EXAMPLES.glob("*.yaml"))
    assert sorted(PLUGIN.examples) == files
    assert len(files) == 8
    for name in files:
        doc = yaml.safe_load(Path(REPO, name).read_text())
        assert (doc["apiVersion"], doc["kind"]) == ("kubeflow.org/v1", "XGBoostJob")


def test_render_shows_the_first_syncs_objects() -> None:
    """The renderer: defaults, no errors or warnings for the example, then per type its pods
    and Services (initial_children), the env of SetPodEnv."""
    renderer = PLUGIN.renderer
    assert renderer is not None
    options = RenderOptions(namespace="team")
    job = renderer.prepare({**example(), "metadata": {"name": JOB, "namespace": "team",
                                                      "uid": "u1"}}, options)
    assert renderer.check(job, options) == ([], [])
    objects = renderer.objects(job, options)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Pod", f"{JOB}-master-0"), ("Service", f"{JOB}-master-0"),
        ("Pod", f"{JOB}-worker-0"), ("Pod", f"{JOB}-worker-1"),
        ("Service", f"{JOB}-worker-0"), ("Service", f"{JOB}-worker-1")]
    worker = objects[3]
    assert [(e["name"], e["value"]) for e in worker["spec"]["containers"][0]["env"]] == [
        ("MASTER_PORT", "9991"), ("MASTER_ADDR", f"{JOB}-master-0"), ("WORLD_SIZE", "3"),
        ("RANK", "2"), ("PYTHONUNBUFFERED", "1"), ("WORKER_PORT", "9991"),
        ("WORKER_ADDRS", f"{JOB}-worker-0,{JOB}-worker-1")]
    assert worker["spec"]["restartPolicy"] == "Never"  # ExitCode becomes Never
    assert "training.kubeflow.org/job-role" not in worker["metadata"]["labels"]
    assert objects[0]["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    assert objects[1]["spec"]["ports"] == [{"name": "xgboostjob-port", "port": 9991}]


def test_render_refuses_a_job_without_master(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``mpi-controller render``: the webhook's messages, exit 2."""
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(xgboostjob("w", {"Worker": {"replicas": 2, "template": {
        "spec": {"containers": [{"name": "xgboost", "image": "i"}]}}}})))
    assert main(["render", "-f", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}:6: XGBoostJob default/w: spec.xgbReplicaSpecs[Master]: Required value: "
        "must be present\n")
