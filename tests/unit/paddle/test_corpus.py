"""The PaddleJob conformance corpus (conformance/corpus/paddlejob-v1) loads with
conformance.corpus and covers what it claims: every replica-type combination, restart policy,
run-policy field and gang group; its valid cases pass our validation of upstream's webhook and
its invalid ones do not. The examples/paddlepaddle manifests are upstream's, verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.corpus import Corpus, load
from mpi_controller.paddle import set_defaults, validate
from tests.support import REPO
from tests.upstream import training_operator_dir

CORPUS = REPO / "conformance" / "corpus" / "paddlejob-v1"
EXAMPLES = ("simple-cpu.yaml", "simple-gpu.yaml")


def corpus() -> Corpus:
    """Loaded with ``upstream:`` paths read from this repository's verbatim copies (only
    upstream's examples/paddlepaddle are named)."""
    def upstream(rel: str) -> Path:
        assert rel.startswith("examples/paddlepaddle/"), rel
        return REPO / rel
    return load(CORPUS, upstream, replica_specs="paddleReplicaSpecs")


def test_the_corpus_loads_with_its_groups_and_flags() -> None:
    """conformance.corpus's format: groups.yaml with the paddlejob scheme and the gang groups; 3-5
    short cases in the default group; each case a kubeflow.org/v1 PaddleJob named after its
    file."""
    loaded = corpus()
    assert {c.group for c in loaded.cases} == set(loaded.groups) == {
        "default", "volcano", "scheduler-plugins"}
    assert loaded.flags == ["--enable-scheme", "paddlejob", "--controller-threads", "4",
                            "--kube-api-qps", "50", "--kube-api-burst", "100"]
    assert loaded.groups["volcano"].resources == ["volcano-podgroups"]
    assert loaded.groups["scheduler-plugins"].resources == ["scheduler-plugins-podgroups"]
    short = [c.name for c in loaded.cases if c.short]
    assert 3 <= len(short) <= 5
    assert {c.group for c in loaded.cases if c.short} == {"default"}
    for case in loaded.cases:
        assert case.description, case.name
        assert (case.manifest["apiVersion"], case.manifest["kind"]) == (
            "kubeflow.org/v1", "PaddleJob"), case.name
        assert case.manifest["metadata"] == {"name": case.name}, case.name


def test_every_replica_gets_the_default_duration_unless_it_sets_one() -> None:
    """groups.yaml's replica_patch gives every replica spec a KWOK run time."""
    for case in corpus().cases:
        specs = case.manifest["spec"].get("paddleReplicaSpecs") or {}
        for rtype, spec in specs.items():
            annotations = spec["template"]["metadata"]["annotations"]
            assert "sim.mpi-controller.io/duration" in annotations, (case.name, rtype)


def test_valid_cases_pass_validation_and_invalid_ones_do_not() -> None:
    """Upstream's webhook (our validate) refuses exactly the invalid-* cases and the unknown
    managedBy; refused-* cases are refused by the CRD itself (create_error)."""
    refused_by_webhook = set()
    for case in corpus().cases:
        if case.create_error:
            assert case.name.startswith("refused-"), case.name
            continue
        if validate(set_defaults(case.manifest)):
            refused_by_webhook.add(case.name)
    assert refused_by_webhook == {"invalid-name.dotted", "invalid-no-paddle-container",
                                  "invalid-unsupported-type-only", "managed-by-unknown"}


def test_the_corpus_covers_modes_policies_and_fields() -> None:
    """Collective (Worker), parameter-server (Master and Worker), master-only and empty specs; each
    restart policy, run-policy field, gang field and upstream example."""
    cases = {c.name: c for c in corpus().cases}
    modes = {tuple(sorted(c.manifest["spec"].get("paddleReplicaSpecs") or {}))
             for c in cases.values()}
    assert {("Master", "Worker"), ("Worker",), ("Master",), ()} <= modes
    text = "\n".join(p.read_text() for p in CORPUS.glob("*.yaml"))
    for field in ("Master", "Worker", "containerPort", "elasticPolicy", "minReplicas",
                  "maxReplicas", "maxRestarts", "metrics", "paddlejobs/{name}/scale",
                  "restartPolicy: Always", "restartPolicy: OnFailure", "restartPolicy: Never",
                  "restartPolicy: ExitCode", 'exit-code: "137"', 'exit-code: "1"',
                  "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished",
                  "cleanPodPolicy: All", "cleanPodPolicy: Running", "cleanPodPolicy: None",
                  "suspend: true", "suspend: false", "managedBy: kueue.x-k8s.io/multikueue",
                  "managedBy: kubeflow.org/training-operator", "schedulingPolicy",
                  "minAvailable", "minResources", "queue", "priorityClass",
                  "scheduleTimeoutSeconds", "schedulerName", "create_error: true",
                  "upstream:examples/paddlepaddle/simple-cpu.yaml",
                  "upstream:examples/paddlepaddle/simple-gpu.yaml",
                  "PaddleJobRestarting", "SuccessfulDeletePod", "SuccessfulDeleteService"):
        assert field in text, field
    assert not any(p.suffix != ".yaml" for p in CORPUS.iterdir())


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_examples_are_upstreams_verbatim(name: str) -> None:
    """examples/paddlepaddle are training-operator v1.9.2's examples/paddlepaddle, byte for
    byte."""
    ours = REPO / "examples" / "paddlepaddle" / name
    assert ours.is_file()
    original = training_operator_dir() / "examples" / "paddlepaddle" / name
    assert ours.read_bytes() == original.read_bytes()
