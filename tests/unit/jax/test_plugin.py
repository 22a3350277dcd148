"""The JAXJob kind's registration (``mpi_controller.kinds``) and what the registry gives the
rest of the program: the ``jaxjob`` scheme, training-operator v1.9's validating webhook of
JAXJobs (``pkg/webhooks/jax``: ``validator.jaxjob.training-operator.kubeflow.org`` at
``/validate-kubeflow-org-v1-jaxjob``, failurePolicy Fail), upstream's examples, and
``mpi-controller render`` of them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mpi_controller.cli import main
from mpi_controller.jax.crd import JAXJOB
from mpi_controller.jax.hooks import JAX, is_master_role
from mpi_controller.jax.plugin import PLUGIN
from mpi_controller.kinds import plugin, schemes
from tests.unit.jax.jaxjobs import EXAMPLES, REPO, env, example, jaxjob, replica
from tests.upstream import training_operator_dir

UPSTREAM_EXAMPLES = ("examples/jax/cpu-demo/demo.yaml",
                     "examples/jax/jax-dist-spmd-mnist/jaxjob_dist_spmd_mnist_gloo.yaml")


def test_registered_under_its_scheme() -> None:
    assert "jaxjob" in schemes()
    assert plugin("JAXJob") is PLUGIN
    assert (PLUGIN.scheme, PLUGIN.kind, PLUGIN.group, PLUGIN.api_versions, PLUGIN.plural) == (
        "jaxjob", "JAXJob", "kubeflow.org", ("v1",), "jaxjobs")
    assert (PLUGIN.operator_names, PLUGIN.component, PLUGIN.framework_name) == (
        ("jaxjob-controller",), "jaxjob-controller", "jax")
    assert PLUGIN.crd is JAXJOB
    assert PLUGIN.flags is None
    assert PLUGIN.rbac == ()
    assert PLUGIN.children == ()


def test_the_examples_are_upstreams_verbatim() -> None:
    """examples/jax/ holds upstream's two JAXJob manifests, byte for byte, and the plugin
    names them."""
    assert PLUGIN.examples == tuple(f"examples/jax/{name}" for name in EXAMPLES)
    upstream = training_operator_dir()
    for ours, theirs in zip(PLUGIN.examples, UPSTREAM_EXAMPLES, strict=True):
        text = (REPO / ours).read_text()
        assert yaml.safe_load(text)["kind"] == "JAXJob"
        assert text == (upstream / theirs).read_text()


def test_the_webhook_is_upstreams() -> None:
    (admission,) = PLUGIN.admission
    assert (admission.name, admission.path, admission.version, admission.failure_policy) == (
        "validator.jaxjob.training-operator.kubeflow.org", "/validate-kubeflow-org-v1-jaxjob",
        "v1", "Fail")


def test_the_webhook_judges_the_job_as_submitted() -> None:
    """Before defaults: a lower-case ``worker`` key is refused; managedBy is never checked,
    and may change on update."""
    (admission,) = PLUGIN.admission
    assert admission.judge(example(), None) == ([], [])
    assert admission.judge(jaxjob("a", {"worker": replica(1)}), None) == (
        ['spec.jaxReplicaSpecs[worker]: Unsupported value: "worker": supported values: '
         '"Worker"'], [])
    moved = jaxjob("a", {"Worker": replica(1)},
                   run_policy={"managedBy": "kueue.x-k8s.io/multikueue"})
    assert admission.judge(moved, jaxjob("a", {"Worker": replica(1)})) == ([], [])
    assert admission.judge(jaxjob("a", {"Worker": replica(1)},
                                  run_policy={"managedBy": "x"}), None) == ([], [])


@pytest.mark.parametrize(("rtype", "index", "master"), [
    ("Worker", 0, True), ("Worker", 1, False), ("Worker", 7, False), ("Other", 0, True)])
def test_master_role_is_index_0(rtype: str, index: int, master: bool) -> None:
    """IsMasterRole returns ``index == 0`` whatever the replica type."""
    assert is_master_role(index) is master
    assert JAX().is_master_role({}, rtype, index) is master


def test_render_shows_upstreams_mnist_example(capsys: pytest.CaptureFixture[str]) -> None:
    """Pods then Services of the Worker type, each pod with the coordinator environment."""
    path = REPO / "examples" / "jax" / EXAMPLES[1]
    assert main(["render", "-f", str(path)]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    names = ["jaxjob-mnist-worker-0", "jaxjob-mnist-worker-1"]
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == (
        [("Pod", n) for n in names] + [("Service", n) for n in names])
    for index in (0, 1):
        assert docs[index]["spec"]["containers"][0]["env"] == env(
            "jaxjob-mnist", index=index, processes=2)
        assert docs[index]["metadata"]["namespace"] == "kubeflow"


def test_render_refuses_an_invalid_job(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(jaxjob("b", {"Launcher": replica(1)})))
    assert main(["render", "-f", str(path)]) == 2
    assert capsys.readouterr().err == (
        f'error: {path}:7: JAXJob default/b: spec.jaxReplicaSpecs[Launcher]: Unsupported value: '
        '"Launcher": supported values: "Worker"\n')
