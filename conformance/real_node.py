"""Upstream's e2e specs that need the real node: pods that really run, and the operator as a
Deployment that the spec reconfigures.

On the KWOK nodes a launcher is simulated and exits 0, and a pod only seems to run. So the
specs of :data:`conformance.e2e_suite.REAL_NODE` run here instead, on a cluster with a real node
(``hack/local-cluster.sh up --real-node --addons volcano,scheduler-plugins``, state in
``REAL_CLUSTER_DIR``, default ``~/.cache/mpi-controller/cluster-real``), against each operator
in turn:

* "has malformed command should fail": ``mpirun`` as root without ``--allow-run-as-root``
  really fails, and the launcher Job's ``backoffLimit`` 1 fails the job;
* "with scheduler-plugins" / "with volcano-scheduler should create pending pods": each scales
  the operator's Deployment ``mpi-operator/mpi-operator`` to 0, appends
  ``--gang-scheduling=scheduler-plugins-scheduler`` (or ``=volcano``) to its container's args
  and scales it to 1; the job's pods stay Pending while its PodGroup's ``minResources`` cannot
  fit, and run once the spec removes them. The schedulers are the addons' (scheduler-plugins
  v0.32.7's Coscheduling scheduler and its controller, Volcano v1.10.0's vc-scheduler), already
  running, so the suite is told ``USE_EXISTING_SCHEDULER_PLUGINS=true`` and
  ``USE_EXISTING_VOLCANO_SCHEDULER=true`` (it would otherwise ``helm install`` / ``kubectl
  apply`` upstream's own releases from its source tree);
* "with custom cluster-domain ... should succeed": the same with ``--cluster-domain=cluster.local``,
  and the pi job with the launcher as a worker, whose ranks reach each other by
  ``<pod>.pi.<ns>.svc.cluster.local`` (the real node's CoreDNS serves ``cluster.local``).

The operator is deployed as the suite expects (``USE_EXISTING_OPERATOR=true``: the suite
installs nothing; the specs above edit the Deployment named ``mpi-operator`` in namespace
``mpi-operator``), each from its own manifests with ``kubectl apply --server-side -k``:

* ours: ``e2e/real/deploy`` (``deploy/overlays/standalone`` placed on the real node, as
  ``e2e/real`` deploys it) with the image built here from ``deploy/Dockerfile``
  (``controller``);
* the Go operator: upstream's ``manifests/overlays/dev`` (what the suite itself applies
  without ``USE_EXISTING_OPERATOR``; its template filled as upstream's Makefile does) from the
  module source, placed on the real node, the binary ``hack/reference-operators.sh`` built
  (static) mounted read-only at ``/opt/mpi-operator`` (where upstream's image has it) in the
  real node's ``base`` image: no image of it is built.

Each side's MPIJob CRD is installed first, its Deployment applied and Available, its pods' logs
followed into a file; after its specs the Deployment is deleted (with ours' webhook Service
and configuration) and the leader Lease released. The suite's ``TEST_OPENMPI_IMAGE`` names the
OpenMPI pi image built here (its default comes from a registry this machine cannot reach); the
KWOK nodes are cordoned and the real node's taint lifted while the specs run (the suite's pods
tolerate nothing), both restored afterwards.

:func:`unavailable` says why the part cannot run here (the real node's binaries and images
not built yet: ``make e2e-real`` builds them; or the machine cannot run a real node): the
specs are then reported skipped with that reason, nothing passes. The two addons are built by
``up`` when missing (about 15 minutes the first time). A real-node cluster this part started is
taken down at the end; on one that was running, the addons this part started are stopped again.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from conformance.differential import (
    LOCK_NAMESPACE,
    ensure_namespace,
    install_crd,
    read_crd,
    release_locks,
    wait,
)
from conformance.e2e_suite import REAL_NODE, SpecResult, real_node_reason
from conformance.kinds import MPIJOB_V2BETA1
from conformance.kube import ApiError, Kube
from conformance.operators import REPO, reference

__all__ = ["ADDONS", "REAL_SPECS", "cluster_dir", "go_dev_kustomization", "go_kustomization",
           "operator_deployment", "ours_kustomization", "real_node_cluster", "real_specs",
           "running_addons", "skipped", "suite_env", "unavailable", "wait_rolled_out",
           "workloads_on_the_real_node"]

REAL_SPECS = tuple(pattern for pattern, _ in REAL_NODE)
"""The patterns (of :data:`conformance.e2e_suite.REAL_NODE`) of the specs this part runs."""

ADDONS = ("volcano", "scheduler-plugins")
"""The addons the specs need (``hack/local-cluster.sh up --addons``)."""
ADDON_PROCESSES = {"volcano": ("volcano-scheduler",),
                   "scheduler-plugins": ("scheduler-plugins-scheduler",
                                         "scheduler-plugins-controller")}

NAMESPACE = "mpi-operator"
DEPLOYMENT = "mpi-operator"
"""The Deployment the suite's specs edit (``mpiOperator`` in upstream's test/e2e)."""
DEPLOYMENT_PATH = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{DEPLOYMENT}"
OURS_OVERLAY = REPO / "e2e" / "real" / "deploy"
GO_BINARY_MOUNT = "/opt/mpi-operator"  # upstream's image: ENTRYPOINT ["/opt/mpi-operator"]

_HACK = REPO / "hack" / "local-cluster.sh"


def cluster_dir() -> Path:
    return Path(os.environ.get("REAL_CLUSTER_DIR")
                or Path.home() / ".cache" / "mpi-controller" / "cluster-real")


def _hack(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPI_CONTROLLER_CLUSTER_DIR": str(cluster_dir())}
    return subprocess.run(["bash", str(_HACK), *args], capture_output=True, text=True,
                          env=env, check=check)


def unavailable() -> str:
    """Why the real node cannot serve here (``""`` when it can)."""
    missing = _hack("real-node-uncached").stdout.strip()
    if missing:
        return (f"the real node is not built on this machine yet ({missing}); "
                "`make e2e-real` builds it (10 to 16 minutes the first time)")
    check = _hack("real-node-check")
    if check.returncode != 0:
        return (check.stdout + check.stderr).strip() or "the real node cannot run here"
    return ""


def real_specs(specs: list[str]) -> list[str]:
    """The spec texts of ``specs`` this part runs."""
    return [t for t in specs if real_node_reason(t)]


def running_addons(status: str) -> set[str]:
    """The addons whose every process runs, from ``hack/local-cluster.sh status``'s lines
    ``addon NAME vVERSION: PROCESS (pid N) PROCESS (stopped) ...``."""
    running = set()
    for line in status.splitlines():
        match = re.match(r"addon (\S+) v\S+:(.*)$", line)
        if match and "(stopped)" not in match.group(2) and "(pid " in match.group(2):
            running.add(match.group(1))
    return running


@contextmanager
def real_node_cluster(log: Callable[[str], None]) -> Iterator[Path]:
    """The admin kubeconfig of a cluster with a real node and :data:`ADDONS`, up for the
    block."""
    kubeconfig = cluster_dir() / "kubeconfig"
    running = _answers(kubeconfig) and (cluster_dir() / "realnode" / "images.env").exists()
    before = running_addons(_hack("status").stdout) if running else set()
    if not running or set(ADDONS) - before:
        log(("starting a cluster with a real node and " if not running else "starting ")
            + ", ".join(a for a in ADDONS if a not in before))
        start = time.monotonic()
        up = _hack("up", "--real-node", "--addons", ",".join(ADDONS))
        if up.returncode != 0:
            if not running:  # a half-started cluster would pass for someone else's next time
                _hack("down")
            raise RuntimeError(f"hack/local-cluster.sh up --real-node --addons "
                               f"{','.join(ADDONS)} failed:\n" + (up.stdout + up.stderr)[-3000:])
        log(f"real-node cluster with {', '.join(ADDONS)} up in {time.monotonic() - start:.0f}s")
    try:
        yield kubeconfig
    finally:
        if not running:
            _hack("down")
        else:  # someone else's cluster: stop the addons this part started on it
            for addon in set(ADDONS) - before:
                for process in ADDON_PROCESSES[addon]:
                    _hack("stop", process)


def _answers(kubeconfig: Path) -> bool:
    if not kubeconfig.exists():
        return False
    kube = Kube(kubeconfig)
    try:
        kube.get("/version")
    except Exception:  # not running (connection refused), or not reachable
        return False
    finally:
        kube.close()
    return True


def images(state: Path) -> dict[str, str]:
    """The real node's image names by variable (``MPI_PI_OPENMPI_IMAGE``...)."""
    text = (state / "realnode" / "images.env").read_text()
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs}


