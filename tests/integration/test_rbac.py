"""deploy/base/cluster-role.yaml is the least privilege mpi-controller needs: with the role bound
to a ServiceAccount (token from ``kubectl create token``) the controller drives an MPIJob
through its whole life (leader election, gang scheduling with PodGroups and PriorityClasses,
create, suspend with a started launcher, resume, success, cleanPodPolicy Running) and, beside
it, a TFJob (pods, Services and PodGroup created, Running, Succeeded, cleanPodPolicy All
deleting pods, Services and PodGroup, ttlSecondsAfterFinished deleting the job) and an elastic
PyTorchJob (its HPA created, Running, suspended with the HPA deleted, resumed, Succeeded,
deleted after its TTL), an MPIJob created as ``v1`` (training-operator's kubectl-exec mode: the
launcher's ServiceAccount, Role with ``pods/exec``, RoleBinding, worker and launcher pods,
Running, Succeeded, Running workers cleaned up) and one created as ``v1alpha2`` (worker
StatefulSet, launcher Job, Running, Succeeded, workers scaled to 0); and with any one rule
removed some step observably fails (the step never happens, or the controller logs Forbidden, or
exits). All variants run at once, each in its own namespace (also its Lease's). With the whole
role, a foreign object of each child kind outside the caches is reported with ErrResourceExists
(the create's AlreadyExists answer is followed by a GET), not Forbidden. The opt-ins that delete
(a TTL deleting the MPIJob, an evicted job's launcher Job) work under the role, and fail
Forbidden without its `delete` on mpijobs or on jobs.

TrainJob's rules (``--enable-scheme trainjob``; the addons cluster with JobSet, ``make
addons-test``, else skipped) are proven the same way: with the role (less the MPIJob
ConfigMap and Secret rule, which would cover TrainJob's own) a TrainJob on the MPI runtime
``deepspeed-distributed`` is created suspended (its runtime snapshot, SSH Secret, hostfile and
suspended JobSet made, ``Suspended`` written), resumed (the JobSet applied) and completes, and
the TrainJob webhook's reads (the runtime, a Volcano runtime's PriorityClass) succeed with the
role's identity; without any one TrainJob rule a step fails or the controller logs Forbidden."""

from __future__ import annotations

import contextlib
import copy
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from conftest import delete_mpijobs
from mpi_controller.kinds import plugin
from tests.integration.test_controller import (
    FOREIGN_KINDS,
    _install_pod_group_crd,
    foreign_object,
    not_managed,
)
from tests.mpijobs import MPIJobs, older_generation_job, small_job
from tests.processes import ControllerProcess
from tests.pytorchjobs import CPU_METRIC, PyTorchJobs, pytorchjob
from tests.pytorchjobs import replica as pt_replica
from tests.support import REPO, Cluster, rbac_denied, token_kubeconfig, wait_for
from tests.tfjobs import DURATION, TFJobs, replica, tfjob

pytestmark = pytest.mark.cluster

ROLE = yaml.safe_load((REPO / "deploy/base/cluster-role.yaml").read_text())
TRAINJOB_RULES = {
    (rule.api_group, rule.resources, rule.verbs) for rule in plugin("trainjob").rbac} | {
    ("trainer.kubeflow.org", ("trainjobs",), ("get", "list", "watch")),
    ("trainer.kubeflow.org", ("trainjobs/status",), ("update",)),
    ("trainer.kubeflow.org", ("trainjobs/finalizers",), ("update",))}
"""The rules only TrainJob needs: proven by :func:`test_every_trainjob_rule_is_needed` (TrainJob
needs JobSet, the local cluster's ``jobset`` addon)."""
RULES: list[dict[str, Any]] = [
    r for r in ROLE["rules"]
    if (r["apiGroups"][0], tuple(r["resources"]), tuple(r["verbs"])) not in TRAINJOB_RULES]
STEP_TIMEOUT = 45.0


# A rule only older servers need: from 1.36 (MutableSchedulingDirectivesForSuspendedJobs on by
# default) the Job controller clears a suspended Job's status.startTime itself, so resuming an
# MPIJob no longer writes the launcher's status (before, it must: mpi/plugin.py says why).
ONLY_BEFORE_1_36 = "batch:jobs/status"


