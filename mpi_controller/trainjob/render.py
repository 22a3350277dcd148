"""What ``mpi-controller render`` shows of a TrainJob: the objects its first sync creates, in
creation order (the PodGroup of a runtime with a ``podGroupPolicy``, the MPI SSH Secret and
hostfile ConfigMap, then the JobSet; :mod:`.build`, as :mod:`.kind` does), given the runtimes
it may name.

The runtimes are a :class:`Runtimes` catalogue: the ``ClusterTrainingRuntime`` and
``TrainingRuntime`` manifests given to ``render`` beside the TrainJobs, over the shipped
``deploy/runtimes/`` of a source checkout (:func:`shipped_runtimes`; a given runtime of the
same name wins). A TrainJob is defaulted (:func:`~.api.set_defaults`) and checked as the sync
checks it: a runtime kind other than the two, a runtime not in the catalogue, the policy's
checks (:func:`~.api.validate`), a runtime this version cannot build: each is a
:class:`TrainJobRenderError` with the message the controller's Warning event would carry.
A suspended TrainJob shows its suspended JobSet (the controller creates it so). The SSH
Secret's key is fresh on every call, as the controller's.

Pure but for :func:`shipped_runtimes`, which reads files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mpi_controller.kube.fielderrors import aggregate_message
from mpi_controller.trainjob import api, constants
from mpi_controller.trainjob.build import desired_objects
from mpi_controller.trainjob.mpi import ssh_auth_secret

__all__ = ["RUNTIME_KINDS", "SHIPPED_RUNTIMES", "Runtimes", "TrainJobRenderError",
           "is_runtime", "render_trainjob", "shipped_runtimes"]

Obj = dict[str, Any]
API_VERSION = f"{constants.GROUP}/{constants.VERSION}"
RUNTIME_KINDS = (constants.CLUSTER_RUNTIME_KIND, constants.RUNTIME_KIND)
SHIPPED_RUNTIMES = Path(__file__).resolve().parents[2] / "deploy" / "runtimes"
"""Where a source checkout keeps the shipped ClusterTrainingRuntimes (absent in an install)."""


class TrainJobRenderError(ValueError):
    """A TrainJob the controller would not build a JobSet for (the message says why)."""


def is_runtime(obj: object) -> bool:
    """Whether ``obj`` is a ``ClusterTrainingRuntime`` or ``TrainingRuntime`` manifest."""
    return isinstance(obj, dict) and obj.get("apiVersion") == API_VERSION and \
        obj.get("kind") in RUNTIME_KINDS


@dataclass
class Runtimes:
    """Runtimes by (kind, namespace, name); a ClusterTrainingRuntime's namespace is ``""``."""

    found: dict[tuple[str, str, str], Obj] = field(default_factory=dict)

    def add(self, runtime: Mapping[str, Any], *, namespace: str = "default") -> None:
        """Add (or replace) ``runtime``; a TrainingRuntime naming no namespace is in
        ``namespace``."""
        meta = runtime.get("metadata") or {}
        kind = str(runtime.get("kind"))
        ns = "" if kind == constants.CLUSTER_RUNTIME_KIND else meta.get("namespace") or namespace
        self.found[(kind, ns, str(meta.get("name", "")))] = dict(runtime)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        ns = "" if kind == constants.CLUSTER_RUNTIME_KIND else namespace
        return self.found.get((kind, ns, name))


def shipped_runtimes(directory: Path = SHIPPED_RUNTIMES) -> Iterable[Obj]:
    """The runtimes of ``directory``'s YAML files (none when it does not exist)."""
    if not directory.is_dir():
        return []
    found: list[Obj] = []
    for path in sorted(directory.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if is_runtime(document):
                found.append(document)
    return found


def render_trainjob(trainjob: Mapping[str, Any], runtimes: Runtimes) -> list[Obj]:
    """The objects the first sync of ``trainjob`` (defaulted, with ``metadata.namespace``
    and ``metadata.uid`` set) creates on its runtime from ``runtimes`` (module doc)."""
    job = api.set_defaults(trainjob)
    meta = job["metadata"]
    key = api.runtime_key(job)
    if key not in {f"{k}.{constants.GROUP}" for k in RUNTIME_KINDS}:
        raise TrainJobRenderError(f"unsupported runtime: {key}")
    ref = job["spec"]["runtimeRef"]
    runtime = runtimes.get(ref["kind"], meta.get("namespace", ""), ref.get("name", ""))
    if runtime is None:
        raise TrainJobRenderError(f"{ref['kind']} specified in TrainJob is not found: "
                                  f"{ref.get('name')} (give it with -f)")
    spec = runtime.get("spec") or {}
    errors = api.validate(job, spec)
    if errors:
        raise TrainJobRenderError(aggregate_message(errors))
    try:
        desired = desired_objects(job, spec)
    except ValueError as err:
        raise TrainJobRenderError(str(err)) from None
    objects: list[Obj] = []
    if desired.pod_group is not None:
        objects.append(desired.pod_group)
    if desired.ssh_secret:
        objects.append(ssh_auth_secret(job))
    if desired.hostfile is not None:
        objects.append(desired.hostfile)
    return [*objects, desired.jobset]
