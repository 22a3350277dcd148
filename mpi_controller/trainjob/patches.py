"""A TrainJob's runtime patches of the JobSet spec, merged as Trainer v2.3.0 merges them
(``pkg/runtime/core/trainingruntime.go`` ``mergeRuntimePatches``): each patch's
``trainingRuntimeSpec.template.spec``, in the order of ``spec.runtimePatches``, is a strategic
merge patch (apimachinery's ``strategicpatch.StrategicMergePatch`` against the
``jobsetv1alpha2.JobSetSpec`` type) of the runtime's JobSet spec; then the replicated Jobs are
put back in the runtime's order (a name the runtime does not have sorts as the first one's).

The strategic merge, for what a patch of ``JobSetSpecPatch`` can hold: objects merge key by
key; a list the Go types mark ``patchStrategy: merge`` merges item by item on its merge key
(an item of the patch whose key the list has is merged into it, in place; the others are
appended, in the patch's order); every other list, and every scalar, is replaced. Empty lists
of the patch are left out first (the patch is the JSON of typed structs whose lists are all
``omitempty``). The merge keys (``k8s.io/api/core/v1`` and ``sigs.k8s.io/jobset`` v0.12.0):
``replicatedJobs``/``dependsOn`` by ``name``; a pod's ``containers``, ``initContainers``,
``ephemeralContainers``, ``volumes``, ``imagePullSecrets``, ``schedulingGates``,
``resourceClaims`` by ``name``, ``hostAliases`` by ``ip``, ``topologySpreadConstraints`` by
``topologyKey``; a container's ``env`` by ``name``, ``volumeMounts`` by ``mountPath``,
``volumeDevices`` by ``devicePath``, ``ports`` by ``containerPort``.

Pure; :class:`PatchError` (a ``ValueError``) where apimachinery's merge fails (an item of a
merged list without its merge key).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PatchError", "merge_runtime_patches", "spec_patches", "strategic_merge"]

Schema = Mapping[str, Any]
"""A field's merge rules: for an object, its fields' schemas; for a merged list, a
``(merge key, item schema)`` pair."""

_META: Schema = {}
_CONTAINER: Schema = {
    "env": ("name", {}), "volumeMounts": ("mountPath", {}),
    "volumeDevices": ("devicePath", {}), "ports": ("containerPort", {}),
}
_POD_SPEC: Schema = {
    "containers": ("name", _CONTAINER), "initContainers": ("name", _CONTAINER),
    "ephemeralContainers": ("name", _CONTAINER), "volumes": ("name", {}),
    "imagePullSecrets": ("name", {}), "schedulingGates": ("name", {}),
    "resourceClaims": ("name", {}), "hostAliases": ("ip", {}),
    "topologySpreadConstraints": ("topologyKey", {}),
}
_REPLICATED_JOB: Schema = {
    "dependsOn": ("name", {}),
    "template": {"metadata": _META, "spec": {"template": {"metadata": _META,
                                                          "spec": _POD_SPEC}}},
}
JOBSET_SPEC: Schema = {"replicatedJobs": ("name", _REPLICATED_JOB)}
"""The merge rules of ``jobsetv1alpha2.JobSetSpec`` a runtime patch can reach."""


class PatchError(ValueError):
    """The strategic merge failed (the message says where)."""


def _without_empty_lists(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_empty_lists(v) for k, v in value.items()
                if not (isinstance(v, list) and not v)}
    if isinstance(value, list):
        return [_without_empty_lists(v) for v in value]
    return value


def _merge_list(original: Sequence[Any], patch: Sequence[Any], key: str, item: Schema,
                where: str) -> list[Any]:
    merged = [copy.deepcopy(v) for v in original]
    for entry in patch:
        if not isinstance(entry, Mapping) or key not in entry:
            raise PatchError(f"{where}: an item of the patch has no merge key {key!r}")
        for i, current in enumerate(merged):
            if isinstance(current, Mapping) and current.get(key) == entry[key]:
                merged[i] = _merge(current, entry, item, where)
                break
        else:
            merged.append(copy.deepcopy(entry))
    return merged


def _merge(original: Any, patch: Any, schema: Schema, where: str) -> Any:
    if not isinstance(patch, Mapping) or not isinstance(original, Mapping):
        return copy.deepcopy(patch)
    out = copy.deepcopy(dict(original))
    for name, value in patch.items():
        rule = schema.get(name, {})
        path = f"{where}.{name}"
        if value is None:
            out.pop(name, None)
        elif isinstance(value, list) and isinstance(rule, tuple) \
                and isinstance(out.get(name), list):
            out[name] = _merge_list(out[name], value, rule[0], rule[1], path)
        elif isinstance(value, Mapping) and isinstance(out.get(name), Mapping):
            out[name] = _merge(out[name], value, rule if isinstance(rule, Mapping) else {}, path)
        else:
            out[name] = copy.deepcopy(value)
    return out


def strategic_merge(original: Mapping[str, Any], patch: Mapping[str, Any],
                    schema: Schema = JOBSET_SPEC) -> dict[str, Any]:
    """``original`` with ``patch`` merged (module doc); neither is changed."""
    merged: dict[str, Any] = _merge(original, _without_empty_lists(patch), schema, "spec")
    return merged


def spec_patches(trainjob: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The JobSet spec patches of ``trainjob``'s ``runtimePatches``, in order."""
    found: list[Mapping[str, Any]] = []
    for patch in (trainjob.get("spec") or {}).get("runtimePatches") or []:
        spec = (((patch or {}).get("trainingRuntimeSpec") or {}).get("template") or {}) \
            .get("spec")
        if spec is not None:
            found.append(spec)
    return found


def merge_runtime_patches(spec: Mapping[str, Any],
                          trainjob: Mapping[str, Any]) -> dict[str, Any]:
    """The runtime's JobSet ``spec`` with ``trainjob``'s runtime patches merged (module doc)."""
    order = {rjob.get("name"): i for i, rjob in enumerate(spec.get("replicatedJobs") or [])}
    merged = copy.deepcopy(dict(spec))
    for patch in spec_patches(trainjob):
        merged = strategic_merge(merged, patch)
    if merged.get("replicatedJobs"):
        merged["replicatedJobs"] = sorted(merged["replicatedJobs"],
                                          key=lambda rjob: order.get(rjob.get("name"), 0))
    return merged