def suite_env(env: dict[str, str]) -> dict[str, str]:
    """The suite's variables for the real node (``env``: :func:`images`): the pi images built
    here, and the schedulers already running (the addons)."""
    return {"TEST_OPENMPI_IMAGE": env["MPI_PI_OPENMPI_IMAGE"],
            "TEST_MPICH_IMAGE": env["MPI_PI_MPICH_IMAGE"],
            "USE_EXISTING_SCHEDULER_PLUGINS": "true",
            "USE_EXISTING_VOLCANO_SCHEDULER": "true"}


@contextmanager
def workloads_on_the_real_node(kube: Kube) -> Iterator[None]:
    """KWOK nodes cordoned and the real node's taint lifted for the block (restored after)."""
    env = images(cluster_dir())
    node, label = env["REAL_NODE"], env["REAL_NODE_LABEL"]
    others = [n["metadata"]["name"] for n in kube.get("/api/v1/nodes")["items"]
              if n["metadata"]["name"] != node and not n["spec"].get("unschedulable")]
    for name in others:
        kube.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"unschedulable": True}})
    taints = kube.get(f"/api/v1/nodes/{node}")["spec"].get("taints") or []
    kube.merge_patch(f"/api/v1/nodes/{node}", {"spec": {"taints": [
        t for t in taints if t.get("key") != label] or None}})
    try:
        yield
    finally:
        kube.merge_patch(f"/api/v1/nodes/{node}", {"spec": {"taints": taints or None}})
        for name in others:
            kube.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"unschedulable": None}})


