"""The TrainJob kind on the engine (``mpi_controller/trainjob/kind.py``), as ``mpi-controller
run --enable-scheme trainjob`` wires it, on the in-memory API: the writes of each sync and the
status (Trainer v2.3.0 ``pkg/controller/trainjob_controller.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.kube.resources import CONFIGMAPS, SECRETS
from mpi_controller.trainjob.kind import (
    CLUSTER_RUNTIMES,
    JOBSETS,
    RUNTIMES,
    ResourcesFailed,
    runtime_not_found,
)
from tests.engine_harness import EngineHarness

TORCH = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
         "metadata": {"name": "torch-distributed"},
         "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {
             "replicatedJobs": [{"name": "node", "template": {
                 "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step":
                                         "trainer"}},
                 "spec": {"template": {"spec": {"containers": [
                     {"name": "node", "image": "pytorch"}]}}}}}]}}}}
MPI = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
       "metadata": {"name": "mpi", "namespace": "ns"},
       "spec": {"mlPolicy": {"numNodes": 1, "mpi": {
           "numProcPerNode": 1, "mpiImplementation": "OpenMPI",
           "sshAuthMountPath": "/root/.ssh", "runLauncherAsNode": False}},
           "template": {"spec": {"replicatedJobs": [
               {"name": "launcher", "template": {
                   "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step":
                                           "trainer"}},
                   "spec": {"template": {"spec": {"containers": [
                       {"name": "node", "image": "mpi"}]}}}}},
               {"name": "node", "template": {"spec": {"template": {"spec": {
                   "containers": [{"name": "node", "image": "mpi"}]}}}}}]}}}}


def harness(**kw: Any) -> EngineHarness:
    h = EngineHarness(schemes=("trainjob",), **kw)
    h.api.register(RUNTIMES)
    h.api.register(CLUSTER_RUNTIMES)
    h.api.add(CLUSTER_RUNTIMES, TORCH)
    return h


def trainjob(name: str = "pi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "uid": f"uid-{name}",
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec}}


async def test_the_first_sync_creates_the_jobset_and_completion_follows_it() -> None:
    async with harness() as h:
        h.create(trainjob(trainer={"numNodes": 2}))
        h.mark()
        await h.sync("pi", "TrainJob")
        assert h.writes() == [("create", "configmaps", "ns", "pi-runtime-snapshot"),
                              ("create", "jobsets", "ns", "pi")]
        jobset = h.stored(JOBSETS, "pi")
        assert jobset is not None
        node = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]
        assert (node["parallelism"], node["completions"]) == (2, 2)
        assert jobset["spec"]["suspend"] is False
        assert "status" not in h.job("pi", "TrainJob")

        def completed(obj: dict[str, Any]) -> None:
            obj["status"] = {"conditions": [{
                "type": "Completed", "status": "True", "reason": "AllJobsCompleted",
                "message": "jobset completed successfully",
                "lastTransitionTime": "2026-01-01T00:05:00Z"}],
                "replicatedJobsStatus": [{"name": "node", "ready": 0, "succeeded": 1,
                                          "failed": 0, "active": 0, "suspended": 0}]}
        h.api.modify(JOBSETS, "pi", completed, namespace="ns")
        h.mark()
        await h.sync("pi", "TrainJob")
        assert h.writes() == [("update", "trainjobs/status", "ns", "pi")]
        assert h.job("pi", "TrainJob")["status"] == {
            "conditions": [{"type": "Complete", "status": "True", "reason": "AllJobsCompleted",
                            "message": "jobset completed successfully",
                            "lastTransitionTime": "2026-01-01T00:05:00Z"}],
            "jobsStatus": [{"name": "node", "ready": 0, "succeeded": 1, "failed": 0,
                            "active": 0, "suspended": 0}]}
        h.mark()
        await h.sync("pi", "TrainJob")
        assert h.writes() == []  # finished: nothing more


def counted(active: int = 0, ready: int = 0, succeeded: int = 0, *,
            completed: bool = False) -> Any:
    """A change to the JobSet ``pi``'s status: its one replicated Job ``node`` counted so,
    and ``Completed`` when asked."""
    def change(obj: dict[str, Any]) -> None:
        obj["status"] = {"replicatedJobsStatus": [{
            "name": "node", "ready": ready, "succeeded": succeeded, "failed": 0,
            "active": active, "suspended": 0}]}
        if completed:
            obj["status"]["conditions"] = [{
                "type": "Completed", "status": "True", "reason": "AllJobsCompleted",
                "message": "jobset completed successfully",
                "lastTransitionTime": "2026-01-01T00:05:00Z"}]
    return change


async def test_counts_in_between_wait_for_the_next_change_or_the_end_of_the_hold() -> None:
    """The JobSet controller writes its counts one step at a time (Jobs made, pods ready; pods
    ended, the Job ended, Completed): while they are in between, a change of counts alone waits
    (at most the engine's hold, 1 s); at rest, or with a condition, it is written at once."""
    async with harness() as h:
        h.create(trainjob(trainer={"numNodes": 2}))
        await h.sync("pi", "TrainJob")
        h.mark()
        h.api.modify(JOBSETS, "pi", counted(), namespace="ns")           # the Jobs are coming
        result = await h.sync("pi", "TrainJob")
        assert (h.writes(), result.requeue_after) == ([], 1.0)
        h.clock.advance(0.4)
        h.api.modify(JOBSETS, "pi", counted(active=1), namespace="ns")   # pods starting
        result = await h.sync("pi", "TrainJob")
        assert (h.writes(), result.requeue_after) == ([], 0.6)
        h.clock.advance(0.6)                                               # the hold ends
        await h.sync("pi", "TrainJob")
        assert h.writes() == [("update", "trainjobs/status", "ns", "pi")]
        assert h.job("pi", "TrainJob")["status"]["jobsStatus"][0]["active"] == 1
        h.mark()
        h.api.modify(JOBSETS, "pi", counted(active=1, ready=1), namespace="ns")  # at rest
        result = await h.sync("pi", "TrainJob")
        assert h.writes() == [("update", "trainjobs/status", "ns", "pi")]
        assert result is None
        h.mark()
        h.api.modify(JOBSETS, "pi", counted(ready=1), namespace="ns")    # pods ended
        result = await h.sync("pi", "TrainJob")
        assert (h.writes(), result.requeue_after) == ([], 1.0)
        h.api.modify(JOBSETS, "pi", counted(succeeded=1, completed=True), namespace="ns")
        await h.sync("pi", "TrainJob")
        assert h.writes() == [("update", "trainjobs/status", "ns", "pi")]
        status = h.job("pi", "TrainJob")["status"]
        assert [c["type"] for c in status["conditions"]] == ["Complete"]
        assert status["jobsStatus"] == [{"name": "node", "ready": 0, "succeeded": 1,
                                         "failed": 0, "active": 0, "suspended": 0}]


async def test_suspended_then_resumed() -> None:
    async with harness() as h:
        h.create(trainjob(suspend=True))
        await h.sync("pi", "TrainJob")
        jobset = h.stored(JOBSETS, "pi")
        assert jobset is not None
        assert jobset["spec"]["suspend"] is True
        [suspended] = h.job("pi", "TrainJob")["status"]["conditions"]
        assert (suspended["type"], suspended["status"], suspended["reason"]) == (
            "Suspended", "True", "Suspended")
        # Resuming applies the JobSet server-side (tests/integration/test_trainjob.py: the
        # in-memory API has no server-side apply).


async def test_a_missing_runtime_is_a_warning_no_jobset_and_a_retry() -> None:
    async with harness() as h:
        h.create({**trainjob(), "spec": {"runtimeRef": {"name": "nope"}}})
        h.mark()
        with pytest.raises(ResourcesFailed, match='"nope" not found'):
            await h.sync("pi", "TrainJob")
        await h.settle()
        assert h.writes() == []
        assert h.events() == [(
            "Warning", "TrainJobResourcesCreationFailed",
            "TrainJob resources reconciliation failed: not found ClusterTrainingRuntime "
            'specified in TrainJob: ClusterTrainingRuntime.trainer.kubeflow.org "nope" not '
            "found")]


def test_a_missing_runtime_is_worded_as_trainer_words_it_per_kind() -> None:
    assert runtime_not_found({"name": "r", "kind": "TrainingRuntime"}) == (
        'TrainingRuntime specified in TrainJob is not found: TrainingRuntime.'
        'trainer.kubeflow.org "r" not found')
    assert runtime_not_found({"name": "c", "kind": "ClusterTrainingRuntime"}) == (
        'not found ClusterTrainingRuntime specified in TrainJob: ClusterTrainingRuntime.'
        'trainer.kubeflow.org "c" not found')


async def test_an_mpi_trainjob_writes_its_secret_and_hostfile_first() -> None:
    async with harness() as h:
        h.api.add(RUNTIMES, MPI)
        h.create({**trainjob("m"), "spec": {
            "runtimeRef": {"name": "mpi", "kind": "TrainingRuntime"},
            "trainer": {"numNodes": 2}}})
        h.mark()
        await h.sync("m", "TrainJob")
        assert [w[:2] for w in h.writes()] == [("create", "configmaps"), ("create", "secrets"),
                                               ("create", "configmaps"), ("create", "jobsets")]
        hostfile = h.stored(CONFIGMAPS, "m-mpi-hostfile")
        assert hostfile is not None
        assert hostfile["data"] == {"hostfile": "m-node-0-0.m slots=1\nm-node-0-1.m slots=1\n"}
        secret = h.stored(SECRETS, "m-mpi-ssh-auth")
        assert secret is not None
        assert secret["type"] == "kubernetes.io/ssh-auth"


async def test_past_the_deadline_it_fails_and_the_jobset_is_deleted() -> None:
    async with harness() as h:
        h.create(trainjob(activeDeadlineSeconds=60))
        result = await h.sync("pi", "TrainJob")
        assert result.requeue_after == 60.0
        h.clock.advance(61)
        h.mark()
        await h.sync("pi", "TrainJob")
        assert [w[:2] for w in h.writes()] == [("delete", "jobsets"),
                                               ("update", "trainjobs/status")]
        [failed] = h.job("pi", "TrainJob")["status"]["conditions"]
        assert (failed["type"], failed["reason"], failed["message"]) == (
            "Failed", "DeadlineExceeded", "TrainJob exceeded its active deadline")


def _suspended_coscheduled_trainjob(h: EngineHarness) -> None:
    """The suspended TrainJob ``g`` of 2 nodes on ``gang``, a coscheduling runtime (the
    PodGroup API registered)."""
    from mpi_controller.trainjob.podgroups import PLUGINS_POD_GROUPS

    h.api.register(PLUGINS_POD_GROUPS)
    gang = {**TORCH, "metadata": {"name": "gang"},
            "spec": {**TORCH["spec"], "podGroupPolicy": {"coscheduling": {}}}}
    h.api.add(CLUSTER_RUNTIMES, gang)
    h.create({**trainjob("g"), "spec": {"runtimeRef": {"name": "gang"}, "suspend": True,
                                        "trainer": {"numNodes": 2}}})


async def test_a_coscheduled_trainjob_writes_its_podgroup_before_the_jobset() -> None:
    """Trainer v2.3.0's CoScheduling ``EnforcePodGroupPolicy`` and ``Build``: the pods' label,
    and the PodGroup (2 members, the default timeout) before the JobSet."""
    from mpi_controller.trainjob.podgroups import PLUGINS_POD_GROUPS

    async with harness() as h:
        _suspended_coscheduled_trainjob(h)
        h.mark()
        await h.sync("g", "TrainJob")
        assert [w[:3] for w in h.writes()][1:3] == [("create", "podgroups", "ns"),
                                                    ("create", "jobsets", "ns")]
        group = h.stored(PLUGINS_POD_GROUPS, "g")
        assert group is not None
        assert group["spec"] == {"minMember": 2, "minResources": {}, "scheduleTimeoutSeconds": 60}
        jobset = h.stored(JOBSETS, "g")
        assert jobset is not None
        assert jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"][
            "metadata"]["labels"] == {"scheduling.x-k8s.io/pod-group": "g"}