def unused_on_this_server(kube_api: Any) -> list[str]:
    """The rules the whole suite cannot show needed on this API server's version."""
    version = client.VersionApi(kube_api).get_code()
    minor = int("".join(c for c in version.minor if c.isdigit()))
    return [ONLY_BEFORE_1_36] if (int(version.major), minor) >= (1, 36) else []


def _rule_id(rule: dict[str, Any]) -> str:
    return f"{'|'.join(rule['apiGroups']) or 'core'}:{','.join(rule['resources'])}"


class Variant:
    """A ServiceAccount bound to the role minus rule ``skip`` (None: the whole role), its
    namespace (job and Lease), a kubeconfig with its token, and a controller process."""

    def __init__(self, tag: str, skip: int | None, cluster: Cluster, api: Any,
                 tmp: Path, *flags: str) -> None:
        self.skip = skip
        self.flags = flags
        self.name = f"rbac-{tag}-{'all' if skip is None else skip}"
        self.cluster, self.tmp = cluster, tmp
        self.rbac = client.RbacAuthorizationV1Api(api)
        self.core = client.CoreV1Api(api)
        self.jobs = MPIJobs(api, self.name)
        self.tfjobs = TFJobs(api, self.name)
        self.pytorchjobs = PyTorchJobs(api, self.name)
        self.steps: list[str] = []
        self.failed_step: str | None = None
        self.proc: ControllerProcess | None = None

    def rules(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(r) for i, r in enumerate(RULES) if i != self.skip]

    def set_up(self) -> None:
        self.core.create_namespace({"metadata": {"name": self.name}})
        self.core.create_namespaced_service_account(self.name, {"metadata": {"name": "ctl"}})
        self.rbac.create_cluster_role({"metadata": {"name": self.name}, "rules": self.rules()})
        self.rbac.create_cluster_role_binding({
            "metadata": {"name": self.name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": self.name},
            "subjects": [{"kind": "ServiceAccount", "name": "ctl", "namespace": self.name}]})
        kubeconfig = token_kubeconfig(self.cluster, self.name, "ctl",
                                      self.tmp / f"{self.name}.kubeconfig")
        self.proc = ControllerProcess(
            kubeconfig, self.tmp / f"{self.name}.log", "--namespace", self.name,
            "--lock-namespace", self.name, "--gang-scheduling", "default-scheduler",
            *self.flags)
        self.proc.start()

    def tear_down(self) -> None:
        if self.proc is not None and self.proc.alive():
            self.proc.kill()
        delete_mpijobs(self.core.api_client, self.name)
        for call in (lambda: self.rbac.delete_cluster_role_binding(self.name),
                     lambda: self.rbac.delete_cluster_role(self.name),
                     lambda: self.core.delete_namespace(self.name)):
            with contextlib.suppress(client.ApiException):
                call()

    def log(self) -> str:
        return self.proc.log() if self.proc is not None else ""

    def forbidden(self) -> bool:
        """The controller logged an RBAC denial (:func:`~tests.support.rbac_denied`)."""
        return rbac_denied(self.log())

    def exited(self) -> bool:
        return self.proc is not None and not self.proc.alive()

    # -- the job's life --------------------------------------------------------------------

    def _wait(self, step: str, probe: Callable[[], bool], *, timeout: float = STEP_TIMEOUT,
              interval: float = 0.5) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if probe():
                    self.steps.append(step)
                    return True
            except client.ApiException:
                pass
            if self.exited():
                break
            time.sleep(interval)
        self.failed_step = step
        return False

    def _cond(self, ctype: str) -> Callable[[], bool]:
        return lambda: self.jobs.conditions("job").get(ctype, ("",))[0] == "True"

    def _launcher_started(self) -> bool:
        job = self.jobs.batch.read_namespaced_job("job-launcher", self.name)
        return job.status.start_time is not None and self._cond("Running")()

    def drive(self) -> None:
        """create → Running (launcher started) → suspend → Suspended, workers gone →
        resume → Succeeded → Running workers cleaned up (cleanPodPolicy Running)."""
        self.jobs.create(small_job("job", workers=2, launcher_runs="20s"))
        if not self._wait("running", self._launcher_started):
            return
        self.jobs.patch("job", {"spec": {"runPolicy": {"suspend": True}}})
        if not self._wait("suspended", lambda: self._cond("Suspended")()
                          and not self.jobs.workers("job")):
            return
        self.jobs.patch("job", {"spec": {"runPolicy": {"suspend": False}, "mpiReplicaSpecs": {
            "Launcher": {"template": {"metadata": {"annotations": {
                "sim.mpi-controller.io/duration": "3s"}}}}}}})
        if not self._wait("succeeded", self._cond("Succeeded")):
            return
        self._wait("cleaned-up", lambda: not self.jobs.workers("job"))

    def _tf_cond(self, ctype: str) -> Callable[[], bool]:
        return lambda: (ctype, "True") in [c[:2] for c in self.tfjobs.conditions("tf")]

    def _tf_gone(self) -> bool:
        try:
            self.tfjobs.get("tf")
        except client.ApiException as err:
            return err.status == 404
        return False

    def drive_tfjob(self) -> None:
        """create → Running → Succeeded (the chief) → pods and Services deleted
        (cleanPodPolicy All) → the job deleted (ttlSecondsAfterFinished)."""
        self.tfjobs.create(tfjob("tf", {"Chief": replica(1, annotations={DURATION: "8s"}),
                                        "Worker": replica(1, annotations={DURATION: "600s"})},
                                 run_policy={"cleanPodPolicy": "All",
                                             "ttlSecondsAfterFinished": 2}))
        for step, probe in (("tf-running", self._tf_cond("Running")),
                            ("tf-succeeded", self._tf_cond("Succeeded")),
                            ("tf-cleaned-up", lambda: not self.tfjobs.pods("tf")
                             and not self.tfjobs.services("tf")),
                            ("tf-deleted", self._tf_gone)):
            if not self._wait(step, probe):
                return

    def _pt_cond(self, ctype: str) -> Callable[[], bool]:
        return lambda: (ctype, "True") in [c[:2] for c in self.pytorchjobs.conditions("pt")]

    def _pt_gone(self) -> bool:
        try:
            self.pytorchjobs.get("pt")
        except client.ApiException as err:
            return err.status == 404
        return False

    def drive_pytorchjob(self) -> None:
        """create → HPA → Running → suspend → HPA, pods and Services gone → resume → HPA
        again → Succeeded (a worker finished) → the job deleted (ttlSecondsAfterFinished)."""
        jobs = self.pytorchjobs
        jobs.create(pytorchjob("pt", {"Worker": pt_replica(1, annotations={DURATION: "600s"})},
                               elastic={"maxReplicas": 2, "metrics": [CPU_METRIC]},
                               run_policy={"ttlSecondsAfterFinished": 2}))
        for step, probe in (("pt-hpa", lambda: jobs.hpa("pt") is not None),
                            ("pt-running", self._pt_cond("Running"))):
            if not self._wait(step, probe):
                return
        jobs.patch("pt", {"spec": {"runPolicy": {"suspend": True}}})
        if not self._wait("pt-suspended", lambda: self._pt_cond("Suspended")()
                          and jobs.hpa("pt") is None and not jobs.pods("pt")
                          and not jobs.services("pt")):
            return
        jobs.patch("pt", {"spec": {"runPolicy": {"suspend": False}, "pytorchReplicaSpecs": {
            "Worker": {"template": {"metadata": {"annotations": {DURATION: "3s"}}}}}}})
        for step, probe in (("pt-resumed", lambda: jobs.hpa("pt") is not None),
                            ("pt-succeeded", self._pt_cond("Succeeded")),
                            ("pt-deleted", self._pt_gone)):
            if not self._wait(step, probe):
                return

    def drive_v1(self) -> None:
        """An MPIJob created as v1: Running (its launcher's identity made, the Role granting
        exec into both workers) → Succeeded → Running workers cleaned up."""
        self.jobs.create(older_generation_job("v1", "v1", launcher_runs="8s"))

        def running() -> bool:
            role = self.rbac.read_namespaced_role("v1-launcher", self.name)
            return (self._cond_named("v1", "Running")()
                    and self.core.read_namespaced_service_account("v1-launcher", self.name)
                    is not None
                    and self.rbac.read_namespaced_role_binding("v1-launcher", self.name)
                    is not None
                    and role.rules[1].resource_names == ["v1-worker-0", "v1-worker-1"])
        for step, probe in (("v1-running", running),
                            ("v1-succeeded", self._cond_named("v1", "Succeeded")),
                            ("v1-cleaned-up", lambda: not self.jobs.pods(
                                "training.kubeflow.org/job-name=v1,"
                                "training.kubeflow.org/replica-type=worker"))):
            if not self._wait(step, probe):
                return

    def drive_v1alpha2(self) -> None:
        """An MPIJob created as v1alpha2: Running (StatefulSet ready, launcher Job active) →
        Succeeded → the StatefulSet scaled to 0."""
        self.jobs.create(older_generation_job("v1alpha2", "v1a2", launcher_runs="8s"))
        apps = client.AppsV1Api(self.core.api_client)

        def scaled_to_zero() -> bool:
            sts = apps.read_namespaced_stateful_set("v1a2-worker", self.name)
            return sts.spec.replicas == 0
        for step, probe in (("v1a2-running", self._cond_named("v1a2", "Running")),
                            ("v1a2-succeeded", self._cond_named("v1a2", "Succeeded")),
                            ("v1a2-cleaned-up", scaled_to_zero)):
            if not self._wait(step, probe):
                return

    def _cond_named(self, job: str, ctype: str) -> Callable[[], bool]:
        return lambda: self.jobs.conditions(job).get(ctype, ("",))[0] == "True"

    def drive_both(self) -> None:
        """The lives of every kind and MPIJob generation side by side."""
        threads = [threading.Thread(target=f, daemon=True)
                   for f in (self.drive, self.drive_tfjob, self.drive_pytorchjob,
                             self.drive_v1, self.drive_v1alpha2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=5 * STEP_TIMEOUT)


@pytest.fixture
def variants(cluster: Cluster, kube_api: Any, mpijob_crd: str, tfjob_crd: str,
             pytorchjob_crd: str, tmp_path: Path) -> Iterator[list[Variant]]:
    _install_pod_group_crd(kube_api, "scheduling.x-k8s.io", "v1alpha1")
    tag = uuid.uuid4().hex[:5]
    made = [Variant(tag, skip, cluster, kube_api, tmp_path)
            for skip in [None, *range(len(RULES))]]
    try:
        for v in made:
            v.set_up()
        yield made
    finally:
        for v in made:
            v.tear_down()


def test_every_rule_of_the_cluster_role_is_needed(variants: list[Variant],
                                                  kube_api: Any) -> None:
    threads = [threading.Thread(target=v.drive_both, daemon=True) for v in variants]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=5 * STEP_TIMEOUT + 30)
    full, partial = variants[0], variants[1:]
    assert full.failed_step is None, (full.steps, full.log()[-3000:])
    assert [s for s in full.steps if s.startswith("v1-")] == [
        "v1-running", "v1-succeeded", "v1-cleaned-up"]
    assert [s for s in full.steps if s.startswith("v1a2-")] == [
        "v1a2-running", "v1a2-succeeded", "v1a2-cleaned-up"]
    assert [s for s in full.steps if not s.startswith(("tf-", "pt-", "v1-", "v1a2-"))] == [
        "running", "suspended", "succeeded", "cleaned-up"]
    assert [s for s in full.steps if s.startswith("tf-")] == [
        "tf-running", "tf-succeeded", "tf-cleaned-up", "tf-deleted"]
    assert [s for s in full.steps if s.startswith("pt-")] == [
        "pt-hpa", "pt-running", "pt-suspended", "pt-resumed", "pt-succeeded", "pt-deleted"]
    assert not full.forbidden(), full.log()[-3000:]
    spare = []
    for v in partial:
        assert v.skip is not None
        if v.failed_step is None and not v.forbidden() and not v.exited():
            spare.append(_rule_id(RULES[v.skip]))
    assert spare == unused_on_this_server(kube_api), \
        f"rules the controller did without: {spare}"


def test_foreign_objects_are_reported_under_the_role(
        cluster: Cluster, kube_api: Any, mpijob_crd: str, tmp_path: Path) -> None:
    _install_pod_group_crd(kube_api, "scheduling.x-k8s.io", "v1alpha1")
    v = Variant(uuid.uuid4().hex[:5], None, cluster, kube_api, tmp_path)
    v.name = v.name.replace("-all", "-foreign")
    v.jobs = MPIJobs(kube_api, v.name)
    try:
        v.set_up()
        expected = {}
        for kind in FOREIGN_KINDS:
            job = f"fx-{kind.lower()}"
            name, make = foreign_object(kind, job)
            make(v.jobs.core, v.jobs.batch, v.name)
            v.jobs.create(small_job(job, workers=1, launcher_runs="600s"))
            expected[job] = not_managed(name, kind)
        for job, event in expected.items():
            wait_for(lambda job=job, event=event: event in v.jobs.events(job), timeout=60,
                     what=f"{event} on {job}")
        assert not v.forbidden(), v.log()[-3000:]
    finally:
        v.tear_down()


def test_the_role_grants_no_wildcards_and_exec_only_to_grant_it() -> None:
    for rule in RULES:
        assert "*" not in rule["verbs"], rule
        assert "*" not in rule["resources"], rule
        assert "secrets/get" not in rule["resources"], rule
        assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"]), rule
    exec_rules = [r for r in RULES if "pods/exec" in r["resources"]]
    assert exec_rules == [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}]



