"""conformance.trainer and the TrainJob kind (pure): the manager's configuration from the
corpus's flags, the webhook configurations it needs, the kind's registration and its corpus."""

from pathlib import Path

import pytest
import yaml

from conformance.corpus import load
from conformance.kinds import JOBSETS, KINDS, POD_GROUPS, TRAINJOB_V1ALPHA1
from conformance.operators import REPO
from conformance.trainer import (
    MUTATING,
    NAMESPACE,
    NO_NAMESPACE,
    READY,
    SERVICE,
    VALIDATING,
    configuration,
    shipped_runtimes,
    webhook_configuration,
)

PORTS = {"webhook_port": 1, "metrics_port": 2, "health_port": 3}


def test_the_corpus_flags_become_the_managers_configuration() -> None:
    flags = ["--enable-scheme", "trainjob", "--controller-threads", "4", "--kube-api-qps=50",
             "--kube-api-burst", "100", "--namespace", "conf-ns"]
    assert configuration(flags, **PORTS) == {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1", "kind": "Configuration",
        "webhook": {"port": 1, "host": "127.0.0.1"},
        "metrics": {"bindAddress": "127.0.0.1:2", "secureServing": False},
        "health": {"healthProbeBindAddress": "127.0.0.1:3"},
        "leaderElection": {"leaderElect": False},
        "certManagement": {"enable": True, "webhookServiceName": SERVICE,
                           "webhookSecretName": "kubeflow-trainer-webhook-cert"},
        "clientConnection": {"qps": 50.0, "burst": 100},
        "controller": {"groupKindConcurrency": {"TrainJob.trainer.kubeflow.org": 4}},
    }


def test_no_flags_leave_the_managers_client_and_concurrency_defaults() -> None:
    config = configuration([], **PORTS)
    assert "clientConnection" not in config
    assert "controller" not in config


@pytest.mark.parametrize(("flags", "message"), [
    (["--gang-scheduling", "volcano"], "no counterpart of --gang-scheduling"),
    (["--kube-api-qps"], "--kube-api-qps has no value"),
])
def test_a_flag_the_manager_cannot_take_is_refused(flags: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        configuration(flags, **PORTS)


@pytest.mark.parametrize(("kind", "name"), [("Validating", VALIDATING), ("Mutating", MUTATING)])
def test_the_webhook_configurations_select_no_namespace(kind: str, name: str) -> None:
    config = webhook_configuration(kind, name)
    assert config["kind"] == f"{kind}WebhookConfiguration"
    assert config["metadata"] == {"name": name}
    [hook] = config["webhooks"]
    assert hook["namespaceSelector"] == NO_NAMESPACE
    assert hook["clientConfig"]["service"]["namespace"] == NAMESPACE == "kubeflow-system"
    assert hook["rules"][0]["resources"] == ["trainjobs"]


def test_ready_is_the_trainjob_controllers_workers() -> None:
    line = ('{"level":"info","ts":"x","msg":"Starting workers","controller":'
            '"trainjob_controller","worker count":4}')
    assert all(part in line for part in READY)
    other = line.replace("trainjob_controller", "trainingruntime_controller")
    assert not all(part in other for part in READY)


def test_the_trainjob_kind_records_jobsets_and_needs_the_jobset_addon() -> None:
    kind = KINDS["trainjob-v1alpha1"]
    assert kind is TRAINJOB_V1ALPHA1
    assert kind.reference == "trainer"
    assert kind.addons == ("jobset",)
    assert JOBSETS in kind.children
    assert kind.optional == POD_GROUPS
    assert kind.crds["ours"]() == REPO / "deploy/crd/trainjob/trainer.kubeflow.org_trainjobs.yaml"
    assert kind.resource().path("ns") == \
        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs"
    assert kind.ours_flags(["--controller-threads", "4"]) == ["--threadiness", "4"]
    assert kind.readme_sections == ("Differences from Trainer v2.3.0",)
    assert kind.setup is not None


def test_the_shipped_runtimes_are_the_five_of_deploy() -> None:
    assert [p.name for p in shipped_runtimes()] == [
        f"{n}-distributed.yaml" for n in ("deepspeed", "jax", "mlx", "torch", "xgboost")]


def fake_upstream(tmp_path: Path) -> object:
    def resolve(rel: str) -> Path:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("kind: TrainJob\nspec: {runtimeRef: {name: torch-distributed}}\n")
        return path
    return resolve


def test_the_trainjob_corpus_covers_every_runtime_and_field(tmp_path: Path) -> None:
    corpus = load(TRAINJOB_V1ALPHA1.corpus, fake_upstream(tmp_path))  # type: ignore[arg-type]
    assert {c.group for c in corpus.cases} == set(corpus.groups) == {"default", "podgroups"}
    assert all(r in TRAINJOB_V1ALPHA1.optional for g in corpus.groups.values()
               for r in g.resources)
    refs = {c.manifest["spec"]["runtimeRef"]["name"] for c in corpus.cases}
    own = {yaml.safe_load(p.read_text())["metadata"]["name"]
           for p in (TRAINJOB_V1ALPHA1.corpus / "runtimes").glob("*.yaml")}
    shipped = {yaml.safe_load(p.read_text())["metadata"]["name"] for p in shipped_runtimes()}
    assert shipped | own <= refs
    text = "\n".join(p.read_text() for p in TRAINJOB_V1ALPHA1.corpus.glob("*.yaml"))
    for field in ("numNodes", "numProcPerNode", "resourcesPerNode", "initializer", "dataset",
                  "model", "storageUri", "secretRef", "runtimePatches", "suspend: true",
                  "suspend: false", "activeDeadlineSeconds", "managedBy: kueue.x-k8s.io",
                  "kind: TrainingRuntime", "upstream:examples/yaml", "wait: Failed",
                  "wait: Complete"):
        assert field in text, field
    assert {c.name for c in corpus.cases if c.short} == {"torch-defaults", "deepspeed"}
