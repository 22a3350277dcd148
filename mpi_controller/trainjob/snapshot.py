"""The runtime snapshot of a TrainJob (Trainer v2.3.0 ``pkg/runtime/core/snapshot.go``): the
ConfigMap ``<trainjob>-runtime-snapshot`` in its namespace, controlled by it, whose data key
``runtime`` holds the (Cluster)TrainingRuntime as YAML as it was when the TrainJob was first
built. Once it exists the TrainJob is built from it, never from the runtime again, so a change
to the runtime does not reach TrainJobs that already started.

* :func:`snapshot_configmap`: the ConfigMap of a runtime (its YAML with sorted keys, as
  ``sigs.k8s.io/yaml`` writes it; ``apiVersion`` and ``kind`` set);
* :func:`runtime_from_snapshot`: the runtime a snapshot holds, or :class:`SnapshotError` with
  upstream's message: owned by another object, no ``runtime`` key, YAML that does not parse,
  or a runtime of another name, group or kind than the TrainJob's ``runtimeRef``;
* :func:`cache_transform`: what the controller's ConfigMap informer keeps of a ConfigMap: a
  ConfigMap a TrainJob controls whole (its snapshot, its MPI hostfile), any other one reduced
  to its name, namespace and resourceVersion (upstream reads the snapshot through
  controller-runtime's cache of every ConfigMap; this one holds only what a TrainJob reads).

Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from mpi_controller.kube.fielderrors import go_quote
from mpi_controller.kube.owners import controller_of
from mpi_controller.trainjob import constants

__all__ = ["DATA_KEY", "SUFFIX", "SnapshotError", "cache_transform", "runtime_from_snapshot",
           "snapshot_configmap", "snapshot_name"]

SUFFIX = "-runtime-snapshot"
DATA_KEY = "runtime"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it (several times faster), else the Python one."""
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's safe dumper when PyYAML has it: the shipped ``torch-distributed`` runtime in 0.25
instead of 1.6 ms, the same text; a long quoted string may be folded at other places (the same
value, and closer to ``sigs.k8s.io/yaml``, whose emitter is a port of libyaml's)."""


class SnapshotError(ValueError):
    """The snapshot ConfigMap cannot be used (upstream's message)."""


def snapshot_name(trainjob: Mapping[str, Any]) -> str:
    return f"{trainjob['metadata']['name']}{SUFFIX}"


def snapshot_configmap(trainjob: Mapping[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
    """The snapshot ConfigMap of ``runtime`` for ``trainjob``."""
    meta = trainjob["metadata"]
    kind = runtime.get("kind") or (
        constants.CLUSTER_RUNTIME_KIND if not (runtime.get("metadata") or {}).get("namespace")
        else constants.RUNTIME_KIND)
    body = {**runtime, "apiVersion": runtime.get("apiVersion")
            or f"{constants.GROUP}/{constants.VERSION}", "kind": kind}
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": snapshot_name(trainjob), "namespace": meta.get("namespace", ""),
                     "ownerReferences": [{
                         "apiVersion": f"{constants.GROUP}/{constants.VERSION}",
                         "kind": constants.KIND, "name": meta["name"],
                         "uid": meta.get("uid", ""), "controller": True,
                         "blockOwnerDeletion": True}]},
        "data": {DATA_KEY: yaml.dump(body, Dumper=_DUMPER, sort_keys=True,
                                     default_flow_style=False)},
    }


def runtime_from_snapshot(trainjob: Mapping[str, Any],
                          configmap: Mapping[str, Any]) -> dict[str, Any]:
    """The runtime ``configmap`` holds for ``trainjob`` (module doc)."""
    owner = controller_of(configmap)
    if owner is None or owner.get("uid") != trainjob["metadata"].get("uid"):
        raise SnapshotError("invalid runtime snapshot: a snapshot configmap exists but is owned "
                            "by another object")
    text = (configmap.get("data") or {}).get(DATA_KEY)
    if text is None:
        raise SnapshotError(f'invalid runtime snapshot: snapshot ConfigMap missing "{DATA_KEY}" '
                            "data key")
    try:
        runtime = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as err:
        raise SnapshotError("invalid runtime snapshot: unable to unmarshal the snapshot: "
                            f"{err}") from None
    if not isinstance(runtime, dict):
        raise SnapshotError("invalid runtime snapshot: unable to unmarshal the snapshot: not an "
                            "object")
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    kind = str(runtime.get("kind") or "")
    group = str(runtime.get("apiVersion") or "").rpartition("/")[0]
    name = str((runtime.get("metadata") or {}).get("name") or "")
    if (("kind" in ref and kind != ref["kind"]) or ("apiGroup" in ref and group != ref["apiGroup"])
            or name != ref.get("name", "")):
        raise SnapshotError(
            "invalid runtime snapshot: the snapshot refers to the wrong runtime: expecting a "
            f"runtime with name, api group and kind of {go_quote(ref.get('name', ''))}, "
            f"{go_quote(ref.get('apiGroup', '<any>'))}, {go_quote(ref.get('kind', '<any>'))} "
            f"but found runtime with name, api group and kind of {go_quote(name)}, "
            f"{go_quote(group)}, {go_quote(kind)}")
    return runtime


def cache_transform(configmap: dict[str, Any]) -> dict[str, Any]:
    """What the ConfigMap informer keeps of ``configmap`` (module doc); ``managedFields`` are
    dropped either way."""
    meta = configmap.get("metadata") or {}
    owner = controller_of(configmap)
    if (owner is not None and owner.get("kind") == constants.KIND
            and str(owner.get("apiVersion", "")).startswith(f"{constants.GROUP}/")):
        meta.pop("managedFields", None)
        return configmap
    return {"metadata": {key: meta[key] for key in ("name", "namespace", "resourceVersion")
                         if key in meta}}
