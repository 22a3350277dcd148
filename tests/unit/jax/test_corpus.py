"""The JAXJob conformance corpus (conformance/corpus/jaxjob-v1) loads with
``conformance.corpus.load`` and covers what it must: every restart policy, the run policy,
scaling, suspension, managedBy, gang scheduling, upstream's examples and refused and invalid
manifests; every valid case is valid for ours and every ``invalid-`` case is not."""

from __future__ import annotations

from pathlib import Path

from conformance.corpus import load
from mpi_controller.jax import set_defaults, validate
from tests.unit.jax.jaxjobs import REPO

CORPUS = REPO / "conformance" / "corpus" / "jaxjob-v1"
UPSTREAM_COPIES = {"examples/jax/cpu-demo/demo.yaml": "demo.yaml",
                   "examples/jax/jax-dist-spmd-mnist/jaxjob_dist_spmd_mnist_gloo.yaml":
                       "jaxjob_dist_spmd_mnist_gloo.yaml"}


def upstream(rel: str) -> Path:
    """Upstream's examples as this repository keeps them (verbatim copies in examples/jax)."""
    return REPO / "examples" / "jax" / UPSTREAM_COPIES[rel]


def test_the_corpus_loads_and_covers_every_field() -> None:
    corpus = load(CORPUS, upstream, replica_specs="jaxReplicaSpecs")
    assert corpus.flags[:2] == ["--enable-scheme", "jaxjob"]
    assert {c.group for c in corpus.cases} == set(corpus.groups) == {
        "default", "volcano", "scheduler-plugins"}
    short = [c.name for c in corpus.cases if c.short]
    assert 3 <= len(short) <= 5
    assert {c.group for c in corpus.cases if c.short} == {"default"}
    text = "\n".join(p.read_text() for p in CORPUS.glob("*.yaml"))
    for field in ("restartPolicy: Always", "restartPolicy: OnFailure", "restartPolicy: Never",
                  "restartPolicy: ExitCode", 'exit-code: "137"', 'exit-code: "1"',
                  "containerPort", "replicas: 0", "jaxReplicaSpecs: {}", "backoffLimit",
                  "activeDeadlineSeconds", "ttlSecondsAfterFinished", "cleanPodPolicy: All",
                  "cleanPodPolicy: Running", "cleanPodPolicy: None", "suspend: true",
                  "managedBy: kueue.x-k8s.io/multikueue",
                  "managedBy: kubeflow.org/training-operator", "schedulingPolicy",
                  "minAvailable", "minResources", "queue", "priorityClass",
                  "scheduleTimeoutSeconds", "schedulerName", "create_error: true",
                  "jaxjobs/{name}/scale", *(f"upstream:{p}" for p in UPSTREAM_COPIES)):
        assert field in text, field


def test_each_case_is_valid_unless_named_invalid() -> None:
    corpus = load(CORPUS, upstream, replica_specs="jaxReplicaSpecs")
    for case in corpus.cases:
        errors = validate(set_defaults(case.manifest))
        refused = case.name.startswith("invalid-") or case.create_error
        assert bool(errors) is refused, (case.name, errors)
        assert case.manifest["kind"] == "JAXJob", case.name
