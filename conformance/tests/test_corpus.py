"""conformance.corpus: the corpus shape, upstream manifests, merge patches, clear errors."""

from pathlib import Path

import pytest
import yaml

from conformance.corpus import CorpusError, Step, load
from conformance.kinds import MPIJOB_V2BETA1, PYTORCHJOB_V1, TFJOB_V1
from mpi_controller.testing import merge_patch

PI = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
      "metadata": {"name": "pi", "namespace": "somewhere"},
      "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "Running"},
               "mpiReplicaSpecs": {"Launcher": {"replicas": 1}, "Worker": {"replicas": 2}}}}


def fake_upstream(tmp_path: Path):  # type: ignore[no-untyped-def]
    def resolve(rel: str) -> Path:
        path = tmp_path / "upstream" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(PI))
        return path
    return resolve


def write(path: Path, text: str) -> None:
    path.write_text(text)


def test_merge_patch_is_rfc7386() -> None:
    assert merge_patch({"a": {"b": 1, "c": 2}, "d": [1]}, {"a": {"b": None, "e": 3}, "d": [2]}) \
        == {"a": {"c": 2, "e": 3}, "d": [2]}


def test_case_from_upstream_file_patched_and_renamed(tmp_path: Path) -> None:
    write(tmp_path / "groups.yaml", "flags: [--threadiness, '4']\ngroups: {default: {}}\n")
    write(tmp_path / "scaled.yaml", "manifest: upstream:examples/pi.yaml\nshort: true\n"
          "patch: {spec: {mpiReplicaSpecs: {Worker: {replicas: 3}}}}\n"
          "steps: [{wait: Running}, {patch: {spec: {runPolicy: {suspend: true}}}},"
          " {wait: {event: MPIJobSuspended}}]\n")
    corpus = load(tmp_path, fake_upstream(tmp_path))
    (case,) = corpus.cases
    assert corpus.flags == ["--threadiness", "4"]
    assert case.name == "scaled"
    assert case.short
    assert case.group == "default"
    assert case.manifest["metadata"] == {"name": "scaled"}  # named after the file, no namespace
    assert case.manifest["spec"]["mpiReplicaSpecs"]["Worker"] == {"replicas": 3}
    assert case.steps == [Step("wait-condition", "Running"),
                          Step("patch", {"spec": {"runPolicy": {"suspend": True}}}),
                          Step("wait-event", "MPIJobSuspended")]
    assert corpus.in_group("default", short=True) == [case]


@pytest.mark.parametrize(("text", "message"), [
    ("manifest: 3\n", "manifest: must be an object, 'upstream:PATH' or 'repo:PATH'"),
    ("manifest: {kind: MPIJob}\nsteps: [{wait: {object: pods}}]\n",
     "steps[0]: object: must be PLURAL/NAME or PLURAL/NAME/SUBRESOURCE, got 'pods'"),
    ("manifest: {kind: MPIJob}\nsteps: [{wait: {gone: 3}}]\n",
     "steps[0]: object: must be PLURAL/NAME or PLURAL/NAME/SUBRESOURCE, got 3"),
    ("manifest: {kind: MPIJob}\nsteps: [{patch: {object: pods/a, merge: {}, strategic: {}}}]\n",
     "steps[0]: patch of an object: needs object and one of merge or strategic"),
    ("manifest: {kind: MPIJob}\ngroup: gpu\n", "group: 'gpu' is not in groups.yaml"),
    ("manifest: {kind: MPIJob}\nsteps: [{nap: 3}]\n", "steps[0]: unknown step"),
    ("manifest: {kind: MPIJob}\nwait: Running\n", "unknown field(s) wait"),
])
def test_malformed_case_names_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path / "groups.yaml", "groups: {default: {}}\n")
    write(tmp_path / "bad.yaml", text)
    with pytest.raises(CorpusError, match=r"bad\.yaml: ") as err:
        load(tmp_path, fake_upstream(tmp_path))
    assert message in str(err.value)


def test_groups_need_default(tmp_path: Path) -> None:
    write(tmp_path / "groups.yaml", "groups: {volcano: {flags: [--gang-scheduling, volcano]}}\n")
    with pytest.raises(CorpusError, match="'default' is required"):
        load(tmp_path, fake_upstream(tmp_path))


