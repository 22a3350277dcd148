"""Test helpers for every ``kubeflow.org/v1`` training kind of the registry
(:func:`mpi_controller.kinds.plugins`: TFJob, PyTorchJob, XGBoostJob, PaddleJob, JAXJob and
whichever kind is added next), parametrized by the kind's
:class:`~mpi_controller.engine.plugin.KindPlugin`: its examples, a small job made from its
first example, CRUD through the official sync client (:class:`TrainingJobs`, an observer
independent of the controller under test) and what the kind's pure builders would create for a
job (:func:`rendered`).

KWOK plays the kubelet (``hack/kwok/stages.yaml``): it ends the pods of every training kind by
itself, as their training programs would exit (0, three seconds after they run, or
``sim.mpi-controller.io/duration``), TFJob's parameter servers and evaluators aside. A test
whose pods must keep running through its steps (suspend, scale) and still end afterwards gives
them :data:`LONG_RUN`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from mpi_controller.engine.plugin import KindPlugin, RenderOptions
from mpi_controller.kinds import plugins
from tests.support import REPO, wait_for
from tests.tfjobs import DURATION, EXIT_CODE, TFJobs

__all__ = [
    "DURATION",
    "ENDED",
    "EXIT_CODE",
    "LONG_RUN",
    "UNKNOWN_FIELDS",
    "TrainingJobs",
    "default_container",
    "delete_all",
    "end_pods",
    "example",
    "example_params",
    "kind_params",
    "live_names",
    "pruned",
    "rendered",
    "scale_subresource",
    "small_job",
    "training_plugins",
    "wait_running",
    "wait_started",
]

LONG_RUN = {DURATION: "1h"}
"""The pod annotations of a job whose pods must keep running through a test's steps (suspend,
scale) however loaded the machine; the test then ends them (:func:`end_pods`)."""
ENDED = {EXIT_CODE: "0", DURATION: "1s"}
"""What :func:`end_pods` puts on a running pod: KWOK's exit stage ends it a second later."""

UNKNOWN_FIELDS = {
    # upstream's v1alpha1-era manifest gives its pod templates apiVersion and kind, which no
    # PodTemplateSpec has: the CRD's schema (upstream's too) prunes them, and kubectl's
    # default strict field validation refuses the manifest for them.
    "examples/xgboost/xgboostjob_v1alpha1_rabit_test.yaml": (
        "spec.xgbReplicaSpecs.Master.template.apiVersion",
        "spec.xgbReplicaSpecs.Master.template.kind",
        "spec.xgbReplicaSpecs.Worker.template.apiVersion",
        "spec.xgbReplicaSpecs.Worker.template.kind"),
}
"""Fields of an example that no CRD keeps (by example path), in the API server's order."""


def pruned(path: str) -> dict[str, Any]:
    """The example ``path`` as its CRD stores it: without its :data:`UNKNOWN_FIELDS`."""
    doc = example(path)
    for field in UNKNOWN_FIELDS.get(path, ()):
        *parents, leaf = field.split(".")
        node = doc
        for key in parents:
            node = node[key]
        del node[leaf]
    return doc


def training_plugins() -> tuple[KindPlugin, ...]:
    """The registry's ``kubeflow.org/v1`` training-operator kinds (those with replica specs)."""
    return tuple(p for p in plugins() if p.replica_specs)


def kind_params(*, exclude: tuple[str, ...] = ()) -> list[Any]:
    """``pytest.param(plugin, id=<kind>)`` for every training kind not in ``exclude``."""
    return [pytest.param(p, id=p.kind) for p in training_plugins() if p.kind not in exclude]


def example_params(*, exclude: tuple[str, ...] = ()) -> list[Any]:
    """``pytest.param(plugin, path, id=<path>)`` for every example of every training kind not
    in ``exclude`` (``KindPlugin.examples``)."""
    return [pytest.param(p, path, id=path.removeprefix("examples/"))
            for p in training_plugins() if p.kind not in exclude for path in p.examples]


def example(path: str) -> dict[str, Any]:
    """The manifest ``path`` (relative to the repository), a fresh copy."""
    doc: dict[str, Any] = yaml.safe_load(Path(REPO, path).read_text())
    return copy.deepcopy(doc)


def default_container(plugin: KindPlugin) -> str:
    """The kind's default container name (``tensorflow``, ``xgboost``, ``paddle``, ...): the
    container of its first example's first replica type."""
    spec = next(iter(example(plugin.examples[0])["spec"][plugin.replica_specs].values()))
    name: str = spec["template"]["spec"]["containers"][0]["name"]
    return name


def small_job(plugin: KindPlugin, name: str, *, annotations: dict[str, str] | None = None,
              replicas: int = 1) -> dict[str, Any]:
    """The kind's first example renamed ``name``, without its namespace, each replica type
    at most ``replicas`` replicas (a Master stays 1), ``annotations`` on every pod template."""
    job = example(plugin.examples[0])
    job["metadata"] = {"name": name}
    for spec in job["spec"][plugin.replica_specs].values():
        spec["replicas"] = min(spec.get("replicas", 1), replicas)
        if annotations:
            spec["template"].setdefault("metadata", {}).setdefault(
                "annotations", {}).update(annotations)
    return job


def scale_subresource(plugin: KindPlugin) -> dict[str, str] | None:
    """The ``scale`` subresource the kind's CRD declares (``None``: it has none)."""
    version, = plugin.crd.versions
    scale: dict[str, str] | None = (version.subresources or {}).get("scale")
    return scale


