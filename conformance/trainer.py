"""Kubeflow Trainer v2.3.0's controller manager (the reference for TrainJob) as a process on the
local cluster, and what the TrainJob kind of the differential run installs before it runs.

Out of a cluster the manager needs what its Deployment would have (facts of v2.3.0's
``cmd/trainer-controller-manager``, ``pkg/config`` and ``pkg/util/cert``):

* its namespace ``kubeflow-system`` (in a pod read from the ServiceAccount's namespace file, here
  the default), the Secret ``kubeflow-trainer-webhook-cert`` there (its cert rotator updates it,
  never creates it), and the two webhook configurations the rotator injects its CA into,
  ``validator.trainer.kubeflow.org`` and ``defaulter.trainer.kubeflow.org``: here each has one
  webhook that selects no namespace, so the API server never calls it, as for training-operator
  (:mod:`conformance.training_operator`): the controllers' own decisions are compared;
* the serving certificates as files in ``/tmp/k8s-webhook-server/serving-certs`` (a variable of
  ``pkg/util/cert``, no flag): the controllers are set up only once they are there. That path
  is shared by every process on the machine, so the manager runs in a mount namespace of its
  own whose ``/tmp`` is a private directory of the run (as training-operator:
  :func:`conformance.training_operator.mount_namespace_command`);
* a configuration file (``--config``, ``config.trainer.kubeflow.org/v1alpha1``
  ``Configuration``; it has no other flags but ``--feature-gates`` and logging), written to that
  private directory by :func:`configuration`: free ports for webhooks, metrics (plain HTTP) and
  health probes on 127.0.0.1, no leader election, and the corpus's flags translated.

The Secret's certificates are written to the private ``/tmp`` as training-operator's are
(:class:`conformance.training_operator.PrivateTmpProcess`: in a pod they are the mounted
Secret, and the rotator only waits for them to appear).

It serves every namespace (its configuration has no namespace option); the differential run
never runs it beside ours. It is ready once its TrainJob controller logs ``Starting workers``.

    .venv/bin/python -m conformance.trainer --cluster-dir DIR smoke
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from conformance import operators
from conformance.differential import ensure_namespace, install_crd, read_crd, wait
from conformance.kube import Kube
from conformance.training_operator import (
    PRIVATE_TMP,
    PrivateTmpProcess,
    empty_secret,
    mount_namespace_command,
    secret_certificates,
)
from tests.processes import OperatorProcess, free_port

Obj = dict[str, Any]
NAMESPACE = "kubeflow-system"
SECRET = "kubeflow-trainer-webhook-cert"
SERVICE = "kubeflow-trainer-controller-manager"
VALIDATING = "validator.trainer.kubeflow.org"
MUTATING = "defaulter.trainer.kubeflow.org"
READY = ('"msg":"Starting workers"', '"controller":"trainjob_controller"')
NO_NAMESPACE = {"matchExpressions": [{"key": "conformance.mpi-controller.io/never",
                                      "operator": "Exists"}]}
RUNTIME_CRDS = ("trainer.kubeflow.org_trainingruntimes.yaml",
                "trainer.kubeflow.org_clustertrainingruntimes.yaml")
# The corpus's flags, as ours spells them, and what the manager's configuration makes of them:
# a client setting, a controller's concurrency, or nothing (ours' scoping and scheme choice).
CLIENT = {"--kube-api-qps": ("qps", float), "--kube-api-burst": ("burst", int)}
IGNORED = ("--enable-scheme", "--namespace")
THREADS = "--controller-threads"


def webhook_configuration(kind: str, name: str) -> Obj:
    """``kind`` (``Validating`` or ``Mutating``) ``WebhookConfiguration`` ``name`` with one
    webhook for TrainJobs that selects no namespace: the rotator has somewhere to inject its CA
    and the API server never calls it."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": f"{kind}WebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{
            "name": f"{kind.lower()}.trainjob.trainer.kubeflow.org",
            "admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Ignore",
            "namespaceSelector": NO_NAMESPACE,
            "clientConfig": {"service": {"name": SERVICE, "namespace": NAMESPACE,
                                         "path": f"/{kind.lower()}-trainer-kubeflow-org-"
                                                 "v1alpha1-trainjob"}},
            "rules": [{"apiGroups": ["trainer.kubeflow.org"], "apiVersions": ["v1alpha1"],
                       "operations": ["CREATE", "UPDATE"], "resources": ["trainjobs"]}],
        }],
    }


