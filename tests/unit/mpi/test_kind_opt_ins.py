"""The opt-ins of mpi_controller.mpi.features in the MPIJob sync, on the in-memory API: each
test shows upstream's behaviour (kubeflow/mpi-operator v0.8.2, the issue cited) with the opt-in
off, and the fix with it on."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.kube.resources import CONFIGMAPS, JOBS, PODS, Resource
from mpi_controller.mpi.decisions import HOSTS_HOLD
from mpi_controller.mpi.features import (
    SSH_READINESS_PORT_ANNOTATION,
    TTL_DELETES_ANNOTATION,
    Features,
)
from mpi_controller.mpi.options import MPIJOBS
from mpi_controller.runtime.controller import Result
from mpi_controller.runtime.metrics import REGISTRY
from tests.engine_harness import EngineHarness, pod_group_resources
from tests.unit.mpi.test_kind import (
    NS,
    add_launcher_pod,
    conditions,
    finish_launcher,
    job,
    set_pod,
    started,
)

WFWR = "WaitForWorkersReady"
SELECTOR = ("training.kubeflow.org/job-name=pi,training.kubeflow.org/job-role=worker,"
            "training.kubeflow.org/operator-name=mpi-operator")


def annotated(body: dict[str, Any], **annotations: str) -> dict[str, Any]:
    body["metadata"]["annotations"] = dict(annotations)
    return body


def launcher_created(h: EngineHarness) -> bool:
    return ("create", "jobs", NS, "pi-launcher") in h.writes()


def worker_names(h: EngineHarness) -> list[str]:
    return sorted(p["metadata"]["name"] for p in h.api.objects(PODS, NS)
                  if "worker" in p["metadata"]["name"])


def must(h: EngineHarness, resource: Resource, name: str) -> dict[str, Any]:
    obj = h.stored(resource, name)
    assert obj is not None, f"{resource.plural}/{name} is not stored"
    return obj


async def sync_result(h: EngineHarness, name: str = "pi") -> Result | None:
    await h.settle()
    result = await h.controller.sync(f"{NS}/{name}")
    await h.settle()
    return result


# -- 1. SSH readiness (#386) ----------------------------------------------------------------


async def test_without_the_annotation_the_launcher_starts_with_the_workers() -> None:
    """Upstream: AtStartup creates the launcher in the first sync; the workers have no probe,
    so nothing waits for their sshd."""
    async with EngineHarness() as h:
        h.create(job())
        h.mark()
        await h.sync("pi")
        assert launcher_created(h)
        worker = h.stored(PODS, "pi-worker-0")
        assert worker is not None
        assert "readinessProbe" not in worker["spec"]["containers"][0]


async def test_with_the_annotation_the_launcher_waits_for_sshd_on_every_worker() -> None:
    async with EngineHarness() as h:
        h.create(annotated(job(), **{SSH_READINESS_PORT_ANNOTATION: "2222"}))
        h.mark()
        await h.sync("pi")
        assert not launcher_created(h)
        worker = h.stored(PODS, "pi-worker-0")
        assert worker is not None
        assert worker["spec"]["containers"][0]["readinessProbe"] == {
            "tcpSocket": {"port": 2222}, "periodSeconds": 1}
        set_pod(h, "pi-worker-0", "Running", ready=True)
        set_pod(h, "pi-worker-1", "Running", ready=False)  # sshd not listening yet
        h.mark()
        await h.sync("pi")
        assert not launcher_created(h)
        cm = h.stored(CONFIGMAPS, "pi-config")
        assert cm is not None  # worker-0 waits for worker-1 (decisions.hosts_hold) ...
        assert cm["data"]["discover_hosts.sh"] == "#!/bin/sh\n"
        h.clock.advance(HOSTS_HOLD)
        await h.sync("pi")
        cm = h.stored(CONFIGMAPS, "pi-config")
        assert cm is not None  # ... until the hold ends; the Running worker not Ready unlisted
        assert cm["data"]["discover_hosts.sh"] == "#!/bin/sh\necho pi-worker-0.pi.ns.svc\n"
        set_pod(h, "pi-worker-1", "Running", ready=True)
        h.mark()
        await h.sync("pi")
        assert launcher_created(h)


# -- 2. WaitForWorkersReady: gang scheduling (#608), resume (#615) ---------------------------


async def test_gang_scheduling_with_wait_for_workers_ready_sizes_the_group_by_the_workers(
        ) -> None:
    """Upstream asks the gang scheduler for workers + 1 pods while the launcher is created only
    after the workers are ready: the two workers can never be scheduled (#608)."""
    volcano = pod_group_resources()[0]
    for features, min_member in ((Features(), 3),
                                 (Features(gang_wait_for_workers_ready=True), 2)):
        async with EngineHarness(gang_scheduling="volcano", features=features) as h:
            h.create(job(launcherCreationPolicy=WFWR))
            await h.sync("pi")
            group = h.stored(volcano, "pi")
            assert group is not None
            assert group["spec"]["minMember"] == min_member
            assert worker_names(h) == ["pi-worker-0", "pi-worker-1"]
            assert h.stored(JOBS, "pi-launcher") is None


async def test_at_startup_gang_sizing_counts_the_launcher_with_the_gate_too() -> None:
    volcano = pod_group_resources()[0]
    async with EngineHarness(gang_scheduling="volcano",
                             features=Features(gang_wait_for_workers_ready=True)) as h:
        h.create(job())
        await h.sync("pi")
        group = must(h, volcano, "pi")
        assert group["spec"]["minMember"] == 3


async def resume_suspended(h: EngineHarness) -> None:
    """A job created suspended with WaitForWorkersReady, then resumed; h.mark() before the
    resuming sync."""
    h.create(job(launcherCreationPolicy=WFWR,
                 run_policy={"suspend": True}))
    await h.sync("pi")
    launcher = must(h, JOBS, "pi-launcher")
    assert launcher["spec"]["suspend"] is True  # as upstream
    h.api.modify(MPIJOBS, "pi", lambda j: j["spec"]["runPolicy"].update(suspend=False),
                 namespace=NS)
    h.mark()
    await h.sync("pi")


async def test_upstream_resumes_the_launcher_before_any_worker_is_ready() -> None:
    """#615: the launcher Job is unsuspended in the sync that creates the workers."""
    async with EngineHarness() as h:
        await resume_suspended(h)
        writes = h.writes()
        assert ("create", "pods", NS, "pi-worker-0") in writes
        assert ("update", "jobs", NS, "pi-launcher") in writes
        launcher = must(h, JOBS, "pi-launcher")
        assert launcher["spec"]["suspend"] is False


async def test_with_the_gate_the_resumed_launcher_waits_for_ready_workers() -> None:
    async with EngineHarness(features=Features(launcher_waits_on_resume=True)) as h:
        await resume_suspended(h)
        assert ("update", "jobs", NS, "pi-launcher") not in h.writes()
        set_pod(h, "pi-worker-0", "Running", ready=True)
        h.mark()
        await h.sync("pi")
        assert ("update", "jobs", NS, "pi-launcher") not in h.writes()
        set_pod(h, "pi-worker-1", "Running", ready=True)
        h.mark()
        await h.sync("pi")
        assert ("update", "jobs", NS, "pi-launcher") in h.writes()
        launcher = must(h, JOBS, "pi-launcher")
        assert launcher["spec"]["suspend"] is False
        assert ("Suspended", "False", "MPIJobResumed") in conditions(h)


# -- 3. TTL of the whole MPIJob (#644) -------------------------------------------------------


async def finished_job(h: EngineHarness, body: dict[str, Any]) -> None:
    """``body`` created, its launcher Complete at 00:01:00, the finished status written."""
    await started(h, body)
    finish_launcher(h)
    await h.sync("pi")
    assert h.job("pi")["status"]["completionTime"] == "2026-01-01T00:01:00Z"
    h.mark()


async def test_upstream_ttl_only_reaches_the_launcher_job() -> None:
    async with EngineHarness() as h:
        await finished_job(h, job(run_policy={"ttlSecondsAfterFinished": 30}))
        launcher = must(h, JOBS, "pi-launcher")
        assert launcher["spec"]["ttlSecondsAfterFinished"] == 30
        h.clock.advance(600)
        assert await sync_result(h) is None
        assert [w for w in h.writes() if w[1] == "mpijobs"] == []
        assert h.job("pi")["metadata"]["name"] == "pi"


async def test_with_the_annotation_the_ttl_deletes_the_mpijob() -> None:
    async with EngineHarness() as h:
        await finished_job(h, annotated(job(run_policy={"ttlSecondsAfterFinished": 30}),
                                        **{TTL_DELETES_ANNOTATION: "MPIJob"}))
        launcher = must(h, JOBS, "pi-launcher")
        assert "ttlSecondsAfterFinished" not in launcher["spec"]
        # now = 00:00:00 + the manual clock; completion at 00:01:00, TTL 30 s.
        assert await sync_result(h) == Result(requeue_after=90.0)
        assert [w for w in h.writes() if w[1] == "mpijobs"] == []
        h.clock.advance(89)
        assert await sync_result(h) == Result(requeue_after=1.0)
        h.clock.advance(1)
        assert await sync_result(h) is None
        assert h.writes()[-1] == ("delete", "mpijobs", NS, "pi")
        assert h.api.stored(MPIJOBS, "pi", namespace=NS) is None
        assert ("Normal", "SuccessfulDeleteJob", "Deleted job: pi") in h.events()


async def test_the_ttl_never_deletes_a_newer_job_of_the_same_name() -> None:
    """The delete carries the finished job's uid as a precondition."""
    async with EngineHarness() as h:
        await finished_job(h, annotated(job(run_policy={"ttlSecondsAfterFinished": 0}),
                                        **{TTL_DELETES_ANNOTATION: "MPIJob"}))
        h.clock.advance(60)
        await h.pause(h.kind.mpijobs)
        h.api.remove(MPIJOBS, "pi", namespace=NS)
        newer = h.create(job())
        assert await sync_result(h) is None  # the 409 ends the sync quietly
        assert h.job("pi")["metadata"]["uid"] == newer["metadata"]["uid"]


# -- 4. eviction (#647) and cleanPodPolicy All (#643) ----------------------------------------


def evict(h: EngineHarness, name: str) -> None:
    set_pod(h, name, "Failed", reason="Evicted",
            message="The node was low on resource: memory.")


async def evicted_job(h: EngineHarness) -> None:
    """Running workers and launcher (pod), then worker 1 evicted and a sync."""
    await started(h, job(launcher_runs="600s", run_policy={"ttlSecondsAfterFinished": 30}))
    set_pod(h, "pi-worker-0", "Running", ready=True)
    set_pod(h, "pi-worker-1", "Running", ready=True)
    add_launcher_pod(h, "Running")
    await h.sync("pi")
    evict(h, "pi-worker-1")
    await h.sync("pi")
    assert ("Failed", "True", "MPIJobEvicted") in conditions(h)
    h.mark()


async def test_upstream_leaves_an_evicted_jobs_workers_and_launcher_running() -> None:
    async with EngineHarness() as h:
        await evicted_job(h)
        assert "completionTime" not in h.job("pi")["status"]
        h.clock.advance(600)
        await h.sync("pi")
        assert [w for w in h.writes() if w[0] == "delete"] == []
        assert h.stored(PODS, "pi-worker-0") is not None
        launcher = must(h, JOBS, "pi-launcher")
        assert "suspend" not in launcher["spec"]


async def test_with_the_gate_an_evicted_job_is_cleaned_up_and_its_ttl_applies() -> None:
    async with EngineHarness(features=Features(clean_up_evicted_jobs=True)) as h:
        await evicted_job(h)
        assert h.job("pi")["status"]["completionTime"] == "2026-01-01T00:00:00Z"
        assert await sync_result(h) == Result(requeue_after=30.0)
        # cleanPodPolicy Running: the running worker goes, the evicted (Failed) one stays.
        assert sorted(h.writes()) == [
            ("delete", "pods", NS, "pi-worker-0"), ("update", "jobs", NS, "pi-launcher"),
            ("update", "mpijobs/status", NS, "pi")]
        launcher = must(h, JOBS, "pi-launcher")
        assert launcher["spec"]["suspend"] is True
        assert h.job("pi")["status"]["replicaStatuses"]["Worker"] == {}
        h.clock.advance(30)
        h.mark()
        assert await sync_result(h) is None
        assert h.writes() == [("delete", "jobs", NS, "pi-launcher")]
        h.mark()
        await h.sync("pi")
        assert h.writes() == []


async def finished_with_all(h: EngineHarness) -> None:
    await started(h, job(run_policy={"cleanPodPolicy": "All"}))
    add_launcher_pod(h, "Succeeded")
    finish_launcher(h)
    await h.sync("pi")
    h.mark()
    await h.sync("pi")


async def test_upstream_clean_pod_policy_all_keeps_the_launcher_pod() -> None:
    async with EngineHarness() as h:
        await finished_with_all(h)
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, "pi-worker-0"), ("delete", "pods", NS, "pi-worker-1")]
        assert h.stored(PODS, "pi-launcher-x") is not None