def test_the_mpijob_corpus_loads_and_covers_every_group(tmp_path: Path) -> None:
    corpus = load(MPIJOB_V2BETA1.corpus, fake_upstream(tmp_path))
    groups = {c.group for c in corpus.cases}
    assert groups == set(corpus.groups) == {"default", "volcano", "scheduler-plugins",
                                            "cluster-domain"}
    assert all(r in MPIJOB_V2BETA1.optional for g in corpus.groups.values() for r in g.resources)
    short = [c for c in corpus.cases if c.short]
    assert short
    assert {c.group for c in short} == {"default"}
    # Every spec field the issue lists is exercised by some case.
    text = "\n".join(p.read_text() for p in MPIJOB_V2BETA1.corpus.glob("*.yaml"))
    for field in ("runLauncherAsWorker", "launcherCreationPolicy", "Intel", "MPICH",
                  "sshAuthMountPath", "slotsPerWorker", "cleanPodPolicy: All",
                  "cleanPodPolicy: None", "suspend", "managedBy", "schedulingPolicy",
                  "ValidationError"):
        assert field in text, field


def test_replica_patch_gives_defaults_under_every_replica_spec(tmp_path: Path) -> None:
    write(tmp_path / "groups.yaml", "replica_patch: {template: {metadata: {annotations: "
          "{d: 10s}}}, restartPolicy: Never}\ngroups: {default: {}, domain: {env: {D: x}}}\n")
    write(tmp_path / "own.yaml", "manifest: {kind: TFJob, spec: {tfReplicaSpecs: {"
          "PS: {replicas: 1}, Worker: {template: {metadata: {annotations: {d: 600s}}}}}}}\n"
          "patch: {spec: {tfReplicaSpecs: {PS: {restartPolicy: Always}}}}\ngroup: domain\n")
    corpus = load(tmp_path, replica_specs="tfReplicaSpecs")
    (case,) = corpus.cases
    assert case.manifest["spec"]["tfReplicaSpecs"] == {
        "PS": {"replicas": 1, "restartPolicy": "Always",
               "template": {"metadata": {"annotations": {"d": "10s"}}}},
        "Worker": {"restartPolicy": "Never",
                   "template": {"metadata": {"annotations": {"d": "600s"}}}}}
    assert corpus.groups["domain"].env == {"D": "x"}
    assert corpus.groups["default"].env == {}


def test_replica_patch_needs_the_kinds_map(tmp_path: Path) -> None:
    write(tmp_path / "groups.yaml", "replica_patch: {restartPolicy: Never}\n"
          "groups: {default: {}}\n")
    write(tmp_path / "a.yaml", "manifest: {kind: TFJob}\n")
    with pytest.raises(CorpusError, match="replica_patch: the kind names no replica specs map"):
        load(tmp_path)


@pytest.mark.parametrize(("groups", "message"), [
    ("groups: {default: {}}\nflag: []\n", "groups.yaml: unknown field(s) flag"),
    ("groups: {default: {envs: {}}}\n", "groups.default: unknown field(s) envs"),
    ("groups: {default: {env: {A: 1}}}\n", "groups.default.env: must map names to strings"),
])
def test_malformed_groups_name_the_field(tmp_path: Path, groups: str, message: str) -> None:
    write(tmp_path / "groups.yaml", groups)
    write(tmp_path / "a.yaml", "manifest: {kind: TFJob}\n")
    with pytest.raises(CorpusError, match=r"groups\.yaml: ") as err:
        load(tmp_path)
    assert message in str(err.value)


