"""The MPIJob kind on the job engine against the real API server (in-process controller, one
namespace).

Each test cites the Go operator (mpi-operator v0.8.2) behaviour it matches."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from tests.controller_harness import InProcessController, running_controller
from tests.mpijobs import EXIT_CODE, MPIJobs, small_job
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster

JOB_NAME = "training.kubeflow.org/job-name"
ROLE = "training.kubeflow.org/job-role"


@pytest.fixture
def jobs(kube_api: Any, namespace: str, mpijob_crd: str) -> MPIJobs:
    return MPIJobs(kube_api, namespace)


@pytest.fixture
def controller(cluster: Cluster, namespace: str, mpijob_crd: str,
               ) -> Iterator[InProcessController]:
    with running_controller(cluster.kubeconfig, namespace) as ctl:
        yield ctl


def _status(jobs: MPIJobs, name: str) -> dict[str, Any]:
    return jobs.get(name).get("status") or {}


def _config(jobs: MPIJobs, name: str) -> dict[str, str]:
    cm = jobs.core.read_namespaced_config_map(f"{name}-config", jobs.namespace)
    return dict(cm.data or {})


def _running_workers(jobs: MPIJobs, name: str) -> int:
    return sum(1 for p in jobs.workers(name) if p.status.phase == "Running")


def test_success_path_status_conditions_and_events(jobs: MPIJobs,
                                                   controller: InProcessController) -> None:
    """syncHandler's first sync creates Service, ConfigMap, Secret, workers and launcher, sets
    Created; Running once launcher and workers run; Succeeded with the Job's completion."""
    ns = jobs.namespace
    jobs.create(small_job("ok", workers=2, launcher_runs="6s"))
    created = jobs.wait_condition("ok", "Created")
    uid = created["metadata"]["uid"]
    ref = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "name": "ok", "uid": uid,
           "controller": True, "blockOwnerDeletion": True}

    svc = jobs.core.read_namespaced_service("ok", ns)
    assert svc.spec.cluster_ip == "None"
    assert svc.spec.selector == {"training.kubeflow.org/operator-name": "mpi-operator",
                                 JOB_NAME: "ok"}
    assert svc.metadata.labels == {"app": "ok"}
    assert [o.to_dict() | {} for o in svc.metadata.owner_references] == [
        {"api_version": ref["apiVersion"], "kind": "MPIJob", "name": "ok", "uid": uid,
         "controller": True, "block_owner_deletion": True}]
    assert _config(jobs, "ok")["hostfile"] == (
        f"ok-worker-0.ok.{ns}.svc slots=1\nok-worker-1.ok.{ns}.svc slots=1\n")
    secret = jobs.core.read_namespaced_secret("ok-ssh", ns)
    assert secret.type == "kubernetes.io/ssh-auth"
    assert base64.b64decode(secret.data["ssh-privatekey"]).startswith(
        b"-----BEGIN EC PRIVATE KEY-----")
    assert base64.b64decode(secret.data["ssh-publickey"]).startswith(b"ecdsa-sha2-nistp521 ")
    workers = sorted(jobs.workers("ok"), key=lambda p: p.metadata.name)
    assert [p.metadata.labels["training.kubeflow.org/replica-index"] for p in workers] == ["0", "1"]
    assert workers[0].spec.containers[0].command == ["/usr/sbin/sshd", "-De"]
    launcher = jobs.batch.read_namespaced_job("ok-launcher", ns)
    assert launcher.spec.pod_replacement_policy == "Failed"

    def launcher_active() -> dict[str, Any] | None:
        j = jobs.get("ok")
        statuses = (j.get("status") or {}).get("replicaStatuses", {})
        return j if statuses.get("Launcher") == {"active": 1} else None

    job = wait_for(launcher_active, timeout=60, what="the launcher to run")
    running = jobs.wait_condition("ok", "Running")
    assert running["status"]["replicaStatuses"]["Worker"] == {"active": 2}
    assert _config(jobs, "ok")["discover_hosts.sh"] == (
        f"#!/bin/sh\necho ok-worker-0.ok.{ns}.svc\necho ok-worker-1.ok.{ns}.svc\n")
    assert job["status"]["startTime"]

    done = jobs.wait_condition("ok", "Succeeded", timeout=90)
    conds = done["status"]["conditions"]
    assert [(x["type"], x["status"], x["reason"], x["message"]) for x in conds] == [
        ("Created", "True", "MPIJobCreated", f"MPIJob {ns}/ok is created."),
        ("Running", "False", "MPIJobRunning", f"MPIJob {ns}/ok is running."),
        ("Succeeded", "True", "MPIJobSucceeded", f"MPIJob {ns}/ok successfully completed."),
    ]
    assert done["status"]["replicaStatuses"]["Launcher"] == {"succeeded": 1}
    assert done["status"]["completionTime"]
    wait_for(lambda: not jobs.workers("ok"), timeout=60, what="cleanPodPolicy Running cleanup")
    wait_for(lambda: _status(jobs, "ok")["replicaStatuses"]["Worker"] == {}, timeout=30,
             what="Worker status reset after cleanup")
    events = jobs.events("ok")
    assert ("Normal", "MPIJobCreated", f"MPIJob {ns}/ok is created.") in events
    assert ("Normal", "MPIJobRunning", f"MPIJob {ns}/ok is running") in events
    assert ("Normal", "MPIJobSucceeded", f"MPIJob {ns}/ok successfully completed.") in events


