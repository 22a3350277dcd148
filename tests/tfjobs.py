"""Test helpers for TFJobs: manifests (the issue's example, small jobs) and, on a cluster, CRUD
through the official sync client (an observer independent of the controller under test)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.mpijobs import MPIJobs
from tests.support import REPO, wait_for

GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "tfjobs"
DURATION = "sim.mpi-controller.io/duration"
EXIT_CODE = "sim.mpi-controller.io/exit-code"
EXAMPLE = "tensorflow-dist-mnist.yaml"
IMAGE = "kubeflow/tf-dist-mnist-test:1.0"


def example(name: str = EXAMPLE) -> dict[str, Any]:
    """An example manifest from examples/ (a fresh copy)."""
    doc: dict[str, Any] = yaml.safe_load(Path(REPO, "examples", name).read_text())
    return copy.deepcopy(doc)


def replica(replicas: int | None = 1, *, restart: str | None = None, port: int | None = None,
            annotations: dict[str, str] | None = None,
            container_port: tuple[str, str, str] = ("tensorflow", "tfjob-port", IMAGE),
            **pod_spec: Any) -> dict[str, Any]:
    """A replica spec with one ``tensorflow`` container (``port``: its ``tfjob-port``; another
    kind's container name, port name and image in ``container_port``)."""
    name, port_name, image = container_port
    container: dict[str, Any] = {"name": name, "image": image}
    if port is not None:
        container["ports"] = [{"name": port_name, "containerPort": port}]
    template: dict[str, Any] = {"spec": {"containers": [container], **pod_spec}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    spec: dict[str, Any] = {"template": template}
    if replicas is not None:
        spec["replicas"] = replicas
    if restart is not None:
        spec["restartPolicy"] = restart
    return spec


def training_job(kind: str, specs_field: str, name: str, replicas: dict[str, dict[str, Any]],
                 **spec: Any) -> dict[str, Any]:
    """A ``kubeflow.org/v1`` job of ``kind`` with these replica specs under
    ``spec.<specs_field>``; ``run_policy=`` goes to ``spec.runPolicy``, ``elastic=`` to
    ``spec.elasticPolicy``, any other keyword to the spec field of its name."""
    body: dict[str, Any] = {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind,
                            "metadata": {"name": name}, "spec": {specs_field: replicas}}
    keys = {"run_policy": "runPolicy", "elastic": "elasticPolicy"}
    for key, value in spec.items():
        body["spec"][keys.get(key, key)] = value
    return body


def replica_selector(job: str, controller: str, rtype: str) -> str:
    """``status.replicaStatuses[<rtype>].selector`` of ``job`` (the kinds with a scale
    subresource): its labels (the deprecated ``group-name`` and ``job-name`` too) and the
    replica type, sorted."""
    return (f"group-name=kubeflow.org,job-name={job},training.kubeflow.org/job-name={job},"
            f"training.kubeflow.org/operator-name={controller},"
            f"training.kubeflow.org/replica-type={rtype.lower()}")


def tfjob(name: str, replicas: dict[str, dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """A TFJob with these replica specs (``run_policy=`` goes to ``spec.runPolicy``)."""
    return training_job("TFJob", "tfReplicaSpecs", name, replicas, **spec)


def tf_config(pod: dict[str, Any]) -> dict[str, Any] | None:
    """The parsed TF_CONFIG of a pod's ``tensorflow`` container (``None`` without one)."""
    for container in pod["spec"]["containers"]:
        if container["name"] == "tensorflow":
            for env in container.get("env") or []:
                if env["name"] == "TF_CONFIG":
                    value: dict[str, Any] = json.loads(env["value"])
                    return value
    return None


def dense_config(job: str, ns: str, cluster: dict[str, int], rtype: str, index: int,
                 ports: dict[str, int] | None = None) -> str:
    """The exact dense TF_CONFIG string upstream writes (``cluster``: lower rtype -> replicas)."""
    ports = ports or {}
    hosts = {rt: [f"{job}-{rt}-{i}.{ns}.svc:{ports.get(rt, 2222)}" for i in range(n)]
             for rt, n in sorted(cluster.items())}
    return json.dumps({"cluster": hosts, "task": {"type": rtype, "index": index},
                       "environment": "cloud"}, separators=(",", ":"))


class TFJobs(MPIJobs):
    """CRUD on TFJobs in one namespace, plus waits (a live cluster). ``conditions`` lists
    ``(type, status, reason)`` in order; pods and Services are plain dicts by name."""

    group, version, plural, kind = GROUP, VERSION, PLURAL, "TFJob"

    def conditions(self, name: str) -> list[tuple[str, str, str]]:  # type: ignore[override]
        status = self.get(name).get("status") or {}
        return [(c["type"], c["status"], c.get("reason", "")) for c in
                status.get("conditions") or []]

    def pods(self, name: str) -> list[dict[str, Any]]:  # type: ignore[override]
        """The job's pods as plain dicts, by name."""
        items = self.core.list_namespaced_pod(
            self.namespace, label_selector=f"training.kubeflow.org/job-name={name}").items
        return self._plain(items)

    def services(self, name: str) -> list[dict[str, Any]]:
        items = self.core.list_namespaced_service(
            self.namespace, label_selector=f"training.kubeflow.org/job-name={name}").items
        return self._plain(items)

    def _plain(self, items: list[Any]) -> list[dict[str, Any]]:
        api = self.core.api_client
        return sorted((api.sanitize_for_serialization(i) for i in items),
                      key=lambda i: i["metadata"]["name"])

    def events(self, name: str) -> list[tuple[str, str, str]]:
        """``(type, reason, message)`` of the job's Events, oldest first."""
        items = self.core.list_namespaced_event(
            self.namespace, field_selector=f"involvedObject.name={name},"
                                           f"involvedObject.kind={self.kind}").items
        items.sort(key=lambda e: (e.first_timestamp or e.event_time, e.metadata.name))
        return [(e.type, e.reason, e.message) for e in items]


def names(objs: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]


def wait_pods(jobs: TFJobs, name: str, count: int, phase: str | None = None,
              ) -> list[dict[str, Any]]:
    """The job's ``count`` pods (not being deleted), each in ``phase`` when given."""
    def probe() -> list[dict[str, Any]] | None:
        pods = [p for p in jobs.pods(name) if not p["metadata"].get("deletionTimestamp")]
        ok = len(pods) == count and all(phase is None or p["status"]["phase"] == phase
                                        for p in pods)
        return pods if ok else None
    return wait_for(probe, timeout=60, what=f"{count} {phase or ''} pods of {name}")


def condition(jobs: TFJobs, name: str, ctype: str) -> dict[str, Any]:
    return next(c for c in jobs.get(name)["status"]["conditions"] if c["type"] == ctype)


def dry_run_create(kube_api: Any, namespace: str, plural: str,
                   body: dict[str, Any]) -> dict[str, Any]:
    """Create a ``kubeflow.org/v1`` job with ``dryRun=All`` (the CRD's schema decides)."""
    result: dict[str, Any] = client.CustomObjectsApi(kube_api).create_namespaced_custom_object(
        GROUP, VERSION, namespace, plural, body, dry_run="All")
    return result


def rejection(kube_api: Any, namespace: str, plural: str, body: dict[str, Any]) -> str:
    """The message of the 422 a dry-run create of ``body`` gets."""
    with pytest.raises(client.ApiException) as exc:
        dry_run_create(kube_api, namespace, plural, body)
    assert exc.value.status == 422
    message: str = json.loads(exc.value.body)["message"]
    return message


def kubeflow_namespace(kube_api: Any) -> None:
    """Namespace ``kubeflow`` (the examples' own), with its default ServiceAccount."""
    core = client.CoreV1Api(kube_api)
    try:
        core.create_namespace({"metadata": {"name": "kubeflow"}})
    except client.ApiException as err:
        if err.status != 409:
            raise
    wait_for(lambda: core.list_namespaced_service_account(
        "kubeflow", field_selector="metadata.name=default").items, timeout=60,
        what="the default ServiceAccount in namespace kubeflow")


def delete_job(jobs: TFJobs, name: str) -> None:
    """Delete the job (if there) and wait until its pods and Services are collected."""
    try:
        jobs.delete(name)
    except client.ApiException as err:
        if err.status != 404:
            raise
    wait_for(lambda: not jobs.pods(name) and not jobs.services(name), timeout=90,
             what=f"the children of {jobs.kind} {name} to be collected")
