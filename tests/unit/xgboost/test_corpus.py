"""The XGBoostJob conformance corpus (``conformance/corpus/xgboostjob-v1``) loads, its
``upstream:`` manifests are the examples copied verbatim into ``examples/xgboost/``, it covers
what the kind has, and each case is as valid as its name says (to the controller's checks on
the defaulted job: the cases upstream's webhook would refuse are named ``invalid-*`` or say so;
training-operator runs without its webhook in the differential run)."""

from __future__ import annotations

from pathlib import Path

from conformance.corpus import load
from mpi_controller.xgboost import set_defaults, validate
from tests.support import REPO

CORPUS = REPO / "conformance" / "corpus" / "xgboostjob-v1"
REFUSED = {"invalid-master-replicas", "invalid-name.dotted", "invalid-no-xgboost-container",
           "invalid-workers-only", "managed-by-unknown", "refused-no-replica-specs"}


def copied_example(rel: str) -> Path:
    """An ``upstream:examples/xgboost/...`` path as this repository's verbatim copy."""
    path = Path(rel)
    assert path.parts[:2] == ("examples", "xgboost"), rel
    return REPO / "examples" / "xgboost" / path.name


def test_the_corpus_loads_and_covers_the_kind() -> None:
    corpus = load(CORPUS, copied_example, replica_specs="xgbReplicaSpecs")
    assert corpus.flags[:2] == ["--enable-scheme", "xgboostjob"]
    assert {c.group for c in corpus.cases} == set(corpus.groups) == {
        "default", "volcano", "scheduler-plugins"}
    short = [c.name for c in corpus.cases if c.short]
    assert 3 <= len(short) <= 5
    assert {c.group for c in corpus.cases if c.short} == {"default"}
    assert all(c.manifest["kind"] == "XGBoostJob" for c in corpus.cases)
    text = "\n".join(p.read_text() for p in CORPUS.glob("*.yaml"))
    for field in ("Master", "Worker", "containerPort", "xgboostjob-port",
                  "restartPolicy: Always", "restartPolicy: OnFailure", "restartPolicy: Never",
                  "restartPolicy: ExitCode", 'exit-code: "137"', 'exit-code: "1"',
                  "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished",
                  "cleanPodPolicy: All", "cleanPodPolicy: Running", "cleanPodPolicy: None",
                  "suspend: true", "suspend: false", "replicas: 3}", "replicas: 1}",
                  "managedBy: kueue.x-k8s.io/multikueue",
                  "managedBy: kubeflow.org/training-operator", "schedulingPolicy",
                  "minAvailable", "minResources", "queue", "priorityClass",
                  "scheduleTimeoutSeconds", "schedulerName", "create_error: true",
                  "upstream:examples/xgboost/xgboostjob.yaml", "upstream:examples/xgboost/smoke",
                  "upstream:examples/xgboost/lightgbm", "upstream:examples/xgboost/xgboost-dist",
                  "repo:examples/xgboost/"):
        assert field in text, field


def test_every_upstream_example_is_a_case() -> None:
    text = "\n".join(p.read_text() for p in CORPUS.glob("*.yaml"))
    for example in (REPO / "examples" / "xgboost").glob("*.yaml"):
        if example.name != "xgboostjob_v1_iris_train.yaml":  # the same as xgboostjob.yaml
            assert example.name in text, example.name
    assert (REPO / "examples" / "xgboost" / "xgboostjob_v1_iris_train.yaml").read_text() == (
        REPO / "examples" / "xgboost" / "xgboostjob.yaml").read_text()


def test_each_case_is_as_valid_as_its_name_says() -> None:
    corpus = load(CORPUS, copied_example, replica_specs="xgbReplicaSpecs")
    refused = {c.name for c in corpus.cases if validate(set_defaults(c.manifest))}
    assert refused == REFUSED
    assert [c.name for c in corpus.cases if c.create_error] == ["refused-no-replica-specs"]