def test_repo_manifests_and_object_steps(tmp_path: Path) -> None:
    write(tmp_path / "groups.yaml", "groups: {default: {}}\n")
    write(tmp_path / "tf.yaml", "manifest: repo:examples/tensorflow-dist-mnist.yaml\nsteps:\n"
          "  - wait: {object: 'pods/{name}-worker-0', phase: Running}\n"
          "  - patch: {object: 'pods/{name}-worker-0', merge: {metadata: {labels: {a: b}}}}\n"
          "  - patch: {object: 'pods/{name}-worker-0/status', json: [{op: remove, path: /x}]}\n"
          "  - sleep: 2\n"
          "  - wait: {gone: 'services/{name}-worker-0'}\n")
    (case,) = load(tmp_path).cases
    assert case.manifest["kind"] == "TFJob"
    assert case.manifest["metadata"] == {"name": "tf"}  # the example's namespace is dropped
    assert case.manifest["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 4
    assert case.steps == [
        Step("wait-object", {"object": "pods/{name}-worker-0", "phase": "Running"}),
        Step("patch-object", {"object": "pods/{name}-worker-0", "type": "merge",
                              "patch": {"metadata": {"labels": {"a": "b"}}}}),
        Step("patch-object", {"object": "pods/{name}-worker-0/status", "type": "json",
                              "patch": [{"op": "remove", "path": "/x"}]}),
        Step("sleep", 2.0),
        Step("wait-gone", "services/{name}-worker-0")]


def test_the_tfjob_corpus_loads_and_covers_every_field(tmp_path: Path) -> None:
    corpus = load(TFJOB_V1.corpus, fake_upstream(tmp_path), replica_specs="tfReplicaSpecs")
    assert {c.group for c in corpus.cases} == set(corpus.groups) == {
        "default", "volcano", "scheduler-plugins", "cluster-domain"}
    assert corpus.groups["cluster-domain"].env == {"CUSTOM_CLUSTER_DOMAIN": "cluster.local"}
    assert all(r in TFJOB_V1.optional for g in corpus.groups.values() for r in g.resources)
    assert {c.group for c in corpus.cases if c.short} == {"default"}
    text = "\n".join(p.read_text() for p in TFJOB_V1.corpus.glob("*.yaml"))
    for field in ("Chief", "Master", "PS", "Worker", "Evaluator", "containerPort",
                  "restartPolicy: Always", "restartPolicy: OnFailure", "restartPolicy: Never",
                  "restartPolicy: ExitCode", 'exit-code: "137"', 'exit-code: "1"',
                  "successPolicy: AllWorkers", "enableDynamicWorker", "backoffLimit",
                  "activeDeadlineSeconds", "ttlSecondsAfterFinished", "cleanPodPolicy: All",
                  "cleanPodPolicy: Running", "cleanPodPolicy: None", "suspend: true",
                  "managedBy: kueue.x-k8s.io/multikueue",
                  "managedBy: kubeflow.org/training-operator", "schedulingPolicy",
                  "minAvailable", "minResources", "queue", "priorityClass",
                  "scheduleTimeoutSeconds", "create_error: true", "upstream:examples/tensorflow"):
        assert field in text, field


def test_corpus_in_a_flag_is_the_corpus_directory(tmp_path: Path) -> None:
    write(tmp_path / "groups.yaml", 'flags: [--a, "{corpus}/x"]\ngroups: {default: {}, '
          'init: {flags: [--template-file, "{corpus}/t.tmpl"]}}\n')
    write(tmp_path / "a.yaml", "manifest: {kind: TFJob}\ngroup: init\n")
    corpus = load(tmp_path)
    assert corpus.flags == ["--a", f"{tmp_path.resolve()}/x"]
    assert corpus.groups["init"].flags == ["--template-file", f"{tmp_path.resolve()}/t.tmpl"]


def test_the_pytorchjob_corpus_loads_and_covers_every_field(tmp_path: Path) -> None:
    corpus = load(PYTORCHJOB_V1.corpus, fake_upstream(tmp_path),
                  replica_specs="pytorchReplicaSpecs")
    assert {c.group for c in corpus.cases} == set(corpus.groups) == {
        "default", "volcano", "scheduler-plugins", "init-container"}
    template = PYTORCHJOB_V1.corpus.resolve() / "init-container.tmpl"
    assert f"{template}" in corpus.groups["init-container"].flags
    assert template.is_file()
    assert all(r in PYTORCHJOB_V1.optional for g in corpus.groups.values() for r in g.resources)
    assert {c.group for c in corpus.cases if c.short} == {"default"}
    text = "\n".join(p.read_text() for p in PYTORCHJOB_V1.corpus.glob("*.yaml"))
    for field in ("Master", "Worker", "nprocPerNode", "containerPort", "elasticPolicy",
                  "rdzvBackend", "rdzvHost", "rdzvPort", "rdzvId", "rdzvConf", "standalone",
                  "maxRestarts", "minReplicas", "maxReplicas", "nProcPerNode", "metrics",
                  "pytorchjobs/{name}/scale", "horizontalpodautoscalers/{name}",
                  "restartPolicy: Always", "restartPolicy: Never", "restartPolicy: ExitCode",
                  'exit-code: "137"', 'exit-code: "1"', "backoffLimit",
                  "activeDeadlineSeconds", "ttlSecondsAfterFinished", "cleanPodPolicy: All",
                  "cleanPodPolicy: Running", "cleanPodPolicy: None", "suspend: true",
                  "managedBy: kueue.x-k8s.io/multikueue",
                  "managedBy: kubeflow.org/training-operator", "schedulingPolicy",
                  "minAvailable", "minResources", "queue", "priorityClass",
                  "scheduleTimeoutSeconds", "create_error: true", "upstream:examples/pytorch",
                  "repo:examples/pytorch-simple.yaml"):
        assert field in text, field
    upstream = {p.relative_to(PYTORCHJOB_V1.corpus) for p in PYTORCHJOB_V1.corpus.glob("*")}
    assert not any(p.suffix not in (".yaml", ".tmpl") for p in upstream)
