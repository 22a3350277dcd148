"""The validating webhooks of TrainJob, TrainingRuntime and ClusterTrainingRuntime for real:
the local cluster's kube-apiserver calls an ``mpi-controller run`` process on 127.0.0.1
(``tests/webhooks.py``), which answers as Trainer v2.3.0's ``pkg/webhooks`` do, reading the
runtimes from the API server:

* a runtime whose trainer step has 2 replicas is refused (create; a ClusterTrainingRuntime on
  update too), with upstream's message naming the field; a deprecated ClusterTrainingRuntime
  is created with upstream's warning;
* a TrainJob naming a runtime that does not exist is refused (``spec.RuntimeRef`` for a
  ClusterTrainingRuntime, ``spec.runtimeRef`` for a TrainingRuntime); one giving ``PET_*`` envs
  or a runtime patch with env for the ``node`` container is refused;
* a TrainJob's runtime patches change only while it is suspended (before or after);
* the TrainJob defaulter (the mutating webhook ``defaulter.trainjob.trainer.kubeflow.org``,
  registered here as deploy/overlays/trainjob registers it, pointed at the same process) stamps
  each runtime patch's ``time``: on create where none is given, on update only where the
  manager's patch changed; a time changed alone is put back.

No controller reconciles TrainJobs here: only admission is tested.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import install_crd
from mpi_controller.kinds import plugin
from mpi_controller.webhook.registry import default_registry
from tests.support import TRAINER_MIN_MINOR, Cluster, _local_kubectl, server_minor, unique_name
from tests.webhooks import serving_webhooks

pytestmark = pytest.mark.cluster

GROUP = "trainer.kubeflow.org/v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
URL = "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html" \
      "#runtime-deprecation-policy"


@pytest.fixture(scope="module")
def webhooks(cluster: Cluster, kube_api: Any, job_crds: dict[str, str],
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if not cluster.local:
        pytest.skip("the API server must reach processes on 127.0.0.1 (the local cluster)")
    if server_minor(cluster) < TRAINER_MIN_MINOR:
        pytest.skip("TrainJob's runtime CRDs need Kubernetes 1.31 (docs/install.md; "
                    "tests/integration/test_deploy.py shows 1.30 refusing them)")
    for plural in ("trainingruntimes", "clustertrainingruntimes"):
        install_crd(cluster, kube_api, f"deploy/crd/trainjob/trainer.kubeflow.org_{plural}.yaml",
                    f"{plural}.trainer.kubeflow.org")
    with serving_webhooks(cluster, tmp_path_factory.mktemp("webhooks")) as proc:
        extra = list(proc.extra)
        configuration = extra[extra.index("--webhook-configuration-name") + 1]
        vwc = json.loads(cluster.kubectl("get", "validatingwebhookconfiguration",
                                         configuration, "-o", "json"))
        served = vwc["webhooks"][0]["clientConfig"]
        base = urllib.parse.urlsplit(served["url"])._replace(path="").geturl()
        mutating = default_registry([plugin("trainjob")]).mutating_configuration(
            configuration, lambda path: {"url": base + path, "caBundle": served["caBundle"]})
        assert apply(cluster, mutating) == (0, "")
        yield  # serving_webhooks deletes both configurations


def apply(cluster: Cluster, obj: dict[str, Any], verb: str = "create") -> tuple[int, str]:
    """``kubectl <verb> -f -``: its exit code and stderr (refusals and warnings)."""
    binary = os.environ.get("KUBECTL") or _local_kubectl()
    done = subprocess.run([binary, "--kubeconfig", cluster.kubeconfig, verb, "-f", "-"],
                          input=json.dumps(obj), capture_output=True, text=True, timeout=120,
                          check=False)
    return done.returncode, done.stderr.strip()


def denied(webhook: str, message: str) -> str:
    return f'admission webhook "{webhook}" denied the request: {message}'


def runtime(kind: str, name: str, replicas: int = 1, namespace: str | None = None,
            labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {}),
                            **({"labels": labels} if labels else {})}
    return {"apiVersion": GROUP, "kind": kind, "metadata": meta, "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {"spec": {"replicatedJobs": [{
            "name": "node", "replicas": replicas,
            "template": {"metadata": {"labels": {ANCESTOR: "trainer"}}, "spec": {
                "template": {"spec": {"containers": [{"name": "node",
                                                      "image": "busybox"}]}}}}}]}}}}


def trainjob(name: str, namespace: str, ref: str, kind: str = "ClusterTrainingRuntime",
             **spec: Any) -> dict[str, Any]:
    return {"apiVersion": GROUP, "kind": "TrainJob",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"runtimeRef": {"name": ref, "kind": kind}, **spec}}


def node_patch(manager: str, **pod: Any) -> dict[str, Any]:
    return {"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
            "spec": pod}}}}]}}}}


def test_runtimes_are_checked(cluster: Cluster, webhooks: None, namespace: str) -> None:
    replicas = "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1"
    name = unique_name("ctr")
    assert apply(cluster, runtime("ClusterTrainingRuntime", name, replicas=2)) == (1, (
        'Error from server (Forbidden): error when creating "STDIN": '
        + denied("validator.clustertrainingruntime.trainer.kubeflow.org", replicas)))
    assert apply(cluster, runtime("TrainingRuntime", "tr", 2, namespace)) == (1, (
        'Error from server (Forbidden): error when creating "STDIN": '
        + denied("validator.trainingruntime.trainer.kubeflow.org", replicas)))
    deprecated = runtime("ClusterTrainingRuntime", name,
                         labels={"trainer.kubeflow.org/support": "deprecated"})
    try:
        assert apply(cluster, deprecated) == (0, (
            f'Warning: ClusterTrainingRuntime "{name}" is deprecated and will be removed in a '
            f"future release of Kubeflow Trainer. See runtime deprecation policy: {URL}"))
        deprecated["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
        code, err = apply(cluster, deprecated, "replace")
        assert (code, err.splitlines()[-1]) == (1, (
            'Error from server (Forbidden): error when replacing "STDIN": '
            + denied("validator.clustertrainingruntime.trainer.kubeflow.org", replicas)))
    finally:
        cluster.kubectl("delete", "clustertrainingruntime", name, "--ignore-not-found")


def test_a_trainjob_needs_its_runtime_and_no_reserved_envs(cluster: Cluster, webhooks: None,
                                                           namespace: str) -> None:
    hook = "validator.trainjob.trainer.kubeflow.org"
    assert apply(cluster, trainjob("a", namespace, "nope")) == (1, (
        'Error from server (Forbidden): error when creating "STDIN": ' + denied(hook, (
            'spec.RuntimeRef: Invalid value: {"name":"nope","apiGroup":"trainer.kubeflow.org",'
            '"kind":"ClusterTrainingRuntime"}: clustertrainingruntimes.trainer.kubeflow.org '
            '"nope" not found: specified clusterTrainingRuntime must be created before the '
            "TrainJob is created"))))
    assert apply(cluster, trainjob("a", namespace, "nope", "TrainingRuntime")) == (1, (
        'Error from server (Forbidden): error when creating "STDIN": ' + denied(hook, (
            'spec.runtimeRef: Invalid value: {"name":"nope","apiGroup":"trainer.kubeflow.org",'
            '"kind":"TrainingRuntime"}: trainingruntimes.trainer.kubeflow.org "nope" not found: '
            "specified trainingRuntime must be created before the TrainJob is created"))))
    assert apply(cluster, runtime("TrainingRuntime", "torch", namespace=namespace))[0] == 0
    env = [{"name": "PET_NNODES", "value": "3"}]
    assert apply(cluster, trainjob("a", namespace, "torch", "TrainingRuntime",
                                   trainer={"env": env})) == (1, (
        'Error from server (Forbidden): error when creating "STDIN": ' + denied(hook, (
            'spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"3"}]: must not '
            "have reserved envs, invalid envs configured: [PET_NNODES]"))))
    code, err = apply(cluster, trainjob("a", namespace, "torch", "TrainingRuntime",
                                        runtimePatches=[node_patch("example.com/m", containers=[
                                            {"name": "node", "env": env}])]))
    assert code == 1
    assert err.endswith("must not have envs for the dataset-initializer, model-initializer, "
                        "node containers"), err
    assert "denied the request: spec.runtimePatches: Invalid value: [{\"manager\":" in err


def test_runtime_patches_change_only_while_suspended(cluster: Cluster, webhooks: None,
                                                     namespace: str) -> None:
    hook = "validator.trainjob.trainer.kubeflow.org"
    assert apply(cluster, runtime("TrainingRuntime", "torch", namespace=namespace))[0] == 0
    job = trainjob("p", namespace, "torch", "TrainingRuntime", suspend=False, runtimePatches=[
        node_patch("kueue.x-k8s.io/manager", nodeSelector={"pool": "a"})])
    assert apply(cluster, job) == (0, "")
    stored = json.loads(cluster.kubectl("get", "trainjob", "p", "-n", namespace, "-o", "json"))
    stored["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"][
        "replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {
            "pool": "b"}
    assert apply(cluster, stored, "replace") == (1, (
        'Error from server (Forbidden): error when replacing "STDIN": ' + denied(hook, (
            "spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the "
            "TrainJob is suspended before or after the update"))))
    stored["spec"]["suspend"] = True
    assert apply(cluster, stored, "replace") == (0, "")


def test_the_defaulter_stamps_when_each_managers_patch_changed(cluster: Cluster, webhooks: None,
                                                             namespace: str) -> None:
    """Trainer v2.3.0's ``TrainJobDefaulter`` (its integration test "Should set Time on each
    RuntimePatch when creating a TrainJob", and the update rules of ``Default``)."""
    earlier = "2026-01-01T00:00:00Z"
    assert apply(cluster, runtime("TrainingRuntime", "torch", namespace=namespace))[0] == 0
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    job = trainjob("stamped", namespace, "torch", "TrainingRuntime", suspend=True,
                   runtimePatches=[node_patch("acme.io/manager-one", nodeSelector={"pool": "a"}),
                                   {**node_patch("acme.io/manager-two",
                                                 nodeSelector={"pool": "a"}), "time": earlier}])
    assert apply(cluster, job) == (0, "")

    def stored() -> dict[str, Any]:
        got: dict[str, Any] = json.loads(cluster.kubectl("get", "trainjob", "stamped", "-n",
                                                         namespace, "-o", "json"))
        return got

    def times(obj: dict[str, Any]) -> list[str]:
        return [p["time"] for p in obj["spec"]["runtimePatches"]]

    created = stored()
    stamped, kept = times(created)
    assert kept == earlier
    assert before <= dt.datetime.fromisoformat(stamped) <= dt.datetime.now(dt.UTC)
    # Manager two changes its patch (while suspended): only its time is now; manager one's
    # time, changed alone, is put back.
    created["spec"]["runtimePatches"][0]["time"] = earlier
    created["spec"]["runtimePatches"][1]["trainingRuntimeSpec"]["template"]["spec"][
        "replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {
            "pool": "b"}
    assert apply(cluster, created, "replace") == (0, "")
    first, second = times(stored())
    assert first == stamped
    assert second != earlier
    assert before <= dt.datetime.fromisoformat(second) <= dt.datetime.now(dt.UTC)
