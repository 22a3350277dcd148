"""training-operator v1.9.2 (the reference for TFJob, PyTorchJob and MPIJob ``v1``) as a process
on the local cluster.

Out of a cluster it needs what its Deployment would have (facts of v1.9.2's
``pkg/cert`` and ``cmd/training-operator.v1``):

* the namespace ``kubeflow`` (``MY_POD_NAMESPACE`` overrides it), the Secret
  ``training-operator-webhook-cert`` there, and the ValidatingWebhookConfiguration
  ``validator.training-operator.kubeflow.org``: its cert rotator fills the Secret and injects
  the CA into the configuration. Ours selects no namespace, so the API server never calls it;
* the serving certificates as files in ``/tmp/k8s-webhook-server/serving-certs/`` (fixed in its
  code; in a pod they are the mounted Secret): it registers its controllers only once the files
  match the Secret. Here they are copied out of the Secret once the rotator has filled it, and
  the process is started again if it has not noticed them;
* its CRDs (``manifests/base/crds`` of the module). Its MPIJob CRD (``v1`` only) would replace
  the ``v2beta1`` one, so that scheme is left out until MPIJob ``v1`` comes with conversion.

Its metrics, health and webhook ports are free ports, not the defaults (8080, 8081, 9443).

    .venv/bin/python -m conformance.training_operator --cluster-dir DIR up|smoke|down
"""

from __future__ import annotations

import argparse
import base64
import sys
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
CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
SCHEMES = ("tfjob", "pytorchjob", "xgboostjob", "paddlejob", "jaxjob")
NO_NAMESPACE = {"matchExpressions": [{"key": "conformance.mpi-controller.io/never",
                                      "operator": "Exists"}]}


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


def prepare(kube: Kube) -> None:
    """CRDs (all but MPIJob), namespace, empty Secret and the webhook configuration."""
    crds = Path(operators.reference("module-dir", "training-operator")) / "manifests/base/crds"
    for path in sorted(crds.glob("kubeflow.org_*.yaml")):
        if path.name != "kubeflow.org_mpijobs.yaml":
            install_crd(kube, read_crd(path))
    ensure_namespace(kube, NAMESPACE)
    try:
        kube.create(f"/api/v1/namespaces/{NAMESPACE}/secrets",
                    {"metadata": {"name": SECRET, "namespace": NAMESPACE}})
    except ApiError as err:
        if err.status != 409:
            raise
    kube.create_or_replace(webhook_configuration())


def copy_certificates(kube: Kube, timeout: float = 60) -> None:
    """Wait for the rotator to fill the Secret, then write its entries as files."""
    def filled() -> dict[str, str] | None:
        data = kube.get(f"/api/v1/namespaces/{NAMESPACE}/secrets/{SECRET}").get("data") or {}
        return data if {"tls.crt", "tls.key", "ca.crt"} <= set(data) else None

    data = wait(filled, timeout=timeout, what=f"the rotator to fill Secret {SECRET}")
    CERT_DIR.mkdir(parents=True, exist_ok=True)
    for name, value in data.items():
        (CERT_DIR / name).write_bytes(base64.b64decode(value))


def process(kubeconfig: Path, log_path: Path, *flags: str) -> OperatorProcess:
    binary = Path(operators.reference("bin-dir", "training-operator")) / "training-operator"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run hack/reference-operators.sh build")
    argv = [str(binary),
            "--metrics-bind-address", f"127.0.0.1:{free_port()}",
            "--health-probe-bind-address", f"127.0.0.1:{free_port()}",
            "--webhook-server-port", str(free_port()),
            *(f"--enable-scheme={s}" for s in SCHEMES), *flags]
    return OperatorProcess("training-operator", argv, log_path, ready_marker="Starting workers",
                                     env={"KUBECONFIG": str(kubeconfig)})


def start(kube: Kube, kubeconfig: Path, log_path: Path, *flags: str
          ) -> OperatorProcess:
    """Prepare the cluster and start training-operator until its controllers run."""
    prepare(kube)
    proc = process(kubeconfig, log_path, *flags)
    proc.start()
    copy_certificates(kube)
    try:
        proc.wait_ready(timeout=20)
        return proc
    except RuntimeError:
        proc.stop()
    proc = process(kubeconfig, log_path, *flags)  # the certificates are in place now
    proc.start()
    proc.wait_ready(timeout=120)
    return proc


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
    proc = start(kube, args.cluster_dir / "kubeconfig-controller", log_path)
    if args.command == "smoke":
        try:
            print(smoke(kube, f"training-operator-smoke-{int(time.time())}"))
        finally:
            proc.stop()
        return 0
    assert proc.proc is not None
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(str(proc.proc.pid))
    print(f"training-operator running (pid {proc.proc.pid}), log {log_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