class OptInVariant(Variant):
    """The whole role, or the role without one verb (``drop``: rule index and verb), driving
    the opt-ins that delete: ``mpi-controller.io/ttl-deletes: MPIJob`` (delete on mpijobs) and
    an evicted job's launcher Job under ``CleanUpEvictedJobs`` (delete on jobs)."""

    def __init__(self, tag: str, drop: tuple[int, str] | None, cluster: Cluster, api: Any,
                 tmp: Path) -> None:
        super().__init__(tag, None, cluster, api, tmp,
                         "--feature-gates", "CleanUpEvictedJobs=true")
        self.drop = drop
        self.name = f"rbac-{tag}-opt-{drop[1] + str(drop[0]) if drop else 'all'}"
        self.jobs = MPIJobs(api, self.name)

    def rules(self) -> list[dict[str, Any]]:
        rules = super().rules()
        if self.drop is not None:
            index, verb = self.drop
            rules[index]["verbs"] = [v for v in rules[index]["verbs"] if v != verb]
        return rules

    def drive(self) -> None:
        """A finished job with ``ttl-deletes: MPIJob`` is deleted; an evicted job's launcher
        Job is deleted after the TTL."""
        body = small_job("ttl", workers=1, launcher_runs="1s",
                         run_policy={"ttlSecondsAfterFinished": 1})
        body["metadata"]["annotations"] = {"mpi-controller.io/ttl-deletes": "MPIJob"}
        self.jobs.create(body)
        self.jobs.create(small_job("ev", workers=2, launcher_runs="600s",
                                   run_policy={"ttlSecondsAfterFinished": 1}))
        if not self._wait("ev-running", self._cond_of("ev", "Running")):
            return
        self.core.patch_namespaced_pod_status("ev-worker-1", self.name, {"status": {
            "phase": "Failed", "reason": "Evicted", "message": "low on memory"}})
        self._wait("ttl-deleted", lambda: "ttl" not in self.mpijobs() or self.forbidden())
        self._wait("ev-launcher-deleted", lambda: "ev-launcher" not in self.launchers()
                   or self.forbidden())

    def mpijobs(self) -> list[str]:
        return [j["metadata"]["name"] for j in self.jobs.custom.list_namespaced_custom_object(
            "kubeflow.org", "v2beta1", self.name, "mpijobs")["items"]]

    def launchers(self) -> list[str]:
        return [j.metadata.name for j in self.jobs.batch.list_namespaced_job(self.name).items]

    def _cond_of(self, job: str, ctype: str) -> Callable[[], bool]:
        return lambda: self.jobs.conditions(job).get(ctype, ("",))[0] == "True"