async def test_with_the_gate_clean_pod_policy_all_deletes_the_launcher_pod() -> None:
    async with EngineHarness(features=Features(clean_pod_policy_all_launcher=True)) as h:
        await finished_with_all(h)
        assert sorted(w for w in h.writes() if w[0] == "delete") == [
            ("delete", "pods", NS, "pi-launcher-x"),
            ("delete", "pods", NS, "pi-worker-0"), ("delete", "pods", NS, "pi-worker-1")]
        assert h.stored(PODS, "pi-launcher-x") is None
        # No expectation waits for the launcher pod's deletion (the job does not control it).
        assert h.controller.expectations.satisfied_expectations(f"{NS}/pi")


# -- 5. failure details (#90) ----------------------------------------------------------------


async def failed_after_oom(h: EngineHarness) -> dict[str, Any]:
    await started(h)
    set_pod(h, "pi-worker-0", "Running", ready=True)
    h.api.modify(PODS, "pi-worker-1", lambda p: p.update(status={
        "phase": "Failed", "containerStatuses": [{"name": "worker", "restartCount": 0, "state": {
            "terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}), namespace=NS)

    def fail(launcher: dict[str, Any]) -> None:
        launcher["status"] = {"failed": 7, "conditions": [
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit"}]}
    h.api.modify(JOBS, "pi-launcher", fail, namespace=NS)
    await h.sync("pi")
    return next(c for c in h.job("pi")["status"]["conditions"] if c["type"] == "Failed")


async def test_upstream_failure_says_only_that_the_launcher_job_failed() -> None:
    async with EngineHarness() as h:
        failed = await failed_after_oom(h)
        assert (failed["reason"], failed["message"]) == (
            "BackoffLimitExceeded", "Job has reached the specified backoff limit")


async def test_with_the_gate_the_failure_names_the_oom_killed_worker() -> None:
    async with EngineHarness(features=Features(failure_details=True)) as h:
        failed = await failed_after_oom(h)
        message = ("Job has reached the specified backoff limit; failed: worker pod "
                   "pi-worker-1: container worker terminated with exit code 137 (OOMKilled)")
        assert (failed["reason"], failed["message"]) == ("BackoffLimitExceeded", message)
        assert ("Warning", "BackoffLimitExceeded", message) in h.events()


# -- 6. job metrics (#808) -------------------------------------------------------------------


def sample(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


async def test_job_info_outlives_the_job_without_the_gate() -> None:
    async with EngineHarness(namespace="m-off") as h:
        h.create(job())
        await h.sync("pi")
        info = {"launcher": "pi-launcher", "namespace": "m-off"}
        assert sample("mpi_operator_job_info", **info) == 1
        h.api.remove(MPIJOBS, "pi", namespace="m-off")
        await h.settle()
        assert sample("mpi_operator_job_info", **info) == 1
        assert sample("mpi_operator_jobs", namespace="m-off", phase="Created") is None


async def test_with_the_gate_series_follow_the_job_and_its_duration_is_observed_once(
        ) -> None:
    ns = "m-on"
    async with EngineHarness(namespace=ns, features=Features(job_metrics=True)) as h:
        h.create(job())
        await h.sync("pi")
        info = {"launcher": "pi-launcher", "namespace": ns}
        assert sample("mpi_operator_job_info", **info) == 1
        assert sample("mpi_operator_jobs", namespace=ns, phase="Created") == 1
        h.clock.advance(40)  # started at 00:00:00; the launcher completes at 00:01:00
        h.api.modify(JOBS, "pi-launcher", lambda j: j.update(status={
            "conditions": [{"type": "Complete", "status": "True"}], "succeeded": 1,
            "completionTime": "2026-01-01T00:01:00Z"}), namespace=ns)
        count = {"namespace": ns, "result": "Succeeded"}
        before = sample("mpi_operator_job_duration_seconds_count", **count) or 0
        await h.sync("pi")
        assert sample("mpi_operator_job_duration_seconds_count", **count) == before + 1
        assert sample("mpi_operator_job_duration_seconds_bucket", le="60.0", **count) == (
            before + 1)
        assert sample("mpi_operator_jobs", namespace=ns, phase="Created") == 0
        assert sample("mpi_operator_jobs", namespace=ns, phase="Succeeded") == 1
        await h.sync("pi")  # finished: cleanup and no second observation
        await h.sync("pi")
        assert sample("mpi_operator_job_duration_seconds_count", **count) == before + 1
        h.api.remove(MPIJOBS, "pi", namespace=ns)
        await h.settle()
        assert sample("mpi_operator_job_info", **info) is None
        assert sample("mpi_operator_jobs", namespace=ns, phase="Succeeded") == 0


async def test_with_the_gate_a_job_deleted_during_its_sync_leaves_no_series() -> None:
    """The job is deleted while its sync waits on a write: the series it would record after
    the deletion (job_info, phase) are not recorded."""
    from mpi_controller.runtime.errors import ApiError

    ns = "m-race"
    # (the worker's count is written at once, not held for the launcher's start)
    async with EngineHarness(namespace=ns, features=Features(job_metrics=True),
                             status_counts_hold=0.0) as h:
        h.create(job())
        await h.sync("pi")
        assert sample("mpi_operator_job_info", launcher="pi-launcher", namespace=ns) == 1
        h.api.modify(PODS, "pi-worker-0", lambda p: p.update(status={"phase": "Running"}),
                     namespace=ns)

        async def delete_the_job() -> None:
            h.api.remove(MPIJOBS, "pi", namespace=ns)
            await h.settle()

        h.api.interceptor = lambda req: (delete_the_job() if req.verb == "update"
                                         and req.resource == CONFIGMAPS else None)
        # discover_hosts.sh changes: the ConfigMap update; the status write then finds the
        # job gone.
        with pytest.raises(ApiError, match=r"^404 NotFound"):
            await h.sync("pi")
        assert sample("mpi_operator_job_info", launcher="pi-launcher", namespace=ns) is None
        assert not any(sample("mpi_operator_jobs", namespace=ns, phase=phase)
                       for phase in ("Created", "Running"))


# -- 7. the scale subresource's selector (#278) ----------------------------------------------


async def test_the_worker_selector_is_in_the_status_only_with_the_gate() -> None:
    for features, worker in ((Features(), {}),
                             (Features(scale_selector=True), {"selector": SELECTOR})):
        async with EngineHarness(features=features) as h:
            h.create(job())
            await h.sync("pi")
            assert h.job("pi")["status"]["replicaStatuses"]["Worker"] == worker


async def test_a_scaled_job_gets_new_workers_and_keeps_its_selector() -> None:
    async with EngineHarness(features=Features(scale_selector=True),
                             status_counts_hold=0.0) as h:  # a count is written at once
        await started(h)
        h.api.modify(MPIJOBS, "pi", lambda j: j["spec"]["mpiReplicaSpecs"]["Worker"].update(
            replicas=3), namespace=NS)
        await h.sync("pi")
        assert worker_names(h) == ["pi-worker-0", "pi-worker-1", "pi-worker-2"]
        set_pod(h, "pi-worker-2", "Running", ready=True)
        await h.sync("pi")
        assert h.job("pi")["status"]["replicaStatuses"]["Worker"] == {
            "active": 1, "selector": SELECTOR}
