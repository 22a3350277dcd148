"""MPIJobs whose pods really run on the real node, run by the deployed controller.

The pi jobs follow upstream's v2beta1 examples (examples/v2beta1/pi/pi.yaml, pi-mpich.yaml) on
images built here (hack/images/mpi-pi-*): 2 workers running sshd, a launcher running
``mpirun -n 2 /home/mpiuser/pi``, which only succeeds when the SSH keys are mounted with modes
sshd and ssh accept, the hostfile names resolve, and mpirun reaches every worker. The failing
job is upstream e2e's "has malformed command ... should fail" (test/e2e/mpi_job_test.go): as
root, OpenMPI's mpirun refuses to start without --allow-run-as-root, and with
``runPolicy.backoffLimit: 1`` the launcher Job, and so the MPIJob, fails.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from e2e.real.conftest import RealNode
from tests.mpijobs import GROUP, VERSION, MPIJobs
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster

ROLE = "training.kubeflow.org/job-role"
NON_ROOT_UID = 1000  # mpiuser in the MPI image
PI_LINE = re.compile(r"^pi is approximately (\d+\.\d+), error \S+ from (\d+) ranks$")
RANK_LINE = re.compile(r"^rank (\d+) of (\d+) on (\S+)$")


def pi_job(node: RealNode, name: str, impl: str, *, root: bool, workers: int = 2,
           launcher_args: list[str] | None = None) -> dict[str, Any]:
    """An MPIJob like upstream's pi example for ``impl`` (openmpi|mpich), as root or mpiuser."""
    image = node.image(f"mpi-pi-{impl}")
    args = launcher_args if launcher_args is not None else [
        *(["--allow-run-as-root"] if root and impl == "openmpi" else []),
        "-n", str(workers), "/home/mpiuser/pi"]
    # As upstream's examples: OpenMPI's launcher runs `mpirun` as its command; MPICH's passes it
    # as args to the image's entry point, which first waits until the workers' names resolve,
    # and its workers are Ready once sshd listens (MPICH's mpirun waits forever when ssh cannot
    # reach a worker; OpenMPI's exits, and the launcher is restarted).
    launcher: dict[str, Any] = {"name": "launcher", "image": image}
    worker: dict[str, Any] = {"name": "worker", "image": image}
    if impl == "openmpi":
        launcher.update(command=["mpirun"], args=args)
    else:
        launcher["args"] = ["mpirun", *args]
        # Ready (so named in DNS) only once sshd listens, as in upstream's pi-mpich.yaml.
        worker["readinessProbe"] = {"tcpSocket": {"port": 2222}, "initialDelaySeconds": 1,
                                    "periodSeconds": 1}
    spec: dict[str, Any] = {
        "slotsPerWorker": 1,
        "runPolicy": {"cleanPodPolicy": "Running"},
        "mpiImplementation": "OpenMPI" if impl == "openmpi" else "MPICH",
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "restartPolicy": "OnFailure",
                         "template": {"spec": node.place({"containers": [launcher]})}},
            "Worker": {"replicas": workers,
                       "template": {"spec": node.place({"containers": [worker]})}},
        },
    }
    if not root:
        spec["sshAuthMountPath"] = "/home/mpiuser/.ssh"
        worker["command"] = ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]
        for container in (launcher, worker):
            container["securityContext"] = {"runAsUser": NON_ROOT_UID}
    # As root the worker has no command: the controller gives it `/usr/sbin/sshd -De`.
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "MPIJob", "metadata": {"name": name},
            "spec": spec}


def launcher_pods(jobs: MPIJobs, name: str) -> list[Any]:
    return jobs.pods(f"training.kubeflow.org/job-name={name},{ROLE}=launcher")


def launcher_log(cluster: Cluster, namespace: str, name: str) -> str:
    return cluster.kubectl("-n", namespace, "logs", f"job/{name}-launcher")