def _rule_index(group: str, resource: str) -> int:
    return next(i for i, r in enumerate(RULES)
                if group in r["apiGroups"] and resource in r["resources"])


def test_the_deleting_opt_ins_need_and_have_their_delete_verbs(
        cluster: Cluster, kube_api: Any, mpijob_crd: str, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:5]
    made = [OptInVariant(tag, drop, cluster, kube_api, tmp_path) for drop in
            (None, (_rule_index("kubeflow.org", "mpijobs"), "delete"),
             (_rule_index("batch", "jobs"), "delete"))]
    try:
        for v in made:
            v.set_up()
        threads = [threading.Thread(target=v.drive, daemon=True) for v in made]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=4 * STEP_TIMEOUT + 30)
        full, no_mpijob_delete, no_job_delete = made
        assert not full.forbidden(), full.log()[-3000:]
        assert full.failed_step is None, (full.steps, full.log()[-3000:])
        assert full.steps == ["ev-running", "ttl-deleted", "ev-launcher-deleted"]
        for partial in (no_mpijob_delete, no_job_delete):
            assert partial.forbidden(), (partial.name, partial.steps)
        assert "ttl" in no_mpijob_delete.mpijobs()
        assert "ev-launcher" in no_job_delete.launchers()
        assert "ttl" not in full.mpijobs()
        assert "ev-launcher" not in full.launchers()
    finally:
        for v in made:
            v.tear_down()