def skipped(specs: list[str], reason: str) -> list[SpecResult]:
    return [SpecResult(t, "skipped", 0.0, reason) for t in specs]


# -- the operators as Deployments ---------------------------------------------------------------

def _json_patch(target: str, ops: list[tuple[str, str, str]]) -> str:
    """A kustomization ``patches`` entry: RFC 6902 operations (op, path, JSON value)."""
    lines = [f"- target: {{kind: Deployment, name: {target}}}", "  patch: |-"]
    for op, path, value in ops:
        lines += [f"    - op: {op}", f"      path: {path}", f"      value: {value}"]
    return "\n".join(lines) + "\n"


def ours_kustomization(overlay: str, image: str) -> str:
    """The kustomization applying ours: ``overlay`` (``e2e/real/deploy``, relative to the
    kustomization's directory: kustomize takes no absolute path) with ``image`` (the real
    node's ``controller`` image)."""
    name, tag = image.rsplit(":", 1)
    return ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources: [{overlay}]\n"
            f"images: [{{name: mpi-controller, newName: {name}, newTag: {tag}}}]\n")


def go_dev_kustomization(template: str, base: str, image: str) -> str:
    """Upstream's ``manifests/overlays/dev/kustomization.yaml.template`` filled as its Makefile
    does (``%IMAGE_NAME%``, ``%IMAGE_TAG%``), its ``../../base`` at ``base`` (the module's
    ``manifests/base``, relative)."""
    name, tag = image.rsplit(":", 1)
    text = template.replace("%IMAGE_NAME%", name).replace("%IMAGE_TAG%", tag)
    if "- ../../base\n" not in text:
        raise ValueError("upstream's dev overlay no longer names ../../base")
    return text.replace("- ../../base\n", f"- {base}\n")


def go_kustomization(dev: str, *, binary: str, label: str) -> str:
    """The kustomization applying the Go operator: upstream's dev overlay (the directory
    ``dev``) with the ``binary`` on this machine mounted at ``/opt/mpi-operator`` and run, and
    the pod placed on the real node (``label``: its label and taint key)."""
    return ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources: [{dev}]\npatches:\n" + _json_patch(DEPLOYMENT, [
                ("add", "/spec/template/spec/containers/0/command", f'["{GO_BINARY_MOUNT}"]'),
                ("add", "/spec/template/spec/containers/0/volumeMounts",
                 f'[{{"name": "mpi-operator", "mountPath": "{GO_BINARY_MOUNT}", '
                 '"readOnly": true}]'),
                ("add", "/spec/template/spec/volumes",
                 f'[{{"name": "mpi-operator", "hostPath": {{"path": "{binary}", '
                 '"type": "File"}}]'),
                ("add", "/spec/template/spec/tolerations",
                 f'[{{"key": "{label}", "operator": "Exists", "effect": "NoSchedule"}}]'),
                ("add", "/spec/template/spec/nodeSelector", f'{{"{label}": "true"}}'),
            ]))


def _write_overlay(root: Path, side: str, env: dict[str, str]) -> Path:
    """The kustomization directory that deploys ``side`` (``env``: :func:`images`)."""
    top = root / side
    top.mkdir()
    if side == "ours":
        (top / "kustomization.yaml").write_text(ours_kustomization(
            os.path.relpath(OURS_OVERLAY, top), env["CONTROLLER_IMAGE"]))
        return top
    module = Path(reference("module-dir", "mpi-operator")) / "manifests"
    dev = top / "dev"
    dev.mkdir()
    (dev / "kustomization.yaml").write_text(go_dev_kustomization(
        (module / "overlays" / "dev" / "kustomization.yaml.template").read_text(),
        os.path.relpath(module / "base", dev), env["BASE_IMAGE"]))
    for name in ("namespace.yaml", "patch.yaml"):
        (dev / name).write_text((module / "overlays" / "dev" / name).read_text())
    binary = Path(reference("bin-dir", "mpi-operator")) / "mpi-operator"
    (top / "kustomization.yaml").write_text(go_kustomization(
        "dev", binary=str(binary), label=env["REAL_NODE_LABEL"]))
    return top