def test_wait_for_workers_ready_creates_the_launcher_only_after_workers_are_ready(
        jobs: MPIJobs, controller: InProcessController) -> None:
    """launcherCreationPolicy WaitForWorkersReady: no launcher until every worker is Ready."""
    body = small_job("wait", workers=2, launcherCreationPolicy="WaitForWorkersReady")
    body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["schedulingGates"] = [
        {"name": "test.mpi-controller.io/hold"}]
    jobs.create(body)
    wait_for(lambda: len(jobs.workers("wait")) == 2, timeout=30, what="two gated workers")
    status = jobs.wait_condition("wait", "Created")["status"]
    assert "Launcher" not in status.get("replicaStatuses", {})
    with pytest.raises(AssertionError):  # still no launcher while the workers wait
        wait_for(lambda: jobs.batch.list_namespaced_job(jobs.namespace).items, timeout=4,
                 what="a launcher")
    for pod in jobs.workers("wait"):
        jobs.core.patch_namespaced_pod(pod.metadata.name, jobs.namespace,
                                       {"spec": {"schedulingGates": None}})
    wait_for(lambda: [j for j in jobs.batch.list_namespaced_job(jobs.namespace).items
                      if j.metadata.name == "wait-launcher"],
             timeout=60, what="the launcher after the workers became Ready")
    jobs.wait_condition("wait", "Succeeded", timeout=90)