# -- TrainJob -------------------------------------------------------------------------------

MPI_CHILDREN_RULE = ("", ("configmaps", "secrets"),
                     ("get", "create", "list", "watch", "update"))
"""MPIJob's ConfigMap and Secret rule, which covers TrainJob's narrower ones: left out of the
role the TrainJob variants start from."""
TJ_BASE = [r for r in ROLE["rules"]
           if (r["apiGroups"][0], tuple(r["resources"]), tuple(r["verbs"]))
           not in TRAINJOB_RULES | {MPI_CHILDREN_RULE}]
TJ_RULES = [r for r in ROLE["rules"]
            if (r["apiGroups"][0], tuple(r["resources"]), tuple(r["verbs"])) in TRAINJOB_RULES]
TJ_STEP_TIMEOUT = 120.0


class TrainJobVariant(Variant):
    """The role's base less MPIJob's ConfigMap and Secret rule, plus TrainJob's rules but
    ``skip``, running ``--enable-scheme trainjob`` in its namespace."""

    def __init__(self, tag: str, skip: int | None, cluster: Cluster, api: Any,
                 tmp: Path) -> None:
        super().__init__(tag, skip, cluster, api, tmp, "--enable-scheme", "trainjob")
        self.name = f"rbac-{tag}-tj-{'all' if skip is None else skip}"
        self.custom = client.CustomObjectsApi(api)
        self.kubeconfig = ""

    def rules(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(r) for r in TJ_BASE] + [
            copy.deepcopy(r) for i, r in enumerate(TJ_RULES) if i != self.skip]

    def set_up(self) -> None:
        super().set_up()
        self.kubeconfig = str(self.tmp / f"{self.name}.kubeconfig")

    def _trainjob(self) -> dict[str, Any]:
        found: dict[str, Any] = self.custom.get_namespaced_custom_object(
            "trainer.kubeflow.org", "v1alpha1", self.name, "trainjobs", "tj")
        return found

    def _tj_cond(self, ctype: str) -> Callable[[], bool]:
        return lambda: any(c["type"] == ctype and c["status"] == "True" for c in (
            self._trainjob().get("status") or {}).get("conditions") or [])

    def _made_suspended(self) -> bool:
        jobset = self.custom.get_namespaced_custom_object(
            "jobset.x-k8s.io", "v1alpha2", self.name, "jobsets", "tj")
        names = {c.metadata.name for c in self.core.list_namespaced_config_map(self.name).items}
        self.core.read_namespaced_secret("tj-mpi-ssh-auth", self.name)
        return (bool(jobset["spec"].get("suspend"))
                and {"tj-runtime-snapshot", "tj-mpi-hostfile"} <= names
                and self._tj_cond("Suspended")())

    def _wait_long(self, step: str, probe: Callable[[], bool]) -> bool:
        return self._wait(step, probe, timeout=TJ_STEP_TIMEOUT, interval=1.0)

    def _webhook_reads(self) -> bool:
        """The TrainJob webhook's judge, reading through a client of the role's identity: a
        TrainJob on a Volcano runtime whose pods name an existing PriorityClass is admitted."""
        import asyncio

        from mpi_controller.runtime.rest import RestClient
        from mpi_controller.trainjob.plugin import judge_trainjob

        async def judge() -> tuple[Any, Any]:
            kube = await RestClient.from_kubeconfig(self.kubeconfig, user_agent="rbac-test")
            try:
                async def lookup(resource: Any, name: str, namespace: str | None) -> Any:
                    return await kube.get(resource, name, namespace=namespace)
                return await judge_trainjob(lookup, {
                    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                    "metadata": {"name": "hook", "namespace": self.name},
                    "spec": {"runtimeRef": {"name": "gang", "apiGroup": "trainer.kubeflow.org",
                                            "kind": "TrainingRuntime"}}}, None)
            finally:
                await kube.close()
        errors, _ = asyncio.run(judge())
        self.webhook_errors = list(errors)
        return not errors

    def drive_trainjob(self, priority: str) -> None:
        self.custom.create_namespaced_custom_object(
            "trainer.kubeflow.org", "v1alpha1", self.name, "trainingruntimes", {
                "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
                "metadata": {"name": "gang"},
                "spec": {"mlPolicy": {"torch": {}}, "podGroupPolicy": {"volcano": {}},
                         "template": {"spec": {"replicatedJobs": [{
                             "name": "node", "replicas": 1, "template": {
                                 "metadata": {"labels": {
                                     "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                                 "spec": {"template": {"spec": {
                                     "priorityClassName": priority,
                                     "containers": [{"name": "node",
                                                     "image": "busybox"}]}}}}}]}}}})
        if not self._wait_long("tj-webhook", self._webhook_reads):
            return
        self.custom.create_namespaced_custom_object(
            "trainer.kubeflow.org", "v1alpha1", self.name, "trainjobs", {
                "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "tj"},
                "spec": {"runtimeRef": {"name": "deepspeed-distributed"}, "suspend": True,
                         "trainer": {"numNodes": 2}}})
        if not self._wait_long("tj-suspended", self._made_suspended):
            return
        self.custom.patch_namespaced_custom_object(
            "trainer.kubeflow.org", "v1alpha1", self.name, "trainjobs", "tj",
            {"spec": {"suspend": False}})
        self._wait_long("tj-complete", self._tj_cond("Complete"))


