"""Builders beyond the worked example: variants of the pi example, workers, launcher and Service."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mpi_controller.mpi.launcher import (
    launcher_template_events,
    new_launcher_job,
    resume_launcher,
    suspend_launcher,
    sync_launcher_scheduling_directives,
)
from mpi_controller.mpi.service import new_job_service, service_needs_update, update_service
from mpi_controller.mpi.worker import new_worker
from tests.unit.mpi.conftest import pi_job

Golden = Callable[[str, Any], None]


def _env(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"][0]["env"]


@pytest.mark.parametrize(
    ("impl", "expected"),
    [
        (
            "Intel",
            [
                {"name": "K_MPI_JOB_ROLE", "value": "launcher"},
                {"name": "I_MPI_HYDRA_HOST_FILE", "value": "/etc/mpi/hostfile"},
                {
                    "name": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS",
                    "value": "-o ConnectionAttempts=10",
                },
                {"name": "I_MPI_PERHOST", "value": "2"},
                {"name": "NVIDIA_VISIBLE_DEVICES"},
                {"name": "NVIDIA_DRIVER_CAPABILITIES"},
            ],
        ),
        (
            "MPICH",
            [
                {"name": "K_MPI_JOB_ROLE", "value": "launcher"},
                {"name": "HYDRA_HOST_FILE", "value": "/etc/mpi/hostfile"},
                {"name": "HYDRA_LAUNCH_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
                {"name": "NVIDIA_VISIBLE_DEVICES"},
                {"name": "NVIDIA_DRIVER_CAPABILITIES"},
            ],
        ),
    ],
)
def test_launcher_env_per_implementation(impl: str, expected: list[dict[str, Any]]) -> None:
    """newLauncherPodTemplate: K_MPI_JOB_ROLE, then the implementation's env (Intel has
    I_MPI_PERHOST, MPICH no slots variable), then NVIDIA blanking (no `value`)."""
    assert _env(new_launcher_job(pi_job(mpiImplementation=impl))) == expected


def test_user_env_and_volumes_come_first() -> None:
    """User env, volumes and mounts are kept before the ones the operator appends."""
    job = pi_job()
    tmpl = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    tmpl["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    tmpl["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    tmpl["volumes"] = [{"name": "data", "emptyDir": {}}]
    spec = new_launcher_job(job)["spec"]["template"]["spec"]
    assert spec["containers"][0]["env"][0] == {"name": "A", "value": "1"}
    assert [v["name"] for v in spec["volumes"]] == ["data", "ssh-auth", "mpi-job-config"]
    assert [m["name"] for m in spec["containers"][0]["volumeMounts"]] == [
        "data",
        "ssh-auth",
        "mpi-job-config",
    ]


def test_run_launcher_as_worker_variant(golden: Golden) -> None:
    """runLauncherAsWorker: launcher replica-index "0", workers "1","2", no NVIDIA blanking,
    publishNotReadyAddresses true (variants of the pi example)."""
    job = pi_job(runLauncherAsWorker=True)
    launcher = new_launcher_job(job)
    workers = [new_worker(job, 0), new_worker(job, 1)]
    assert (
        launcher["spec"]["template"]["metadata"]["labels"]["training.kubeflow.org/replica-index"]
        == "0"
    )
    assert [w["metadata"]["labels"]["training.kubeflow.org/replica-index"] for w in workers] == [
        "1",
        "2",
    ]
    assert not any(e["name"].startswith("NVIDIA") for e in _env(launcher))
    assert new_job_service(job)["spec"]["publishNotReadyAddresses"] is True
    golden("run_launcher_as_worker", [new_job_service(job), *workers, launcher])


def test_non_root_ssh_mount_has_no_default_mode() -> None:
    """setupSSHOnPod: defaultMode 0600 only for /root/.ssh; elsewhere unset (k8s 0644)."""
    worker = new_worker(pi_job(sshAuthMountPath="/home/mpiuser/.ssh"), 0)
    secret = worker["spec"]["volumes"][0]["secret"]
    assert "defaultMode" not in secret
    mounts = worker["spec"]["containers"][0]["volumeMounts"]
    assert mounts == [{"name": "ssh-auth", "mountPath": "/home/mpiuser/.ssh"}]


def test_worker_keeps_user_command_and_dns_config() -> None:
    """newWorker: sshd is the command only when command and args are both empty; the DNS
    search is appended (cluster.local hard-coded); hostNetwork → ClusterFirstWithHostNet;
    ExitCode restart policy → Never; default labels override template labels."""
    job = pi_job()
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    worker["restartPolicy"] = "ExitCode"
    tmpl = worker["template"]
    tmpl["metadata"] = {
        "labels": {"training.kubeflow.org/job-role": "mine"},
        "annotations": {"x": "y"},
    }
    tmpl["spec"].update(
        hostNetwork=True, restartPolicy="Always", dnsConfig={"searches": ["a.example"]}
    )
    tmpl["spec"]["containers"][0]["args"] = ["sleep"]
    pod = new_worker(job, 3)
    assert pod["metadata"]["annotations"] == {"x": "y"}
    assert pod["metadata"]["labels"]["training.kubeflow.org/job-role"] == "worker"
    assert pod["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod["spec"]["dnsConfig"] == {"searches": ["a.example", "pi.default.svc.cluster.local"]}
    assert pod["spec"]["restartPolicy"] == "Never"
    assert "command" not in pod["spec"]["containers"][0]
    assert pod["metadata"]["name"] == pod["spec"]["hostname"] == "pi-worker-3"


def test_launcher_job_run_policy_and_suspend() -> None:
    """newLauncherJob: ttl, activeDeadlineSeconds and backoffLimit copied; suspend only when
    the MPIJob is suspended; podReplacementPolicy Failed."""
    job = pi_job(
        runPolicy={
            "cleanPodPolicy": "All",
            "activeDeadlineSeconds": 30,
            "backoffLimit": 2,
            "suspend": True,
        }
    )
    spec = new_launcher_job(job)["spec"]
    assert {k: v for k, v in spec.items() if k != "template"} == {
        "activeDeadlineSeconds": 30,
        "backoffLimit": 2,
        "podReplacementPolicy": "Failed",
        "suspend": True,
    }


def test_template_restart_policy_warning() -> None:
    """A launcher template restartPolicy is overridden (OnFailure) with a Warning event
    SetPodTemplateRestartPolicy."""
    job = pi_job()
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["restartPolicy"] = "Always"
    assert new_launcher_job(job)["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    events = launcher_template_events(job)
    assert [(e.type, e.reason, e.message) for e in events] == [
        (
            "Warning",
            "SetPodTemplateRestartPolicy",
            "Restart policy in pod template overridden by restart policy in replica spec",
        ),
    ]
    assert launcher_template_events(pi_job()) == []


def test_builders_do_not_mutate_the_job() -> None:
    job = pi_job()
    snapshot = repr(job)
    new_worker(job, 0)
    new_launcher_job(job, gang_scheduling="volcano")
    assert repr(job) == snapshot


def test_service_update_rule() -> None:
    """getOrCreateService: only selector and publishNotReadyAddresses are synced."""
    desired = new_job_service(pi_job(runLauncherAsWorker=True))
    existing = new_job_service(pi_job())
    existing["spec"]["selector"]["extra"] = "x"
    existing["spec"]["ports"] = [{"port": 1}]
    assert service_needs_update(existing, desired)
    updated = update_service(existing, desired)
    assert updated["spec"]["selector"] == desired["spec"]["selector"]
    assert updated["spec"]["publishNotReadyAddresses"] is True
    assert updated["spec"]["ports"] == [{"port": 1}]
    assert not service_needs_update(updated, desired)


def test_resume_syncs_kueue_scheduling_directives() -> None:
    """syncLauncherSchedulingDirectives: labels/annotations merged (desired wins);
    nodeSelector, tolerations and schedulingGates replaced; suspend set false."""
    job = pi_job(runPolicy={"cleanPodPolicy": "None", "suspend": True})
    launcher = new_launcher_job(job)
    tmpl = launcher["spec"]["template"]
    tmpl["metadata"]["labels"]["kueue"] = "old"
    tmpl["spec"]["nodeSelector"] = {"old": "1"}
    tmpl["spec"]["schedulingGates"] = [{"name": "gate"}]
    resumed_job = pi_job(runPolicy={"cleanPodPolicy": "None", "suspend": False})
    lt = resumed_job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]
    lt["metadata"] = {"annotations": {"a": "b"}}
    lt["spec"]["nodeSelector"] = {"new": "2"}
    lt["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    out = resume_launcher(launcher, resumed_job)
    t = out["spec"]["template"]
    assert out["spec"]["suspend"] is False
    assert t["metadata"]["labels"]["kueue"] == "old"
    assert t["metadata"]["annotations"] == {"a": "b"}
    assert t["spec"]["nodeSelector"] == {"new": "2"}
    assert t["spec"]["tolerations"] == [{"key": "k", "operator": "Exists"}]
    assert "schedulingGates" not in t["spec"]
    assert launcher["spec"]["suspend"] is True  # input untouched
    assert suspend_launcher(out)["spec"]["suspend"] is True
    assert (
        sync_launcher_scheduling_directives(launcher, {})["spec"]["template"]["spec"].get(
            "nodeSelector"
        )
        is None
    )