class TrainingJobs(TFJobs):
    """CRUD on the jobs of one training kind in one namespace (see :class:`TFJobs`), plus the
    scale subresource."""

    def __init__(self, api: Any, namespace: str, plugin: KindPlugin) -> None:
        super().__init__(api, namespace)
        self.plugin = plugin
        self.group, self.version, self.plural, self.kind = (
            plugin.group, plugin.version, plugin.plural, plugin.kind)

    def scale(self, name: str) -> dict[str, Any]:
        """The job's scale subresource (``autoscaling/v1`` Scale)."""
        return self.custom.get_namespaced_custom_object_scale(  # type: ignore[no-any-return]
            self.group, self.version, self.namespace, self.plural, name)

    def events(self, name: str) -> list[tuple[str, str, str]]:
        """``(type, reason, message)`` of the Events of the job ``name`` there is now (by its
        uid: a manifest's fixed name may have been used before in the namespace), oldest
        first."""
        return list(self.event_counts(name))

    def event_counts(self, name: str) -> dict[tuple[str, str, str], int]:
        """``(type, reason, message)`` -> ``count`` of the job's Events (identical ones are
        aggregated into one Event, ``count`` times), oldest first (see :meth:`events`)."""
        uid = self.get(name)["metadata"]["uid"]
        items = self.core.list_namespaced_event(
            self.namespace, field_selector=f"involvedObject.uid={uid}").items
        items.sort(key=lambda e: (e.first_timestamp or e.event_time, e.metadata.name))
        counts: dict[tuple[str, str, str], int] = {}
        for e in items:
            key = (e.type, e.reason, e.message)
            counts[key] = counts.get(key, 0) + (e.count or 1)
        return counts

    def specs(self, name: str) -> dict[str, Any]:
        """The job's replica specs as stored."""
        specs: dict[str, Any] = self.get(name)["spec"][self.plugin.replica_specs]
        return specs


def live_names(objs: list[dict[str, Any]]) -> list[str]:
    """Names of the objects not being deleted."""
    return [o["metadata"]["name"] for o in objs if not o["metadata"].get("deletionTimestamp")]


def wait_running(jobs: TrainingJobs, name: str, count: int) -> list[str]:
    """The names of the job's ``count`` pods once that many (not being deleted) run."""
    def running() -> list[str] | None:
        pods = [p for p in jobs.pods(name) if not p["metadata"].get("deletionTimestamp")]
        ok = len(pods) == count and all(p["status"]["phase"] == "Running" for p in pods)
        return [p["metadata"]["name"] for p in pods] if ok else None

    return wait_for(running, timeout=60, what=f"{count} running pods of {jobs.kind} {name}")


def wait_started(jobs: TrainingJobs, name: str, count: int) -> list[str]:
    """The names of the job's ``count`` pods once that many (not being deleted) have started:
    Running, or already Succeeded (KWOK ends them by itself)."""
    def started() -> list[str] | None:
        pods = [p for p in jobs.pods(name) if not p["metadata"].get("deletionTimestamp")]
        ok = len(pods) == count and all(p["status"]["phase"] in ("Running", "Succeeded")
                                        for p in pods)
        return [p["metadata"]["name"] for p in pods] if ok else None

    return wait_for(started, timeout=60, what=f"{count} started pods of {jobs.kind} {name}")


def end_pods(jobs: TrainingJobs, name: str, count: int) -> list[str]:
    """Play the training programs of the job's ``count`` pods exiting 0 (:data:`ENDED`), for a
    job made with :data:`LONG_RUN` once the test's steps are done: wait until that many run,
    then annotate each; their names."""
    names = wait_running(jobs, name, count)
    for pod in names:
        jobs.core.patch_namespaced_pod(pod, jobs.namespace, {"metadata": {"annotations": ENDED}})
    return names


def rendered(plugin: KindPlugin, job: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """What the kind's pure builders (``mpi-controller render``: defaults, then the first
    sync's objects) make of the live ``job`` (its namespace and uid): ``{"Pod": [...],
    "Service": [...]}``, each by name."""
    assert plugin.renderer is not None
    options = RenderOptions(namespace=job["metadata"]["namespace"])
    prepared = plugin.renderer.prepare(job, options)
    out: dict[str, list[dict[str, Any]]] = {"Pod": [], "Service": []}
    for obj in plugin.renderer.objects(prepared, options):
        out.setdefault(obj["kind"], []).append(obj)
    for objs in out.values():
        objs.sort(key=lambda o: o["metadata"]["name"])
    return out


def delete_all(kube_api: Any, plugin: KindPlugin, namespace: str, name: str) -> None:
    """Delete the job ``name`` if it is there, and wait until it and its pods and Services
    are gone (a manifest's fixed name reused in a shared namespace)."""
    jobs = TrainingJobs(kube_api, namespace, plugin)
    try:
        jobs.delete(name)
    except client.ApiException as err:
        if err.status != 404:
            raise

    def gone() -> bool:
        try:
            jobs.get(name)
            return False
        except client.ApiException as err:
            if err.status != 404:
                raise
        return not jobs.pods(name) and not jobs.services(name)

    wait_for(gone, timeout=90, what=f"{plugin.kind} {namespace}/{name} and its children gone")