async def test_a_running_trainjobs_deleted_podgroup_is_made_again_and_left_alone_else(
        ) -> None:
    """Upstream's ``Build`` returns the PodGroup when it is missing (so a deleted one is made
    again, the TrainJob running or not) and, while the TrainJob runs, leaves an existing one
    as it is."""
    from mpi_controller.trainjob.podgroups import PLUGINS_POD_GROUPS

    async with harness() as h:
        h.api.register(PLUGINS_POD_GROUPS)
        gang = {**TORCH, "metadata": {"name": "gang"},
                "spec": {**TORCH["spec"], "podGroupPolicy": {"coscheduling": {}}}}
        h.api.add(CLUSTER_RUNTIMES, gang)
        h.create({**trainjob("g"), "spec": {"runtimeRef": {"name": "gang"},
                                            "trainer": {"numNodes": 2}}})
        await h.sync("g", "TrainJob")
        h.api.modify(PLUGINS_POD_GROUPS, "g", lambda g: g["spec"].update(minMember=7),
                     namespace="ns")
        h.mark()
        await h.sync("g", "TrainJob")
        assert [w[:2] for w in h.writes()] == []
        await h.api.delete(PLUGINS_POD_GROUPS, "g", namespace="ns")
        h.mark()
        await h.sync("g", "TrainJob")
        assert [w[:2] for w in h.writes()] == [("create", "podgroups")]
        group = h.stored(PLUGINS_POD_GROUPS, "g")
        assert group is not None
        assert group["spec"]["minMember"] == 2


