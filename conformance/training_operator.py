"""training-operator v1.9.2 (the reference for TFJob, PyTorchJob and MPIJob ``v1``) as a process
on the local cluster.

Out of a cluster it needs what its Deployment would have (facts of v1.9.2's
``pkg/cert`` and ``cmd/training-operator.v1``):

* the namespace ``kubeflow`` (``MY_POD_NAMESPACE`` overrides it), the Secret
  ``training-operator-webhook-cert`` there, and the ValidatingWebhookConfiguration
  ``validator.training-operator.kubeflow.org``: its cert rotator fills the Secret and injects
  the CA into the configuration. Ours selects no namespace, so the API server never calls it;
* the serving certificates as files in ``/tmp/k8s-webhook-server/serving-certs/`` (fixed in its
  code, no flag; in a pod they are the mounted Secret): it registers its controllers only once
  the files exist. The path is shared by every process on the machine, so the operator runs in
  a mount namespace of its own (``unshare -m``) whose ``/tmp`` is a private directory of this
  run, where the Secret's entries are written (before the start when the Secret is already
  filled, else as soon as the rotator has filled it; it is started again if it has not
  noticed them);
* the CRDs of the schemes it runs (``manifests/base/crds`` of the module), installed when
  absent (a run that compares a kind installs that kind's CRD itself). Its MPIJob CRD (``v1``
  only) has the name of ours, which serves ``v2beta1`` beside it: the MPIJob scheme needs
  it installed first (:func:`check_mpijob_crd`; the ``mpijob-v1`` kind of the differential
  run swaps the CRDs between its sides).

Its metrics, health and webhook ports are free ports, not the defaults (8080, 8081, 9443).
It is ready once controller-runtime logs ``Starting workers``.

    .venv/bin/python -m conformance.training_operator --cluster-dir DIR up|smoke|down
"""

from __future__ import annotations

import argparse
import base64
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conformance import operators
from conformance.differential import ensure_namespace, install_crd, read_crd, wait
from conformance.kube import ApiError, Kube
from tests.processes import OperatorProcess, free_port

NAMESPACE = "kubeflow"
SECRET = "training-operator-webhook-cert"
WEBHOOK_CONFIG = "validator.training-operator.kubeflow.org"
CERT_DIR = "k8s-webhook-server/serving-certs"  # under /tmp, fixed in its code
CERT_FILES = ("tls.crt", "tls.key", "ca.crt")
SCHEMES = ("tfjob", "pytorchjob", "xgboostjob", "paddlejob", "jaxjob")
READY = "Starting workers"
NO_NAMESPACE = {"matchExpressions": [{"key": "conformance.mpi-controller.io/never",
                                      "operator": "Exists"}]}
# Runs "$@" with a private /tmp ("$0") in a mount namespace of its own; `exec` keeps the pid.
PRIVATE_TMP = 'mount --bind "$0" /tmp && exec "$@"'


def webhook_configuration() -> dict[str, Any]:
    """The configuration the rotator injects its CA into; it selects no namespace."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": WEBHOOK_CONFIG},
        "webhooks": [{
            "name": "validator.tfjob.training-operator.kubeflow.org",
            "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Ignore",
            "namespaceSelector": NO_NAMESPACE,
            "clientConfig": {"service": {"name": "training-operator", "namespace": NAMESPACE,
                                         "path": "/validate-kubeflow-org-v1-tfjob"}},
            "rules": [{"apiGroups": ["kubeflow.org"], "apiVersions": ["v1"],
                       "operations": ["CREATE", "UPDATE"], "resources": ["tfjobs"]}],
        }],
    }


def empty_secret(kube: Kube, namespace: str, name: str) -> None:
    """The namespace and an empty Secret in it (kept when it exists), for the operator's
    certificate rotator to fill."""
    ensure_namespace(kube, namespace)
    try:
        kube.create(f"/api/v1/namespaces/{namespace}/secrets",
                    {"metadata": {"name": name, "namespace": namespace}})
    except ApiError as err:
        if err.status != 409:
            raise


def schemes_of(flags: list[str]) -> list[str]:
    """The ``--enable-scheme`` values of ``flags`` (both spellings), lower case."""
    out = []
    for i, flag in enumerate(flags):
        if flag.startswith(("--enable-scheme=", "-enable-scheme=")):
            out.append(flag.split("=", 1)[1].lower())
        elif flag in ("--enable-scheme", "-enable-scheme") and i + 1 < len(flags):
            out.append(flags[i + 1].lower())
    return out


def prepare(kube: Kube, schemes: list[str]) -> None:
    """The CRDs of ``schemes`` that are not installed yet, the namespace, the (empty)
    Secret and the webhook configuration."""
    crds = Path(operators.reference("module-dir", "training-operator")) / "manifests/base/crds"
    for scheme in schemes:
        if scheme == "mpijob":
            check_mpijob_crd(kube)
            continue
        crd = read_crd(crds / f"kubeflow.org_{scheme}s.yaml")
        try:
            kube.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                     f"{crd['metadata']['name']}")
        except ApiError as err:
            if err.status != 404:
                raise
            install_crd(kube, crd)
    empty_secret(kube, NAMESPACE, SECRET)
    kube.create_or_replace(webhook_configuration())


def check_mpijob_crd(kube: Kube) -> None:
    """The MPIJob scheme runs on training-operator's own CRD (``v1`` only), which replaces
    ours (the same name): the caller installs it (the differential run's ``mpijob-v1`` kind
    does, see ``KindSpec.conversion``). Raises naming the problem when another is there."""
    try:
        crd = kube.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                       "mpijobs.kubeflow.org")
    except ApiError as err:
        if err.status != 404:
            raise
        crd = {}
    versions = [v.get("name") for v in (crd.get("spec") or {}).get("versions") or []]
    if versions != ["v1"]:
        raise RuntimeError("training-operator's MPIJob scheme needs its own CRD "
                           "mpijobs.kubeflow.org (serving v1 only) installed first; found "
                           + (f"one serving {', '.join(map(str, versions))}" if crd else "none"))


def secret_certificates(kube: Kube, namespace: str = NAMESPACE, secret: str = SECRET
                        ) -> dict[str, bytes] | None:
    """The Secret's certificate files once the rotator has filled it, else None."""
    data = kube.get(f"/api/v1/namespaces/{namespace}/secrets/{secret}").get("data") or {}
    if not set(CERT_FILES) <= set(data):
        return None
    return {name: base64.b64decode(value) for name, value in data.items()}