@pytest.mark.parametrize("impl", ["openmpi", "mpich"])
@pytest.mark.parametrize("user", ["mpiuser", "root"])
def test_pi_runs_across_the_workers(impl: str, user: str, cluster: Cluster, kube_api: Any,
                                    namespace: str, real_node: RealNode,
                                    deployed_controller: dict[str, Any]) -> None:
    jobs = MPIJobs(kube_api, namespace)
    jobs.create(pi_job(real_node, "pi", impl, root=user == "root"))
    job = jobs.wait_condition("pi", "Succeeded", timeout=300)

    succeeded = next(c for c in job["status"]["conditions"] if c["type"] == "Succeeded")
    assert succeeded["reason"] == "MPIJobSucceeded"
    assert job["status"]["replicaStatuses"]["Launcher"] == {"succeeded": 1}
    [launcher] = launcher_pods(jobs, "pi")
    assert launcher.spec.node_name == real_node.name
    assert launcher.status.phase == "Succeeded"
    uid = launcher.spec.containers[0].security_context
    assert (uid.run_as_user if uid else None) == (None if user == "root" else NON_ROOT_UID)

    lines = launcher_log(cluster, namespace, "pi").splitlines()
    ranks = sorted((int(m[1]), int(m[2]), m[3]) for m in map(RANK_LINE.match, lines) if m)
    assert ranks == [(0, 2, "pi-worker-0"), (1, 2, "pi-worker-1")], lines
    [result] = [m for m in map(PI_LINE.match, lines) if m]
    assert int(result[2]) == 2
    assert abs(float(result[1]) - math.pi) < 1e-9, result[0]


def test_malformed_command_fails_the_job(cluster: Cluster, kube_api: Any, namespace: str,
                                         real_node: RealNode,
                                         deployed_controller: dict[str, Any]) -> None:
    jobs = MPIJobs(kube_api, namespace)
    body = pi_job(real_node, "pi", "openmpi", root=True,
                  launcher_args=["-n", "2", "/home/mpiuser/pi"])
    body["spec"]["runPolicy"]["backoffLimit"] = 1
    jobs.create(body)
    seen: dict[str, Any] = {}

    def failed() -> bool:
        """Records the first failed launcher run (exit code, node, log) while it can be read:
        once the Job has failed its pod is deleted."""
        if "log" not in seen:
            for pod in launcher_pods(jobs, "pi"):
                for cs in pod.status.container_statuses or []:
                    for state, previous in ((cs.state, False), (cs.last_state, True)):
                        ended = state.terminated if state else None
                        if ended and ended.exit_code and "log" not in seen:
                            seen.update(exit=ended.exit_code, node=pod.spec.node_name,
                                        log=cluster.kubectl(
                                            "-n", namespace, "logs", pod.metadata.name,
                                            *(["--previous"] if previous else []), check=False))
        return jobs.conditions("pi").get("Failed", ("", ""))[0] == "True"

    wait_for(failed, timeout=300, interval=0.5, what="MPIJob pi condition Failed")
    job = jobs.get("pi")
    failed_cond = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed_cond["reason"].startswith("BackoffLimitExceeded"), failed_cond
    assert "Succeeded" not in jobs.conditions("pi")
    launcher_job = jobs.batch.read_namespaced_job("pi-launcher", namespace)
    [job_failed] = [c for c in launcher_job.status.conditions if c.type == "Failed"]
    assert (job_failed.status, job_failed.reason) == ("True", "BackoffLimitExceeded")
    # The launcher really ran mpirun on the real node, which refused to run as root.
    assert seen.get("exit") == 1, seen
    assert seen["node"] == real_node.name
    assert "--allow-run-as-root" in seen["log"], seen["log"]


def test_discover_hosts_lists_a_worker_added_while_the_launcher_runs(
        cluster: Cluster, kube_api: Any, namespace: str, real_node: RealNode,
        deployed_controller: dict[str, Any]) -> None:
    """Elastic Horovod's host discovery: /etc/mpi/discover_hosts.sh in the running launcher
    follows the Running workers (upstream ``updateDiscoverHostsInConfigMap``)."""
    jobs = MPIJobs(kube_api, namespace)
    body = pi_job(real_node, "elastic", "openmpi", root=True, workers=1,
                  launcher_args=["-n", "1", "/home/mpiuser/pi"])
    launcher = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    launcher["command"], launcher["args"] = ["sleep"], ["600"]
    jobs.create(body)

    def launcher_running() -> str | None:
        pods = [p for p in launcher_pods(jobs, "elastic") if p.status.phase == "Running"]
        return pods[0].metadata.name if pods else None

    pod = wait_for(launcher_running, timeout=180, what="the elastic launcher to run")
    host = f"elastic-worker-{{}}.elastic.{namespace}.svc"

    def discovered() -> list[str]:
        out = cluster.kubectl("-n", namespace, "exec", pod, "--", "/etc/mpi/discover_hosts.sh")
        return out.splitlines()

    wait_for(lambda: discovered() == [host.format(0)], timeout=120,
             what="worker 0 in discover_hosts.sh")
    jobs.patch("elastic", {"spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 2}}}})
    wait_for(lambda: discovered() == [host.format(0), host.format(1)], timeout=180, interval=1,
             what="worker 1 in discover_hosts.sh inside the running launcher")
    assert launcher_running() == pod  # the same launcher container saw the change