def test_suspend_resume_with_launcher_template_edits_and_suspend_again(
        jobs: MPIJobs, controller: InProcessController) -> None:
    """Suspension: created suspended (launcher Job suspended, no workers); template edits made while
    suspended reach the launcher on resume; suspending again deletes the workers."""
    ns = jobs.namespace
    jobs.create(small_job("sus", workers=2, launcher_runs="600s", run_policy={"suspend": True}))
    job = jobs.wait_condition("sus", "Suspended")
    assert [(x["type"], x["status"], x["reason"]) for x in job["status"]["conditions"]] == [
        ("Created", "True", "MPIJobCreated"), ("Suspended", "True", "MPIJobSuspended"),
        ("Running", "False", "MPIJobSuspended")]
    assert "startTime" not in job["status"]
    assert jobs.batch.read_namespaced_job("sus-launcher", ns).spec.suspend is True
    assert jobs.workers("sus") == []

    selector = {"kubernetes.io/os": "linux"}
    jobs.patch("sus", {"spec": {
        "runPolicy": {"suspend": False},
        "mpiReplicaSpecs": {"Launcher": {"template": {
            "metadata": {"labels": {"queue": "q1"}}, "spec": {"nodeSelector": selector}}}}}})
    jobs.wait_condition("sus", "Running", timeout=60)
    launcher = jobs.batch.read_namespaced_job("sus-launcher", ns)
    assert launcher.spec.suspend is False
    assert launcher.spec.template.spec.node_selector == selector
    assert launcher.spec.template.metadata.labels["queue"] == "q1"
    conds = {x["type"]: (x["status"], x["reason"]) for x in jobs.get("sus")["status"]["conditions"]}
    assert conds["Suspended"] == ("False", "MPIJobResumed")
    assert ("Normal", "MPIJobResumed", "MPIJob resumed") in jobs.events("sus")

    jobs.patch("sus", {"spec": {"runPolicy": {"suspend": True}}})
    wait_for(lambda: jobs.batch.read_namespaced_job("sus-launcher", ns).spec.suspend is True,
             timeout=30, what="the launcher to be suspended again")
    wait_for(lambda: not jobs.workers("sus"), timeout=60, what="workers deleted on suspend")
    conds = {x["type"]: (x["status"], x["reason"]) for x in jobs.get("sus")["status"]["conditions"]}
    assert conds["Suspended"] == ("True", "MPIJobSuspended")
    assert conds["Running"] == ("False", "MPIJobSuspended")


def test_launcher_failure_reaches_failed(jobs: MPIJobs, controller: InProcessController) -> None:
    """updateMPIJobFailedStatus: the Job's BackoffLimitExceeded becomes the Failed reason."""
    body = small_job("boom", workers=1, run_policy={"backoffLimit": 0})
    annotations = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"]["annotations"]
    annotations.update({EXIT_CODE: "7", "sim.mpi-controller.io/duration": "1s"})
    jobs.create(body)
    job = jobs.wait_condition("boom", "Failed", timeout=90)
    failed = next(x for x in job["status"]["conditions"] if x["type"] == "Failed")
    assert failed["reason"] == "BackoffLimitExceeded/"
    assert failed["message"].startswith("Job has reached the specified backoff limit")
    assert job["status"]["replicaStatuses"]["Launcher"] == {"failed": 1}
    assert job["status"]["completionTime"]
    assert ("Warning", failed["reason"], failed["message"]) in jobs.events("boom")