def mount_namespace_command() -> list[str]:
    """``unshare`` as this machine allows it: ``-m`` as root, else ``-r -m`` (a user
    namespace mapping us to root); raises naming the problem when neither works."""
    for argv in (["unshare", "-m", "--propagation", "private"],
                 ["unshare", "-r", "-m", "--propagation", "private"]):
        probe = subprocess.run([*argv, "--", "true"], capture_output=True, text=True,
                               check=False)
        if probe.returncode == 0:
            return [*argv, "--"]
    raise RuntimeError("training-operator needs a mount namespace of its own (its certificate "
                       "directory /tmp/k8s-webhook-server is fixed and shared): `unshare -m` "
                       f"failed: {probe.stderr.strip()}")


def write_certificates(tmp: Path, files: dict[str, bytes]) -> None:
    """The Secret's entries as the files the operator reads under its private ``/tmp``."""
    target = tmp / CERT_DIR
    target.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        (target / name).write_bytes(value)


def command(tmp: Path, flags: list[str]) -> list[str]:
    """The operator's argv: in a mount namespace of its own with ``tmp`` as its ``/tmp``, free
    ports for metrics, health and webhooks, then ``flags``."""
    binary = Path(operators.reference("bin-dir", "training-operator")) / "training-operator"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run hack/reference-operators.sh build "
                           "training-operator")
    return [*mount_namespace_command(), "sh", "-c", PRIVATE_TMP, str(tmp), str(binary),
            "--metrics-bind-address", f"127.0.0.1:{free_port()}",
            "--health-probe-bind-address", f"127.0.0.1:{free_port()}",
            "--webhook-server-port", str(free_port()), *flags]


class PrivateTmpProcess(OperatorProcess):
    """A controller-runtime operator whose cert rotator keeps its serving certificates in the
    Secret ``cert_namespace/cert_secret`` and which reads them from the fixed
    ``/tmp/k8s-webhook-server/serving-certs``: run with a private ``/tmp`` (``self.tmp``, made
    anew for each start), the Secret's entries written there before the start when it is
    filled, else once the rotator has filled it (the process started again if it has not
    noticed them within 20 s: its file check backs off exponentially). Before each start,
    :meth:`prepare` readies the cluster and :meth:`write_files` fills the private ``/tmp``."""

    def __init__(self, name: str, kube: Kube, tmp: Path, argv: list[str], log_path: Path, *,
                 cert_namespace: str, cert_secret: str, ready_marker: str = "",
                 env: dict[str, str] | None = None) -> None:
        self.kube = kube
        self.tmp = tmp
        self.cert_namespace = cert_namespace
        self.cert_secret = cert_secret
        super().__init__(name, argv, log_path, ready_marker=ready_marker, env=env)
        self.certs_written = False

    def prepare(self) -> None:
        """What the cluster needs before the process starts (namespace, Secret, ...)."""

    def write_files(self) -> None:
        """Files the process reads from its private ``/tmp`` (``self.tmp``) from the start."""

    def certificates(self) -> dict[str, bytes] | None:
        return secret_certificates(self.kube, self.cert_namespace, self.cert_secret)

    def write_certificates(self, files: dict[str, bytes]) -> None:
        write_certificates(self.tmp, files)
        self.certs_written = True

    def start(self) -> None:
        self.prepare()
        self.tmp.mkdir(exist_ok=True)
        self.write_files()
        if not self.certs_written and (files := self.certificates()):
            self.write_certificates(files)
        super().start()

    def wait_ready(self, timeout: float = 120) -> float:
        """As :meth:`OperatorProcess.wait_ready`, writing the certificates once the Secret is
        filled (class doc)."""
        start = time.monotonic()
        if not self.certs_written:
            self.write_certificates(wait(self.certificates, timeout=60,
                                         what=f"the rotator to fill Secret {self.cert_secret}"))
            try:
                return super().wait_ready(timeout=20) + round(time.monotonic() - start, 2)
            except RuntimeError:
                self.stop()
                self.start()
        return super().wait_ready(timeout) + round(time.monotonic() - start, 2)

    def stop(self, timeout: float = 30) -> int | None:
        """Stop the process and remove its private /tmp (a later start makes a new one)."""
        code = super().stop(timeout)
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.certs_written = False
        return code