def kubectl(kubeconfig: Path, *args: str) -> str:
    binary = Path(_hack("bin-dir", check=True).stdout.strip()) / "kubectl"
    out = subprocess.run([str(binary), "--kubeconfig", str(kubeconfig), *args],
                         capture_output=True, text=True, timeout=300, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed: {out.stderr.strip()[-2000:]}")
    return out.stdout


def _available(kube: Kube) -> bool:
    status = kube.get(DEPLOYMENT_PATH).get("status") or {}
    return bool(status.get("availableReplicas"))


def wait_rolled_out(kube: Kube, timeout: float = 120) -> bool:
    """Wait until the Deployment's last change has rolled out (one up-to-date replica
    available, no old one left), as the next spec should find it; ``False`` on timeout."""
    def done() -> bool:
        d = kube.get(DEPLOYMENT_PATH)
        spec, status = d["spec"], d.get("status") or {}
        want = spec.get("replicas", 1)
        return bool(status.get("observedGeneration", 0) >= d["metadata"]["generation"]
                and status.get("updatedReplicas", 0) == want
                and status.get("replicas", 0) == want
                and status.get("availableReplicas", 0) == want)
    try:
        wait(done, timeout=timeout, what="the operator's Deployment to roll out", interval=0.5)
    except TimeoutError:
        return False
    return True


class PodLogs:
    """Follows the logs of every pod of the operator's Deployment (each new pod as it starts:
    each spec replaces it) into one file, each line prefixed with its pod's name."""

    def __init__(self, kube: Kube, path: Path) -> None:
        self.kube = kube
        self.path = path
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._followed: set[str] = set()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _write(self, text: str) -> None:
        with self._lock, self.path.open("a") as out:
            out.write(text)

    def _watch(self) -> None:
        while not self._stop.wait(1.0):
            try:
                pods = self.kube.get(f"/api/v1/namespaces/{NAMESPACE}/pods",
                                     labelSelector="app=mpi-operator")["items"]
            except Exception:  # the API server busy: try again next second
                continue
            for pod in pods:
                name = pod["metadata"]["name"]
                started = any("running" in (s.get("state") or {}) or
                              "terminated" in (s.get("state") or {})
                              for s in (pod.get("status") or {}).get("containerStatuses") or [])
                if started and name not in self._followed:
                    self._followed.add(name)
                    threading.Thread(target=self._follow, args=(name,), daemon=True).start()

    def _follow(self, pod: str) -> None:
        self._write(f"==> pod {pod} (followed from {time.strftime('%H:%M:%S')})\n")
        try:
            for line in self.kube.stream_lines(
                    f"/api/v1/namespaces/{NAMESPACE}/pods/{pod}/log", follow="true"):
                self._write(f"[{pod}] {line}\n")
        except Exception as err:  # the pod went away mid-stream
            self._write(f"==> pod {pod}: log stream ended: {type(err).__name__}: {err}\n")


@contextmanager
def operator_deployment(side: str, kube: Kube, kubeconfig: Path, log_path: Path,
                        log: Callable[[str], None]) -> Iterator[None]:
    """``side`` (``ours`` or ``go``) deployed as the suite expects for the block: its MPIJob CRD,
    then its manifests, Available, its pods' logs in ``log_path``; removed afterwards."""
    install_crd(kube, read_crd(MPIJOB_V2BETA1.crds[side]()))
    ensure_namespace(kube, LOCK_NAMESPACE)
    release_locks(kube)
    start = time.monotonic()
    logs = PodLogs(kube, log_path)
    with tempfile.TemporaryDirectory(prefix="conformance-deploy-") as tmp:
        overlay = _write_overlay(Path(tmp), side, images(cluster_dir()))
        kubectl(kubeconfig, "apply", "--server-side", "--force-conflicts", "-k", str(overlay))
    try:
        logs.start()
        wait(lambda: _available(kube), timeout=180, interval=0.5,
             what=f"{side}'s Deployment {NAMESPACE}/{DEPLOYMENT} to be Available")
        log(f"{side} deployed as {NAMESPACE}/{DEPLOYMENT} in {time.monotonic() - start:.0f}s")
        yield
    finally:
        _remove_deployment(kube)
        logs.stop()
        release_locks(kube)


def _remove_deployment(kube: Kube) -> None:
    kube.delete(DEPLOYMENT_PATH)
    kube.delete(f"/api/v1/namespaces/{NAMESPACE}/services/mpi-operator-webhook")
    kube.delete("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
                "mpi-operator")

    def gone() -> bool:
        try:
            return not kube.get(f"/api/v1/namespaces/{NAMESPACE}/pods",
                                labelSelector="app=mpi-operator").get("items")
        except ApiError:
            return False
    wait(gone, timeout=120, what="the operator's pods to be gone", interval=0.5)