def configuration(flags: list[str], *, webhook_port: int, metrics_port: int,
                  health_port: int) -> Obj:
    """The manager's ``Configuration`` for the corpus's ``flags`` (``--name value`` or
    ``--name=value``): ``--kube-api-qps``/``--kube-api-burst`` set ``clientConnection``,
    ``--controller-threads`` the TrainJob controller's concurrency; ``--enable-scheme`` and
    ``--namespace`` (ours' scheme and scope) are left out. Raises ValueError on another flag."""
    client: Obj = {}
    concurrency: dict[str, int] = {}
    pairs = _pairs(flags)
    for name, value in pairs:
        if name in CLIENT:
            key, cast = CLIENT[name]
            client[key] = cast(value)
        elif name == THREADS:
            concurrency["TrainJob.trainer.kubeflow.org"] = int(value)
        elif name not in IGNORED:
            raise ValueError(f"Trainer's controller manager has no counterpart of {name}")
    config: Obj = {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1", "kind": "Configuration",
        "webhook": {"port": webhook_port, "host": "127.0.0.1"},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}", "secureServing": False},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "leaderElection": {"leaderElect": False},
        "certManagement": {"enable": True, "webhookServiceName": SERVICE,
                           "webhookSecretName": SECRET},
    }
    if client:
        config["clientConnection"] = client
    if concurrency:
        config["controller"] = {"groupKindConcurrency": concurrency}
    return config


def _pairs(flags: list[str]) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(flags):
        name, eq, value = flags[i].partition("=")
        if not eq:
            if i + 1 >= len(flags):
                raise ValueError(f"{name} has no value")
            value = flags[i + 1]
            i += 1
        out.append((name, value))
        i += 1
    return out


def prepare(kube: Kube) -> None:
    """The namespace, the (empty) Secret and the two webhook configurations."""
    empty_secret(kube, NAMESPACE, SECRET)
    kube.create_or_replace(webhook_configuration("Validating", VALIDATING))
    kube.create_or_replace(webhook_configuration("Mutating", MUTATING))


def is_ready(log: str) -> bool:
    """The manager's log says its TrainJob controller started its workers."""
    return any(all(part in line for part in READY) for line in log.splitlines())


def ready_certificates(kube: Kube, kubeconfig: Path, log_path: Path) -> dict[str, bytes]:
    """The cluster prepared (:func:`prepare`) and the Secret's certificates; where the rotator
    has not filled it yet (a new cluster), the manager is run once until it has (its output
    in ``log_path``). Its CRDs must be installed: it needs them to start."""
    prepare(kube)
    files = secret_certificates(kube, NAMESPACE, SECRET)
    if files is None:
        proc = TrainerProcess(kube, kubeconfig, log_path, [])
        proc.start()
        try:
            proc.wait_ready()
        finally:
            proc.stop()
        files = secret_certificates(kube, NAMESPACE, SECRET)
    assert files is not None
    return files


def install_runtimes(kube: Kube, runtimes: list[Path]) -> None:
    """The TrainingRuntime and ClusterTrainingRuntime CRDs (ours, equal to Trainer's up to
    descriptions: ``tests/unit/trainjob/test_crd.py``) and the ClusterTrainingRuntimes of the
    files ``runtimes`` (replaced when present: both operators see the same runtimes)."""
    for name in RUNTIME_CRDS:
        install_crd(kube, read_crd(operators.TRAINER_CRDS / name))
    for path in runtimes:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "ClusterTrainingRuntime":
                kube.create_or_replace(doc)