class TrainingOperatorProcess(PrivateTmpProcess):
    """training-operator with ``flags`` (default: every scheme but MPIJob), a private ``/tmp``
    and the cluster prepared before each start (see the module doc)."""

    def __init__(self, kube: Kube, kubeconfig: Path, log_path: Path, flags: list[str]) -> None:
        self.schemes = schemes_of(flags) or list(SCHEMES)
        if not schemes_of(flags):
            flags = [*(f"--enable-scheme={s}" for s in SCHEMES), *flags]
        tmp = Path(tempfile.mkdtemp(prefix="training-operator-tmp-"))
        super().__init__("training-operator", kube, tmp, command(tmp, flags), log_path,
                         cert_namespace=NAMESPACE, cert_secret=SECRET, ready_marker=READY,
                         env={"KUBECONFIG": str(kubeconfig)})

    def prepare(self) -> None:
        prepare(self.kube, self.schemes)


def ready_certificates(kube: Kube, kubeconfig: Path, log_path: Path) -> dict[str, bytes]:
    """The Secret's certificates; where the rotator has not filled it yet (a new cluster),
    training-operator is run once until it has (its output appended to ``log_path``)."""
    files = secret_certificates(kube) if _secret_exists(kube) else None
    if files is None:
        proc = TrainingOperatorProcess(kube, kubeconfig, log_path, ["--enable-scheme", "tfjob"])
        proc.start()
        try:
            proc.wait_ready()
        finally:
            proc.stop()
        files = secret_certificates(kube)
    assert files is not None
    return files


def _secret_exists(kube: Kube) -> bool:
    try:
        kube.get(f"/api/v1/namespaces/{NAMESPACE}/secrets/{SECRET}")
    except ApiError as err:
        if err.status == 404:
            return False
        raise
    return True


def reference_process(kubeconfig: Path, flags: list[str], log_path: Path) -> OperatorProcess:
    """The process factory of ``conformance.operators`` (the kubeconfig's identity prepares the
    cluster too)."""
    return TrainingOperatorProcess(Kube(kubeconfig), kubeconfig, log_path, flags)


def smoke(kube: Kube, namespace: str) -> str:
    """A one-worker TFJob gets its pod and Service; returns what was seen."""
    ensure_namespace(kube, namespace, wait_sa=True)
    job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "smoke"},
           "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {
               "containers": [{"name": "tensorflow", "image": "kubeflow/tf-dist-mnist-test"}]}}}}}}
    kube.create(f"/apis/kubeflow.org/v1/namespaces/{namespace}/tfjobs", job)
    pod = wait(lambda: kube.get(f"/api/v1/namespaces/{namespace}/pods/smoke-worker-0"),
               timeout=60, what="TFJob smoke's pod smoke-worker-0")
    svc = wait(lambda: kube.get(f"/api/v1/namespaces/{namespace}/services/smoke-worker-0"),
               timeout=60, what="TFJob smoke's Service smoke-worker-0")
    kube.delete(f"/api/v1/namespaces/{namespace}")
    return f"TFJob smoke: pod {pod['metadata']['name']}, Service {svc['metadata']['name']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster-dir", type=Path, required=True)
    parser.add_argument("command", choices=("up", "smoke", "down"))
    args = parser.parse_args(argv)
    kube = Kube(args.cluster_dir / "kubeconfig")
    log_path = args.cluster_dir / "logs" / "training-operator.log"
    pid_file = args.cluster_dir / "pids" / "training-operator.pid"
    if args.command == "down":  # `hack/local-cluster.sh down` stops it too (pids/*.pid)
        if pid_file.exists():
            operators.stop_pid(int(pid_file.read_text()))
            pid_file.unlink()
        return 0
    operators.build_reference("training-operator")
    proc = TrainingOperatorProcess(kube, args.cluster_dir / "kubeconfig-controller", log_path, [])
    proc.start()
    proc.wait_ready()
    if args.command == "smoke":
        try:
            print(smoke(kube, f"training-operator-smoke-{int(time.time())}"))
        finally:
            proc.stop()
        return 0
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(str(proc.pid))
    print(f"training-operator running (pid {proc.pid}, private /tmp {proc.tmp}), log {log_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