async def test_a_suspended_trainjobs_podgroup_spec_is_put_back() -> None:
    """While suspended upstream applies the PodGroup on every reconcile: a changed spec is
    replaced by the desired one (here with an update, before the JobSet is applied)."""
    import pytest

    from mpi_controller.trainjob.podgroups import PLUGINS_POD_GROUPS

    async with harness() as h:
        _suspended_coscheduled_trainjob(h)
        await h.sync("g", "TrainJob")
        h.api.modify(PLUGINS_POD_GROUPS, "g", lambda g: g["spec"].update(minMember=7),
                     namespace="ns")
        h.mark()
        with pytest.raises(NotImplementedError):  # the JobSet's server-side apply, next
            await h.sync("g", "TrainJob")
        assert [w[:2] for w in h.writes()] == [("update", "podgroups"), ("patch", "jobsets")]
        group = h.stored(PLUGINS_POD_GROUPS, "g")
        assert group is not None
        assert group["spec"] == {"minMember": 2, "minResources": {}, "scheduleTimeoutSeconds": 60}


async def test_a_settled_status_writes_echo_starts_no_sync_and_would_write_nothing() -> None:
    """Each status write of a running TrainJob is settled (engine ``StatusWriteGuard``): its
    update event starts no sync, and a sync of the same JobSet in its place writes nothing;
    a suspended TrainJob's write is not settled."""
    async with harness(status_counts_hold=0.0) as h:
        controller = h.controller_for("TrainJob")
        quiet: list[bool] = []
        quiet_echo = controller._guard.quiet_echo

        def spy(key: str, old: Any, new: Any) -> bool:
            quiet.append(quiet_echo(key, old, new))
            return quiet[-1]

        controller._guard.quiet_echo = spy  # type: ignore[method-assign]
        h.create(trainjob(trainer={"numNodes": 2}))
        await h.sync("pi", "TrainJob")
        for change in (counted(active=2, ready=2), counted(succeeded=2, completed=True)):
            h.api.modify(JOBSETS, "pi", change, namespace="ns")
            quiet.clear()
            h.mark()
            await h.sync("pi", "TrainJob")
            assert h.writes() == [("update", "trainjobs/status", "ns", "pi")]
            assert quiet == [True]
            h.mark()
            await h.sync("pi", "TrainJob")
            assert h.writes() == []
        h.api.modify(controller.kind.resource, "pi", lambda j: j["spec"].update(suspend=True),
                     namespace="ns")
        await h.settle()
        quiet.clear()
        await h.sync("pi", "TrainJob")
        assert quiet == [False]