def install(kube: Kube) -> None:
    """Every ``trainer.kubeflow.org`` CRD and the shipped ClusterTrainingRuntimes: what both
    operators need before they start."""
    install_crd(kube, read_crd(operators.TRAINER_CRDS / "trainer.kubeflow.org_trainjobs.yaml"))
    install_runtimes(kube, shipped_runtimes())


def shipped_runtimes() -> list[Path]:
    """The five ClusterTrainingRuntimes of ``deploy/runtimes`` (equal to Trainer v2.3.0's)."""
    return sorted((operators.REPO / "deploy" / "runtimes").glob("*-distributed.yaml"))


def command(tmp: Path, config: Path) -> list[str]:
    """The manager's argv: in a mount namespace with ``tmp`` as its ``/tmp``, its
    configuration file ``config`` (a path under ``tmp`` as the process sees it)."""
    binary = Path(operators.reference("bin-dir", "trainer")) / "trainer-controller-manager"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: run hack/reference-operators.sh build trainer")
    return [*mount_namespace_command(), "sh", "-c", PRIVATE_TMP, str(tmp), str(binary),
            "--config", str(config)]


class TrainerProcess(PrivateTmpProcess):
    """Trainer's controller manager configured from the corpus's ``flags``, with a private
    ``/tmp`` holding its configuration file and certificates, and the cluster prepared before
    each start (module doc)."""

    def __init__(self, kube: Kube, kubeconfig: Path, log_path: Path, flags: list[str]) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="trainer-tmp-"))
        self.config = configuration(flags, webhook_port=free_port(), metrics_port=free_port(),
                                    health_port=free_port())
        super().__init__("trainer", kube, tmp, command(tmp, Path("/tmp/config.yaml")),
                         log_path, cert_namespace=NAMESPACE, cert_secret=SECRET,
                         env={"KUBECONFIG": str(kubeconfig)})

    def ready(self) -> bool:
        return is_ready(self.log())

    def prepare(self) -> None:
        prepare(self.kube)

    def write_files(self) -> None:
        (self.tmp / "config.yaml").write_text(yaml.safe_dump(self.config))


def reference_process(kubeconfig: Path, flags: list[str], log_path: Path) -> OperatorProcess:
    """The process factory of ``conformance.operators``."""
    return TrainerProcess(Kube(kubeconfig), kubeconfig, log_path, flags)


def smoke(kube: Kube, namespace: str) -> str:
    """A TrainJob on ``torch-distributed`` gets its JobSet (the CRDs and runtimes installed
    before the manager started: it needs them to start); returns what was seen."""
    ensure_namespace(kube, namespace, wait_sa=True)
    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
           "metadata": {"name": "smoke"}, "spec": {"runtimeRef": {"name": "torch-distributed"}}}
    kube.create(f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs", job)
    jobset = wait(lambda: kube.get(f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{namespace}/"
                                   "jobsets/smoke"), timeout=60, what="TrainJob smoke's JobSet")
    kube.delete(f"/api/v1/namespaces/{namespace}")
    return f"TrainJob smoke: JobSet {jobset['metadata']['name']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster-dir", type=Path, required=True)
    parser.add_argument("command", choices=("smoke",))
    args = parser.parse_args(argv)
    kube = Kube(args.cluster_dir / "kubeconfig")
    operators.build_reference("trainer")
    install(kube)
    proc = TrainerProcess(kube, args.cluster_dir / "kubeconfig-controller",
                          args.cluster_dir / "logs" / "trainer.log", [])
    proc.start()
    try:
        print(f"trainer ready after {proc.wait_ready()}s")
        print(smoke(kube, f"trainer-smoke-{int(time.time())}"))
    finally:
        proc.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
