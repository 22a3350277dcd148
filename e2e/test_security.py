"""Security checks: no key material or tokens in what the controller writes or logs; the
deployed controller runs as non-root with a read-only root filesystem; the SSH Secret has
upstream's key type and file modes and is mounted only into its own job's pods."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from e2e.chaos.audit import leaked
from tests.mpijobs import EXIT_CODE, MPIJobs, small_job
from tests.processes import ControllerProcess
from tests.support import REPO, Cluster, wait_for

pytestmark = pytest.mark.cluster
SSH_VOLUME = "ssh-auth"
ITEMS = [{"key": "ssh-privatekey", "path": "id_rsa"},
         {"key": "ssh-publickey", "path": "id_rsa.pub"},
         {"key": "ssh-publickey", "path": "authorized_keys"}]


@pytest.fixture
def jobs(kube_api: Any, namespace: str, controller: ControllerProcess) -> MPIJobs:
    return MPIJobs(kube_api, namespace)


def _private_key(jobs: MPIJobs, name: str) -> str:
    secret = jobs.core.read_namespaced_secret(f"{name}-ssh", jobs.namespace)
    return base64.b64decode(secret.data["ssh-privatekey"]).decode()


def _tokens(cluster: Cluster) -> list[str]:
    found = []
    tokens = Path(cluster.kubeconfig).with_name("tokens.csv")
    if tokens.exists():
        found += [line.split(",")[0] for line in tokens.read_text().splitlines() if line]
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for user in config.get("users") or []:
        token = (user.get("user") or {}).get("token")
        if token:
            found.append(token)
    return found


def test_no_key_material_or_tokens_in_logs_events_or_status(
        jobs: MPIJobs, controller: ControllerProcess, cluster: Cluster) -> None:
    jobs.create(small_job("ok"))
    bad = small_job("bad", run_policy={"backoffLimit": 0})
    bad["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"]["annotations"][
        EXIT_CODE] = "3"
    jobs.create(bad)
    jobs.wait_condition("ok", "Succeeded", timeout=120)
    jobs.wait_condition("bad", "Failed", timeout=120)
    secrets = _tokens(cluster)
    for name in ("ok", "bad"):
        secrets += [ln for ln in _private_key(jobs, name).splitlines() if "-----" not in ln]
    assert secrets
    texts = [controller.log()]
    events = jobs.core.list_namespaced_event(jobs.namespace).items
    assert events
    texts += [e.message or "" for e in events]
    for name in ("ok", "bad"):
        status = jobs.get(name)["status"]
        texts += [c.get("message", "") for c in status["conditions"]]
    assert leaked(texts, secrets) == []


def test_deployment_runs_as_non_root_with_a_read_only_root_filesystem() -> None:
    deployment = yaml.safe_load((REPO / "deploy/base/deployment.yaml").read_text())
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    assert pod.get("hostNetwork") is not True
    for container in pod["containers"]:
        sc = container["securityContext"]
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        assert not sc.get("privileged")
    dockerfile = (REPO / "deploy/Dockerfile").read_text().splitlines()
    users = [line.split()[1] for line in dockerfile if line.startswith("USER ")]
    assert users
    assert users[-1].split(":")[0] not in ("0", "root")


def test_controller_needs_no_writable_files(tmp_path: Path, cluster: Cluster,
                                            mpijob_crd: str) -> None:
    """With a read-only working directory and no HOME the controller still starts and serves
    (what readOnlyRootFilesystem means for it); it never writes a file."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    kubeconfig = Path(cluster.kubeconfig).with_name("kubeconfig-controller")
    proc = ControllerProcess(str(kubeconfig if kubeconfig.exists() else cluster.kubeconfig),
                             tmp_path / "log.txt", "--no-leader-elect",
                             "--namespace", "security-ro-check")
    import os
    old = os.getcwd()
    os.chdir(ro)
    try:
        proc.start()
    finally:
        os.chdir(old)
    try:
        wait_for(lambda: "caches synced" in proc.log() or not proc.alive(), timeout=60,
                 what="the controller to sync")
        assert proc.alive(), proc.log()[-2000:]
    finally:
        assert proc.stop() == 0
    assert list(ro.iterdir()) == []


def _ssh_volume(pod_spec: Any) -> Any:
    vols = [v for v in pod_spec.volumes or [] if v.name == SSH_VOLUME]
    assert len(vols) == 1
    return vols[0]


def _mounts(pod_spec: Any) -> list[tuple[int, str]]:
    return [(i, m.mount_path) for i, c in enumerate(pod_spec.containers)
            for m in c.volume_mounts or [] if m.name == SSH_VOLUME]


@pytest.mark.parametrize(("mount", "mode"), [("/root/.ssh", 0o600), ("/home/mpiuser/.ssh", 0o644)])
def test_ssh_secret_key_type_and_file_modes(jobs: MPIJobs, mount: str, mode: int) -> None:
    """Upstream: ECDSA P-521 in a kubernetes.io/ssh-auth Secret; mode 0600 under /root/.ssh,
    else unset (the API's default 0644), as upstream does."""
    name = "keys-root" if mount.startswith("/root") else "keys-user"
    jobs.create(small_job(name, launcher_runs="30s", sshAuthMountPath=mount))
    wait_for(lambda: len(jobs.workers(name)) == 2, timeout=60, what="the workers")
    secret = jobs.core.read_namespaced_secret(f"{name}-ssh", jobs.namespace)
    assert secret.type == "kubernetes.io/ssh-auth"
    assert sorted(secret.data) == ["ssh-privatekey", "ssh-publickey"]
    pem = base64.b64decode(secret.data["ssh-privatekey"])
    assert pem.startswith(b"-----BEGIN EC PRIVATE KEY-----")
    key = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    assert key.curve.name == "secp521r1"
    public = base64.b64decode(secret.data["ssh-publickey"]).decode()
    assert public.startswith("ecdsa-sha2-nistp521 ")
    launcher = wait_for(lambda: jobs.batch.read_namespaced_job(f"{name}-launcher",
                                                                jobs.namespace),
                        timeout=60, what="the launcher Job")
    specs = [launcher.spec.template.spec, *(p.spec for p in jobs.workers(name))]
    for spec in specs:
        vol = _ssh_volume(spec)
        assert vol.secret.secret_name == f"{name}-ssh"
        assert vol.secret.default_mode == mode
        assert [{"key": i.key, "path": i.path} for i in vol.secret.items] == ITEMS
        assert _mounts(spec) == [(0, mount)]  # the first container only


def test_ssh_secret_is_mounted_only_into_its_own_jobs_pods(jobs: MPIJobs) -> None:
    for name in ("alpha", "beta"):
        jobs.create(small_job(name, launcher_runs="30s"))
    for name in ("alpha", "beta"):
        jobs.wait_condition(name, "Running", timeout=90)
    pods = jobs.core.list_namespaced_pod(jobs.namespace).items
    assert len(pods) >= 6
    for pod in pods:
        owner = (pod.metadata.labels or {}).get("training.kubeflow.org/job-name")
        secrets = {v.secret.secret_name for v in pod.spec.volumes or [] if v.secret}
        ssh = {s for s in secrets if s.endswith("-ssh")}
        assert ssh == {f"{owner}-ssh"}, (pod.metadata.name, secrets)
    for name in ("alpha", "beta"):
        launcher = jobs.batch.read_namespaced_job(f"{name}-launcher", jobs.namespace)
        assert _ssh_volume(launcher.spec.template.spec).secret.secret_name == f"{name}-ssh"