def test_scale_up_and_down_follows_replicas(jobs: MPIJobs, controller: InProcessController) -> None:
    """Scaling: scale-up creates the missing indices, scale-down deletes index >= replicas; the
    hostfile follows replicas."""
    ns = jobs.namespace
    jobs.create(small_job("scale", workers=2, launcher_runs="600s"))
    wait_for(lambda: _running_workers(jobs, "scale") == 2, timeout=60, what="2 workers")
    jobs.patch("scale", {"spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 4}}}})
    wait_for(lambda: _running_workers(jobs, "scale") == 4, timeout=60, what="4 workers")
    assert _config(jobs, "scale")["hostfile"] == "".join(
        f"scale-worker-{i}.scale.{ns}.svc slots=1\n" for i in range(4))
    jobs.patch("scale", {"spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 1}}}})
    wait_for(lambda: [p.metadata.name for p in jobs.workers("scale")] == ["scale-worker-0"],
             timeout=60, what="scale down to 1 worker")
    one = f"scale-worker-0.scale.{ns}.svc slots=1\n"
    wait_for(lambda: _config(jobs, "scale")["hostfile"] == one, timeout=30,
             what="the hostfile to follow")
    wait_for(lambda: _config(jobs, "scale")["discover_hosts.sh"] ==
             f"#!/bin/sh\necho scale-worker-0.scale.{ns}.svc\n", timeout=30,
             what="discover_hosts.sh to follow")


def test_discover_hosts_follows_running_workers(jobs: MPIJobs,
                                                controller: InProcessController) -> None:
    """updateDiscoverHostsInConfigMap lists only Running workers, sorted by name."""
    ns = jobs.namespace
    jobs.create(small_job("dh", workers=3, launcher_runs="600s"))
    everyone = "#!/bin/sh\n" + "".join(f"echo dh-worker-{i}.dh.{ns}.svc\n" for i in range(3))
    wait_for(lambda: _config(jobs, "dh")["discover_hosts.sh"] == everyone, timeout=60,
             what="all 3 workers in discover_hosts.sh")
    # Worker 1 exits: it is no longer Running (and a failed worker is not recreated).
    jobs.core.patch_namespaced_pod("dh-worker-1", ns, {"metadata": {"annotations": {
        EXIT_CODE: "1", "sim.mpi-controller.io/duration": "0s"}}})
    without = f"#!/bin/sh\necho dh-worker-0.dh.{ns}.svc\necho dh-worker-2.dh.{ns}.svc\n"
    wait_for(lambda: _config(jobs, "dh")["discover_hosts.sh"] == without, timeout=60,
             what="the failed worker to leave discover_hosts.sh")
    assert jobs.core.read_namespaced_pod("dh-worker-1", ns).status.phase == "Failed"


def test_invalid_job_gets_validation_error_while_valid_job_succeeds(
        jobs: MPIJobs, controller: InProcessController) -> None:
    """Validation errors give only a Warning ValidationError event (no status, no children)."""
    bad = small_job("bad", workers=1)
    bad["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    jobs.create(bad)
    jobs.create(small_job("good", workers=1))
    jobs.wait_condition("good", "Succeeded", timeout=90)
    expected = ("Warning", "ValidationError", "Found validation errors: "
                "spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1")
    wait_for(lambda: expected in jobs.events("bad"), timeout=30, what="the ValidationError event")
    assert "status" not in jobs.get("bad") or not jobs.get("bad")["status"]
    assert jobs.workers("bad") == []


def test_managed_by_another_controller_is_left_alone(
        jobs: MPIJobs, controller: InProcessController) -> None:
    """runPolicy.managedBy other than kubeflow.org/mpi-operator: skipped silently."""
    jobs.create(small_job("kueue", workers=1,
                          run_policy={"managedBy": "kueue.x-k8s.io/multikueue"}))
    jobs.create(small_job("mine", workers=1))
    jobs.wait_condition("mine", "Succeeded", timeout=90)
    assert not jobs.get("kueue").get("status")
    assert jobs.workers("kueue") == []
    assert jobs.events("kueue") == []
    names = [s.metadata.name for s in jobs.core.list_namespaced_service(jobs.namespace).items]
    assert "kueue" not in names


def foreign_object(kind: str, job: str) -> tuple[str, Callable[[Any, Any, str], Any]]:
    """The name of ``job``'s child of ``kind``, and a maker of a foreign object by that name
    (no owner, no labels: outside the controller's label-narrowed caches)."""
    name = {"Service": job, "ConfigMap": f"{job}-config", "Secret": f"{job}-ssh",
            "Pod": f"{job}-worker-0", "Job": f"{job}-launcher"}[kind]
    meta = {"name": name}
    container = {"name": "x", "image": "busybox"}
    makers: dict[str, Callable[[Any, Any, str], Any]] = {
        "Service": lambda core, batch, ns: core.create_namespaced_service(
            ns, {"metadata": meta, "spec": {"clusterIP": "None", "selector": {"a": "b"}}}),
        "ConfigMap": lambda core, batch, ns: core.create_namespaced_config_map(
            ns, {"metadata": meta}),
        "Secret": lambda core, batch, ns: core.create_namespaced_secret(ns, {"metadata": meta}),
        "Pod": lambda core, batch, ns: core.create_namespaced_pod(
            ns, {"metadata": meta, "spec": {"containers": [container]}}),
        "Job": lambda core, batch, ns: batch.create_namespaced_job(
            ns, {"metadata": meta, "spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [container]}}}}),
    }
    return name, makers[kind]


FOREIGN_KINDS = ["Service", "ConfigMap", "Secret", "Pod", "Job"]


def not_managed(name: str, kind: str) -> tuple[str, str, str]:
    """The ErrResourceExists event for ``name`` of ``kind``."""
    return ("Warning", "ErrResourceExists",
            f'Resource "{name}" of Kind "{kind}" already exists and is not managed by MPIJob')


@pytest.mark.parametrize("kind", FOREIGN_KINDS)
def test_existing_object_not_controlled_by_the_job(
        jobs: MPIJobs, controller: InProcessController, kind: str) -> None:
    """ErrResourceExists event, and the sync errors (here the real kind is named)."""
    name, make = foreign_object(kind, "fx")
    make(jobs.core, jobs.batch, jobs.namespace)
    jobs.create(small_job("fx", workers=1, launcher_runs="600s"))
    expected = not_managed(name, kind)
    wait_for(lambda: expected in jobs.events("fx"), timeout=30, what=f"ErrResourceExists {kind}")
    if kind == "Pod":
        pod = jobs.core.read_namespaced_pod(name, jobs.namespace)
        assert not pod.metadata.owner_references  # left untouched


def _install_pod_group_crd(kube_api: Any, group: str, version: str) -> None:
    ext = client.ApiextensionsV1Api(kube_api)
    name = f"podgroups.{group}"
    body = {
        "metadata": {"name": name},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"kind": "PodGroup", "plural": "podgroups", "singular": "podgroup",
                           "listKind": "PodGroupList"},
                 "versions": [{"name": version, "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}]},
    }
    try:
        ext.create_custom_resource_definition(body)
    except client.ApiException as err:
        if err.status != 409:
            raise

    def established() -> bool:
        crd = ext.read_custom_resource_definition(name)
        return any(x.type == "Established" and x.status == "True"
                   for x in crd.status.conditions or [])

    wait_for(established, timeout=30, what=f"CRD {name}")


@pytest.mark.parametrize(("gang", "group", "version"), [
    ("volcano", "scheduling.volcano.sh", "v1beta1"),
    ("scheduler-plugins-scheduler", "scheduling.x-k8s.io", "v1alpha1"),
])
def test_pod_groups_created_and_updated(cluster: Cluster, kube_api: Any, jobs: MPIJobs,
                                        gang: str, group: str, version: str) -> None:
    """Gang scheduling: PodGroup <job> with minMember = workers + 1; spec changes are written
    back; the pods name the gang scheduler."""
    _install_pod_group_crd(kube_api, group, version)
    custom = client.CustomObjectsApi(kube_api)
    ns = jobs.namespace
    with running_controller(cluster.kubeconfig, ns, gang_scheduling=gang):
        body = small_job("gang", workers=2, launcher_runs="600s")
        body["spec"]["runPolicy"]["schedulingPolicy"] = {"queue": "research"}
        jobs.create(body)

        def pod_group() -> dict[str, Any]:
            return custom.get_namespaced_custom_object(  # type: ignore[no-any-return]
                group, version, ns, "podgroups", "gang")

        pg = wait_for(pod_group, timeout=30, what="the PodGroup")
        assert pg["spec"]["minMember"] == 3
        assert pg["metadata"]["ownerReferences"][0]["kind"] == "MPIJob"
        if gang == "volcano":
            assert pg["spec"]["queue"] == "research"
        wait_for(lambda: len(jobs.workers("gang")) == 2, timeout=30, what="gang workers")
        for pod in jobs.workers("gang"):
            assert pod.spec.scheduler_name == gang
        jobs.patch("gang", {"spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 2}}}})
        wait_for(lambda: pod_group()["spec"]["minMember"] == 2, timeout=30,
                 what="the PodGroup update")
