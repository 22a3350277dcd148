"""Test helpers for MPIJobs through the official sync client (an observer independent of the
controller under test)."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, watch

from tests.support import REPO, WaitTimeout, wait_for

GROUP, VERSION, PLURAL = "kubeflow.org", "v2beta1", "mpijobs"
DURATION = "sim.mpi-controller.io/duration"
EXIT_CODE = "sim.mpi-controller.io/exit-code"


def example(name: str = "pi.yaml") -> dict[str, Any]:
    docs = list(yaml.safe_load_all(Path(REPO, "examples", name).read_text()))
    return copy.deepcopy(docs[0])


def small_job(name: str, *, workers: int = 2, launcher_runs: str = "2s",
              **spec: Any) -> dict[str, Any]:
    """A small MPIJob: ``workers`` workers; KWOK finishes the launcher after ``launcher_runs``."""
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {
            "slotsPerWorker": 1,
            "runPolicy": {"cleanPodPolicy": "Running"},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {
                        "metadata": {"annotations": {DURATION: launcher_runs}},
                        "spec": {"containers": [{
                            "name": "launcher", "image": "mpioperator/mpi-pi:openmpi",
                            "command": ["mpirun", "-n", str(workers), "/home/mpiuser/pi"],
                        }]},
                    },
                },
                "Worker": {
                    "replicas": workers,
                    "template": {"spec": {"containers": [{
                        "name": "worker", "image": "mpioperator/mpi-pi:openmpi",
                    }]}},
                },
            },
        },
    }
    for key, value in spec.items():
        if key == "run_policy":
            body["spec"]["runPolicy"].update(value)
        else:
            body["spec"][key] = value
    return body


EXAMPLES = {"v1": "examples/v1/tensorflow-mnist-elastic.yaml",
            "v1alpha2": "examples/v1alpha2/tensorflow-benchmarks.yaml"}


def older_generation_job(generation: str, name: str, *, launcher_runs: str = "3s",
                         stored: bool = True) -> dict[str, Any]:
    """The example MPIJob of ``generation`` (``v1`` or ``v1alpha2``) named ``name``, its launcher
    finishing after ``launcher_runs`` on KWOK, its workers asking for no resources (many such
    jobs fit the fake nodes' GPUs); ``stored``: as the API server stores a create through that
    version (``v2beta1`` with the origin recorded), which needs no conversion webhook to
    create; else as written."""
    from mpi_controller.mpi.conversion import convert

    body: dict[str, Any] = yaml.safe_load((REPO / EXAMPLES[generation]).read_text())
    body["metadata"]["name"] = name
    launcher = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]
    launcher.setdefault("metadata", {}).setdefault("annotations", {})[DURATION] = launcher_runs
    for container in body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]:
        container.pop("resources", None)
    return convert(body, VERSION) if stored else body


class MPIJobs:
    """CRUD on MPIJobs (or another kind of job: the class attributes) in one namespace, plus
    waits."""

    group, version, plural, kind = GROUP, VERSION, PLURAL, "MPIJob"

    def __init__(self, api: Any, namespace: str) -> None:
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        self.batch = client.BatchV1Api(api)
        self.namespace = namespace

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.custom.create_namespaced_custom_object(  # type: ignore[no-any-return]
            self.group, self.version, self.namespace, self.plural, body)

    def get(self, name: str) -> dict[str, Any]:
        return self.custom.get_namespaced_custom_object(  # type: ignore[no-any-return]
            self.group, self.version, self.namespace, self.plural, name)

    def patch(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        return self.custom.patch_namespaced_custom_object(  # type: ignore[no-any-return]
            self.group, self.version, self.namespace, self.plural, name, patch)

    def delete(self, name: str) -> None:
        self.custom.delete_namespaced_custom_object(self.group, self.version, self.namespace,
                                                    self.plural, name)

    def conditions(self, name: str) -> dict[str, tuple[str, str]]:
        """type -> (status, reason)"""
        status = self.get(name).get("status") or {}
        return {c["type"]: (c["status"], c.get("reason", "")) for c in status.get("conditions", [])}

    def wait_condition(self, name: str, ctype: str, status: str = "True", *,
                       timeout: float = 90) -> dict[str, Any]:
        def probe() -> dict[str, Any] | None:
            job = self.get(name)
            for c in (job.get("status") or {}).get("conditions", []):
                if c["type"] == ctype and c["status"] == status:
                    return job
            return None
        return wait_for(probe, timeout=timeout,
                        what=f"{self.kind} {name} condition {ctype}={status}")

    def watch_condition(self, name: str, ctype: str, status: str = "True", *,
                        timeout: float = 90) -> dict[str, Any]:
        """The first version of the job with condition ``ctype`` at ``status``, seen by a
        watch from the version read first: also a condition the controller sets and clears
        again within a moment (Restarting while a pod that exits at once is replaced), which
        polling can miss."""
        def holds(job: dict[str, Any]) -> bool:
            return any(c["type"] == ctype and c["status"] == status
                       for c in (job.get("status") or {}).get("conditions", []))

        deadline = time.monotonic() + timeout
        job = self.get(name)
        version = job["metadata"]["resourceVersion"]
        while not holds(job):
            left = deadline - time.monotonic()
            if left <= 0:
                raise WaitTimeout(f"timed out after {timeout}s watching {self.kind} {name} for "
                                  f"condition {ctype}={status}")
            stream = watch.Watch().stream(
                self.custom.list_namespaced_custom_object, self.group, self.version,
                self.namespace, self.plural, field_selector=f"metadata.name={name}",
                resource_version=version, timeout_seconds=max(1, int(left)))
            for event in stream:
                job = event["object"]
                version = job["metadata"]["resourceVersion"]
                if holds(job):
                    break
        return job

    def pods(self, selector: str) -> list[Any]:
        return list(self.core.list_namespaced_pod(self.namespace, label_selector=selector).items)

    def workers(self, name: str) -> list[Any]:
        return self.pods(
            f"training.kubeflow.org/job-name={name},training.kubeflow.org/job-role=worker")

    def events(self, name: str) -> list[tuple[str, str, str]]:
        items = self.core.list_namespaced_event(
            self.namespace, field_selector=f"involvedObject.name={name}").items
        return [(e.type, e.reason, e.message) for e in items]