@pytest.fixture
def trainjob_variants(tmp_path: Path) -> Iterator[tuple[list[TrainJobVariant], str]]:
    from tests.addons import install_trainer_crds, open_addons
    from tests.integration.test_trainjob import _kubectl

    addons = open_addons()
    try:
        addons.require("jobset")
        install_trainer_crds(addons)
        _kubectl(addons, "apply", "--server-side", "--force-conflicts", "-k",
                 str(REPO / "deploy" / "runtimes"))
        cluster = Cluster(kubeconfig=str(addons.kubeconfig), local=True)
        tag = uuid.uuid4().hex[:5]
        priority = f"rbac-{tag}-high"
        client.SchedulingV1Api(addons.api).create_priority_class(
            {"metadata": {"name": priority}, "value": 10})
        made = [TrainJobVariant(tag, skip, cluster, addons.api, tmp_path)
                for skip in [None, *range(len(TJ_RULES))]]
        try:
            for v in made:
                v.set_up()
            yield made, priority
        finally:
            for v in made:
                v.tear_down()
            with contextlib.suppress(client.ApiException):
                client.SchedulingV1Api(addons.api).delete_priority_class(priority)
    finally:
        addons.api.close()


def test_every_trainjob_rule_is_needed(
        trainjob_variants: tuple[list[TrainJobVariant], str]) -> None:
    variants, priority = trainjob_variants
    threads = [threading.Thread(target=v.drive_trainjob, args=(priority,), daemon=True)
               for v in variants]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=3 * TJ_STEP_TIMEOUT + 30)
    full, partial = variants[0], variants[1:]
    assert full.failed_step is None, (full.steps, getattr(full, "webhook_errors", None),
                                      full.log()[-3000:])
    assert full.steps == ["tj-webhook", "tj-suspended", "tj-complete"]
    assert not full.forbidden(), full.log()[-3000:]
    spare = []
    for v in partial:
        assert v.skip is not None
        if v.failed_step is None and not v.forbidden() and not v.exited():
            spare.append(_rule_id(TJ_RULES[v.skip]))
    assert spare == [], f"TrainJob rules the controller did without: {spare}"

