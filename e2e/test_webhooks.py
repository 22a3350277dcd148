"""The webhooks for real: the local cluster's kube-apiserver calls ``mpi-controller run``
processes on 127.0.0.1 (``--webhook-url``; deployed, a Service routes to the replicas).

* jobs created through each version (the two upstream manifests verbatim), read back through
  each, stored as v2beta1; ``kubectl get`` of each version;
* admission refusals with the messages of the controller's own validation, naming the field;
  TFJobs and PyTorchJobs refused with training-operator's messages and warning;
* server-side apply through v1 (partial objects through conversion);
* the webhook process stopped: v2beta1 still works, v1 requests fail with the reason (and so
  do TFJob and PyTorchJob creates: failurePolicy Fail), nothing is lost; started again,
  everything reads back as before;
* certificates rotated (a 60 s validity) while a job runs, with reads through v1 all along;
* two replicas behind one address serving conversions while only one leads.

The module points the MPIJob CRD's conversion at its processes and creates its own
ValidatingWebhookConfiguration; both are put back (the CRD to the Service of deploy/, the
configuration deleted) when it ends. The processes reconcile no namespace of the tests (the
session's controller runs the jobs), so they only serve webhooks.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import ssl
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509

from conftest import delete_mpijobs
from e2e.tcpproxy import RoundRobinProxy
from mpi_controller.mpi import v1alpha2
from mpi_controller.mpi.conversion import (
    ANNOTATION,
    FIELD_PREFIX,
    VERSIONS,
    conversion_record,
    convert,
    generation_of,
)
from tests.mpijobs import MPIJobs, small_job
from tests.processes import ControllerProcess, free_port, http_get
from tests.support import REPO, Cluster, unique_name, wait_for
from tests.webhooks import restore_webhooks, wait_serving, webhook_process

pytestmark = pytest.mark.cluster

CRD = "mpijobs.kubeflow.org"
GROUP, PLURAL = "kubeflow.org", "mpijobs"
ELASTIC = REPO / "examples/v1/tensorflow-mnist-elastic.yaml"
BENCHMARKS = REPO / "examples/v1alpha2/tensorflow-benchmarks.yaml"


def manifest(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    return doc


@dataclass
class Env:
    cluster: Cluster
    api: Any
    ns: str
    """Where the static jobs of these tests live (no controller reconciles them)."""
    home: str
    """The processes' own namespace: their Lease and certificate Secret."""
    vwc: str
    logs: Path
    port: int = field(default_factory=free_port)
    processes: list[ControllerProcess] = field(default_factory=list)

    def webhook_process(self, name: str, *extra: str, port: int | None = None,
                        url_port: int | None = None) -> ControllerProcess:
        proc = webhook_process(self.cluster, self.logs / f"{name}.log", *extra, home=self.home,
                               configuration=self.vwc, port=port or self.port,
                               url_port=url_port)
        self.processes.append(proc)
        proc.start()
        return proc

    def ready(self, proc: ControllerProcess, timeout: float = 90) -> None:
        wait_serving(proc, timeout)

    def get(self, version: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        from kubernetes import client

        obj: dict[str, Any] = client.CustomObjectsApi(self.api).get_namespaced_custom_object(
            GROUP, version, namespace or self.ns, PLURAL, name)
        return obj

    def kubectl_fails(self, *args: str, input: str | None = None) -> str:
        with pytest.raises(RuntimeError) as err:
            self.cluster.kubectl(*args, input=input)
        return str(err.value)


@pytest.fixture(scope="module")
def env(cluster: Cluster, mpijob_crd: str, kube_api: Any,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    if not cluster.local:
        pytest.skip("the API server must reach processes on 127.0.0.1 (the local cluster)")
    suffix = unique_name("wh")
    env = Env(cluster, kube_api, ns=suffix, home=f"{suffix}-home", vwc=f"mpi-operator-{suffix}",
              logs=tmp_path_factory.mktemp("webhooks"))
    for namespace in (env.ns, env.home, f"{env.home}-idle"):
        cluster.kubectl("create", "namespace", namespace)
    try:
        yield env
    finally:
        for proc in env.processes:
            if proc.alive():
                proc.stop()
        restore_webhooks(cluster, env.vwc)
        for namespace in (env.ns, env.home, f"{env.home}-idle"):
            delete_mpijobs(kube_api, namespace)
            cluster.kubectl("delete", "namespace", namespace, "--wait=false")


@pytest.fixture(scope="module")
def serving(env: Env) -> ControllerProcess:
    proc = env.webhook_process("main")
    env.ready(proc)
    return proc


def _consistent(env: Env, version: str, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The job read through ``version`` and through v2beta1 at the same resourceVersion."""
    def probe() -> tuple[dict[str, Any], dict[str, Any]] | None:
        hub = env.get("v2beta1", name)
        view = env.get(version, name)
        again = env.get("v2beta1", name)
        rvs = {o["metadata"]["resourceVersion"] for o in (hub, view, again)}
        return (view, hub) if len(rvs) == 1 else None
    return wait_for(probe, timeout=30, what=f"a stable read of {name}")


def _etcd_value(env: Env, name: str) -> dict[str, Any]:
    ports = dict(line.split("=", 1) for line in
                 (Path(env.cluster.kubeconfig).parent / "ports.env").read_text().split())
    key = base64.b64encode(f"/registry/{GROUP}/{PLURAL}/{env.ns}/{name}".encode()).decode()
    request = urllib.request.Request(f"http://127.0.0.1:{ports['ETCD_PORT']}/v3/kv/range",
                                     data=json.dumps({"key": key}).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as resp:
        kv = json.loads(resp.read())["kvs"][0]
    value: dict[str, Any] = json.loads(base64.b64decode(kv["value"]))
    return value


def test_create_through_each_version_read_through_each_stored_as_v2beta1(
        env: Env, serving: ControllerProcess) -> None:
    pi = small_job("pi", workers=1)
    created = {"v1": manifest(ELASTIC), "v1alpha2": manifest(BENCHMARKS), "v2beta1": pi}
    env.cluster.kubectl("create", "-n", env.ns, "-f", str(ELASTIC))
    env.cluster.kubectl("create", "-n", env.ns, "-f", str(BENCHMARKS))
    env.cluster.kubectl("create", "-n", env.ns, "-f", "-", input=json.dumps(pi))
    for origin, doc in created.items():
        name = doc["metadata"]["name"]
        own = env.get(origin, name)
        if origin == "v2beta1":
            assert own["spec"]["mpiReplicaSpecs"] == doc["spec"]["mpiReplicaSpecs"]
        else:  # the manifest exactly as written
            assert own["spec"] == doc["spec"]
            assert ANNOTATION not in own["metadata"].get("annotations", {})
        for version in VERSIONS:
            view, hub = _consistent(env, version, name)
            assert view["apiVersion"] == f"kubeflow.org/{version}"
            assert view == convert(hub, version)  # the API server serves our conversion
            assert generation_of(view) == origin
        stored = _etcd_value(env, name)
        assert stored["apiVersion"] == "kubeflow.org/v2beta1"
        assert generation_of(stored) == origin
    crd = json.loads(env.cluster.kubectl("get", "crd", CRD, "-o", "json"))
    assert crd["status"]["storedVersions"] == ["v2beta1"]
    listing = env.cluster.kubectl("get", "mpijobs", "-n", env.ns)  # preferred version: v1
    assert listing.splitlines()[0].split() == ["NAME", "AGE", "STATE"]
    assert sorted(line.split()[0] for line in listing.splitlines()[1:]) == [
        "pi", "tensorflow-benchmarks", "tensorflow-mnist-elastic"]
    for short in ("mj", "mpij"):  # mpi-operator v0.2.3's short names, as its users typed them
        assert sorted(env.cluster.kubectl("get", short, "-n", env.ns, "-o", "name").split()) == [
            f"mpijob.kubeflow.org/{name}"
            for name in ("pi", "tensorflow-benchmarks", "tensorflow-mnist-elastic")]
    header = env.cluster.kubectl("get", "mpijobs.v2beta1.kubeflow.org", "-n", env.ns)
    assert header.splitlines()[0].split() == ["NAME", "STATE", "WORKERS", "AGE"]
    header = env.cluster.kubectl("get", "mpijobs.v1alpha2.kubeflow.org", "-n", env.ns)
    assert header.splitlines()[0].split() == ["NAME", "AGE"]


def _refusal(env: Env, doc: dict[str, Any]) -> str:
    return env.kubectl_fails("create", "-n", env.ns, "-f", "-", input=json.dumps(doc))


def test_admission_refuses_invalid_jobs_naming_the_field(env: Env,
                                                         serving: ControllerProcess) -> None:
    bad_v1 = manifest(ELASTIC)
    bad_v1["metadata"]["name"] = "bad-v1"
    bad_v1["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    assert ('admission webhook "validator.v1.mpijob.mpi-operator.kubeflow.org" denied the '
            "request: spec.mpiReplicaSpecs[Launcher].replicas: MPIReplicaSpec is not valid: "
            "There must be only 1 launcher replica") in _refusal(env, bad_v1)
    del bad_v1["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"]
    del bad_v1["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["image"]
    assert ("denied the request: spec.mpiReplicaSpecs[Worker].template.spec.containers[0].image"
            ": MPIReplicaSpec is not valid: Image is undefined in the container of Worker") \
        in _refusal(env, bad_v1)

    bad_v2 = small_job("bad-v2", workers=1)
    bad_v2["spec"]["slotsPerWorker"] = -1
    bad_v2["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    assert ('admission webhook "validator.v2beta1.mpijob.mpi-operator.kubeflow.org" denied the '
            "request: [spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1, "
            "spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0]") \
        in _refusal(env, bad_v2)

    bad_a2 = manifest(BENCHMARKS)
    bad_a2["metadata"]["name"] = "bad-a2"
    del bad_a2["spec"]["mpiReplicaSpecs"]["Worker"]
    assert ('admission webhook "validator.v1alpha2.mpijob.mpi-operator.kubeflow.org" denied '
            "the request: spec.mpiReplicaSpecs[Worker]: Required value: must have Worker "
            "replica spec") in _refusal(env, bad_a2)
    schema_bad = manifest(BENCHMARKS)
    schema_bad["metadata"]["name"] = "bad-a2-slots"
    schema_bad["spec"]["slotsPerWorker"] = 0
    [expected] = [str(e) for e in v1alpha2.validate(schema_bad)]
    assert expected in _refusal(env, schema_bad)  # the API server's words are ours
    names = env.cluster.kubectl("get", "mpijobs.v2beta1.kubeflow.org", "-n", env.ns, "-o",
                                "name")
    assert "bad" not in names


TF_DIST_MNIST = REPO / "examples/tensorflow-dist-mnist.yaml"
PYTORCH_SIMPLE = REPO / "examples/pytorch-simple.yaml"
NPROC_DEPRECATED = "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"


def _training_job(path: Path, name: str) -> dict[str, Any]:
    """An example as ``name`` in no namespace, suspended (no controller runs it here)."""
    doc = manifest(path)
    doc["metadata"] = {"name": name}
    doc["spec"]["runPolicy"] = {"suspend": True}
    return doc


def test_admission_refuses_invalid_tfjobs_and_pytorchjobs_naming_the_field(
        env: Env, serving: ControllerProcess, tfjob_crd: str, pytorchjob_crd: str) -> None:
    """training-operator v1.9's webhooks, names and messages: the API server calls the
    controller's webhooks and refuses the jobs; PyTorchJob's deprecation warning reaches the
    client, with a refusal and with an admitted job; managedBy cannot change on update."""
    from kubernetes import client

    bad_tf = _training_job(TF_DIST_MNIST, "bad-tf")
    worker = bad_tf["spec"]["tfReplicaSpecs"]["Worker"]
    bad_tf["spec"]["tfReplicaSpecs"].update(Chief=worker, Master=worker)
    assert ('admission webhook "validator.tfjob.training-operator.kubeflow.org" denied the '
            "request: spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or "
            "Master role") in _refusal(env, bad_tf)

    bad_pt = _training_job(PYTORCH_SIMPLE, "bad-pt")
    bad_pt["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 2
    bad_pt["spec"]["elasticPolicy"] = {"nProcPerNode": 2}
    error = _refusal(env, bad_pt)
    assert ('admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied '
            "the request: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1") \
        in error
    assert f"Warning: {NPROC_DEPRECATED}" in error

    warned = _training_job(PYTORCH_SIMPLE, "warned")
    warned["spec"]["elasticPolicy"] = {"nProcPerNode": 2}
    api = client.CustomObjectsApi(env.api)
    _, status, headers = api.create_namespaced_custom_object_with_http_info(
        "kubeflow.org", "v1", env.ns, "pytorchjobs", warned)
    assert status == 201
    assert headers["Warning"] == f'299 - "{NPROC_DEPRECATED}"'
    error = env.kubectl_fails("patch", "pytorchjob", "warned", "-n", env.ns, "--type", "merge",
                              "-p", json.dumps({"spec": {"runPolicy": {
                                  "managedBy": "kueue.x-k8s.io/multikueue"}}}))
    assert ('denied the request: spec.runPolicy.managedBy: Invalid value: '
            '"kueue.x-k8s.io/multikueue": field is immutable') in error
    names = {kind: env.cluster.kubectl("get", kind, "-n", env.ns, "-o", "name").split()
             for kind in ("tfjobs", "pytorchjobs")}
    assert names == {"tfjobs": [], "pytorchjobs": ["pytorchjob.kubeflow.org/warned"]}


def test_server_side_apply_through_v1(env: Env, serving: ControllerProcess,
                                      tmp_path: Path) -> None:
    """Field sets go through conversion as partial objects: a field dropped from the applied
    manifest goes away, nothing appears that was not applied. A ``v1``-only field
    (``mainContainer``) goes too when the job's status was written through ``v2beta1`` (as the
    controller does) between the two applies: the API server then prunes it by field sets
    converted to ``v2beta1``, where it is an annotation of its own. The job names another
    controller (``runPolicy.managedBy``), so the test's own status write is the only one."""
    first = manifest(ELASTIC)
    first["metadata"]["name"] = "applied"
    first["spec"]["mainContainer"] = "mpi-launcher"
    first["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue", "suspend": False}
    path = tmp_path / "applied.yaml"
    path.write_text(yaml.safe_dump(first))
    env.cluster.kubectl("apply", "--server-side", "-n", env.ns, "-f", str(path))
    assert env.get("v1", "applied")["spec"] == first["spec"]
    hub = env.get("v2beta1", "applied")
    assert hub["metadata"]["annotations"][f"{FIELD_PREFIX}spec.mainContainer"] == \
        '"mpi-launcher"'
    status = {"conditions": [{"type": "Created", "status": "True", "reason": "MPIJobCreated",
                              "message": "MPIJob applied is created.",
                              "lastTransitionTime": "2026-01-01T00:00:00Z",
                              "lastUpdateTime": "2026-01-01T00:00:00Z"}]}
    hub["status"] = status
    env.cluster.kubectl("replace", "--subresource=status", "-f", "-", input=json.dumps(hub))
    second = copy.deepcopy(first)
    del second["spec"]["mainContainer"]
    second["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 3
    path.write_text(yaml.safe_dump(second))
    env.cluster.kubectl("apply", "--server-side", "-n", env.ns, "-f", str(path))
    view = env.get("v1", "applied")
    assert view["spec"] == second["spec"]
    assert view["status"] == status
    assert not [k for k in view["metadata"].get("annotations", {})
                if k == ANNOTATION or k.startswith(FIELD_PREFIX)]
    [entry] = [m for m in view["metadata"]["managedFields"] if m["operation"] == "Apply"]
    assert entry["apiVersion"] == "kubeflow.org/v1"
    assert "f:annotations" not in entry["fieldsV1"].get("f:metadata", {})
    assert "f:mainContainer" not in entry["fieldsV1"]["f:spec"]
    hub = env.get("v2beta1", "applied")
    assert conversion_record(hub)["fields"] == {"spec": {"cleanPodPolicy": "Running"}}
    assert f"{FIELD_PREFIX}spec.mainContainer" not in hub["metadata"]["annotations"]


def test_webhook_process_stopped_then_started(env: Env, serving: ControllerProcess,
                                              tfjob_crd: str, pytorchjob_crd: str) -> None:
    before = {n: env.get("v1", n) for n in ("tensorflow-mnist-elastic", "tensorflow-benchmarks")}
    assert serving.stop() == 0
    # v2beta1 keeps working: create, read, list (the validating webhooks ignore failures).
    env.cluster.kubectl("create", "-n", env.ns, "-f", "-",
                        input=json.dumps(small_job("while-down", workers=1)))
    assert env.get("v2beta1", "while-down")["metadata"]["name"] == "while-down"
    names = env.cluster.kubectl("get", "mpijobs.v2beta1.kubeflow.org", "-n", env.ns, "-o",
                                "name").split()
    assert {"mpijob.kubeflow.org/tensorflow-mnist-elastic",
            "mpijob.kubeflow.org/tensorflow-benchmarks", "mpijob.kubeflow.org/pi",
            "mpijob.kubeflow.org/applied", "mpijob.kubeflow.org/while-down"} <= set(names)
    # v1 and v1alpha2 fail with the reason: the conversion webhook cannot be reached.
    url = f"https://127.0.0.1:{env.port}/convert"
    for what in ("mpijobs.v1.kubeflow.org", "mpijobs.v1alpha2.kubeflow.org", "mpijobs"):
        error = env.kubectl_fails("get", what, "tensorflow-mnist-elastic", "-n", env.ns)
        assert "conversion webhook for kubeflow.org/v2beta1, Kind=MPIJob failed" in error
        assert url in error
        assert "connection refused" in error
    another = manifest(ELASTIC)
    another["metadata"]["name"] = "elastic-while-down"
    error = env.kubectl_fails("create", "-n", env.ns, "-f", "-", input=json.dumps(another))
    assert "conversion webhook for kubeflow.org/v1, Kind=MPIJob failed" in error
    # TFJobs and PyTorchJobs are refused (failurePolicy Fail, as training-operator's).
    for path, kind in ((TF_DIST_MNIST, "tfjob"), (PYTORCH_SIMPLE, "pytorchjob")):
        error = _refusal(env, _training_job(path, f"{kind}-while-down"))
        assert (f'failed calling webhook "validator.{kind}.training-operator.kubeflow.org"'
                in error), error
    serving.start()
    env.ready(serving)
    for name, view in before.items():
        again = wait_for(lambda name=name: env.get("v1", name), timeout=30,
                         what=f"{name} through v1 again")
        assert again["spec"] == view["spec"]
        assert again["metadata"]["uid"] == view["metadata"]["uid"]
        assert again["metadata"].get("annotations") == view["metadata"].get("annotations")
    assert generation_of(env.get("v1", "while-down")) == "v2beta1"


def _secret_ca(env: Env) -> bytes:
    data = json.loads(env.cluster.kubectl("get", "secret", "mpi-operator-webhook-cert", "-n",
                                          env.home, "-o", "json"))["data"]
    return base64.b64decode(data["ca.crt"])


def _served_issuer(port: int) -> str:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            context.wrap_socket(raw) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).issuer.rfc4514_string()


def test_certificates_rotate_while_a_job_runs(env: Env, serving: ControllerProcess,
                                              controller: ControllerProcess,
                                              cluster: Cluster) -> None:
    """A 60 s certificate validity: renewed every 45 s (a new CA each time, published beside
    the previous one). Reads through v1 (conversion) every half second never fail, and a
    v2beta1 job runs to Succeeded meanwhile."""
    serving.stop()
    rotating = env.webhook_process("rotating", "--webhook-cert-validity", "60s")
    env.ready(rotating)
    jobs = MPIJobs(env.api, env.ns)
    job = small_job("during-rotation", workers=2, launcher_runs="75s")
    jobs.create(job)
    cas: list[bytes] = [_secret_ca(env)]
    failures: list[str] = []
    reads = 0
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline and len(cas) < 3:
        try:
            env.get("v1", "tensorflow-mnist-elastic")
            reads += 1
        except Exception as err:
            failures.append(f"{time.strftime('%T')} {getattr(err, 'body', err)!s:.300}")
        current = _secret_ca(env)
        if current != cas[-1]:
            cas.append(current)
        time.sleep(0.5)
    assert failures == [], (f"{len(failures)} of {reads + len(failures)} reads failed: "
                            f"{failures[:3]} ... {failures[-2:]}; alive: {rotating.alive()}; "
                            f"log: {rotating.log()[-4000:]}")
    assert len(cas) == 3, "two rotations within 150 s"
    firsts = [x509.load_pem_x509_certificates(c)[0] for c in cas]
    assert len({c.serial_number for c in firsts}) == 3
    # The latest bundle lists the new CA and the previous one.
    chain = x509.load_pem_x509_certificates(cas[-1])
    assert [c.serial_number for c in chain] == [firsts[2].serial_number, firsts[1].serial_number]

    def injected() -> bytes:
        crd = json.loads(cluster.kubectl("get", "crd", CRD, "-o", "json"))
        return base64.b64decode(crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"])

    wait_for(lambda: injected() == cas[-1], timeout=60, what="the newest CA bundle in the CRD")
    wait_for(lambda: _served_issuer(env.port) == firsts[2].subject.rfc4514_string(),
             timeout=30, what="the newest CA's certificate to be served")
    jobs.wait_condition("during-rotation", "Succeeded", timeout=120)
    rotating.stop()


def _metric(port: int, name: str, labels: str) -> float:
    _, text = http_get(port, "/metrics")
    series = f"{name}{{{labels}}}" if labels else name
    pattern = re.compile(rf"^{re.escape(series)} (\S+)$", re.M)
    match = pattern.search(text)
    return float(match.group(1)) if match else 0.0


def test_two_replicas_serve_conversions_while_one_leads(env: Env, cluster: Cluster) -> None:
    ports = [free_port(), free_port()]
    with RoundRobinProxy(ports) as proxy:
        replicas = [env.webhook_process(f"replica-{i}", port=p, url_port=proxy.port)
                    for i, p in enumerate(ports)]
        for proc in replicas:
            env.ready(proc)
        wait_for(lambda: sorted(_metric(p.monitoring_port, "mpi_operator_is_leader", "")
                                for p in replicas) == [0.0, 1.0], timeout=60,
                 what="one replica to lead")
        holder = cluster.kubectl("get", "lease", "mpi-operator", "-n", env.home, "-o",
                                 "jsonpath={.spec.holderIdentity}")
        assert holder
        for _ in range(40):
            env.get("v1", "tensorflow-mnist-elastic")
            env.get("v1alpha2", "tensorflow-benchmarks")
            time.sleep(0.25)
        served = [_metric(p.monitoring_port, "controller_runtime_webhook_requests_total",
                          'code="200",webhook="/convert"') for p in replicas]
        assert all(count > 0 for count in served), (served, proxy.connections)
        assert sorted(_metric(p.monitoring_port, "mpi_operator_is_leader", "")
                      for p in replicas) == [0.0, 1.0]
        # Both serve certificates of the one CA in the shared Secret.
        issuers = {_served_issuer(p) for p in ports}
        assert len(issuers) == 1
        for proc in replicas:
            assert proc.stop() == 0
