"""A differential corpus: the jobs, the flag groups they run in, and what to do with each.

A corpus is a directory: ``groups.yaml`` and one ``<case>.yaml`` per job.

``groups.yaml``::

    flags: [--threadiness, "2"]            # given to both operators in every group
    patch: {spec: {...}}                   # merged into every job before its own patch
    replica_patch: {template: {...}}       # defaults for each of a job's replica specs (the
                                           # kind's map, e.g. tfReplicaSpecs): the manifest's
                                           # and the case's own values win
    groups:
      default: {}
      volcano: {flags: [--gang-scheduling, volcano], resources: [volcano-podgroups]}
      domain: {env: {CUSTOM_CLUSTER_DOMAIN: cluster.local}}   # environment of both operators
      init: {flags: [--pytorch-init-container-template-file, "{corpus}/init-container.tmpl"]}

``{corpus}`` in a flag is the corpus directory (absolute), for files the operators read.

A case file::

    description: what the case covers
    group: default                        # the flag group it runs in
    short: true                           # also part of the short form (make test)
    manifest: upstream:examples/v2beta1/pi/pi.yaml   # or repo:PATH, or an inline object
    patch: {spec: {slotsPerWorker: 2}}    # JSON merge patch applied to the manifest
    create_error: false                   # true: the API server must refuse it (both sides)
    steps:                                # run in order once the job is created
      - wait: Succeeded                   # a condition of this type becomes True
      - wait: {event: ValidationError}    # an Event with this reason on the job
      - wait: {object: "pods/{name}-worker-0", phase: Running}   # exists (in this phase)
      - patch: {spec: {runPolicy: {suspend: false}}}
      - patch: {object: "pods/{name}-worker-0/status", strategic: {status: {...}}}
      - patch: {object: "podgroups/{name}/status", merge: {status: {phase: Inqueue}}}
      - patch: {object: "pods/{name}-worker-0/status", json: [{op: replace, path: ..., value: 2}]}
      - sleep: 12                         # seconds (for what no object shows, e.g. a deadline)

``upstream:PATH`` is read from the reference operator's module source (the Go module cache),
so upstream's examples are used as they are without being copied here; ``repo:PATH`` from this
repository (its ``examples/``). The job is named after the case file; ``{name}`` in an object
path is that name, and the object's resource (its plural) is one the run records. Loading
checks the shape and says which file and field is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mpi_controller.testing.patches import merge_patch

Obj = dict[str, Any]


class CorpusError(ValueError):
    """A corpus file is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class Step:
    """``wait-condition`` (arg: type), ``wait-event`` (reason), ``wait-object``
    (``{"object": path, "phase": phase or None}``), ``wait-gone`` (a path: until it is not
    found), ``patch`` (a merge patch of the job),
    ``patch-object`` (``{"object": path, "type": "merge" | "strategic" | "json", "patch":
    ...}``) or ``sleep`` (seconds)."""

    action: str
    arg: Any


@dataclass
class Case:
    name: str
    description: str
    group: str
    short: bool
    manifest: Obj
    create_error: bool = False
    steps: list[Step] = field(default_factory=list)


@dataclass
class Group:
    name: str
    flags: list[str]
    resources: list[str]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Corpus:
    path: Path
    flags: list[str]
    groups: dict[str, Group]
    cases: list[Case]

    def in_group(self, group: str, *, short: bool = False) -> list[Case]:
        return [c for c in self.cases if c.group == group and (c.short or not short)]


REPO = Path(__file__).resolve().parent.parent


def load(path: Path, upstream: Callable[[str], Path] | None = None, *,
         replica_specs: str = "") -> Corpus:
    """Load the corpus in ``path``; ``upstream(rel)`` resolves ``upstream:`` manifests;
    ``replica_specs`` names the kind's map of replica specs (for ``replica_patch``)."""
    groups_file = path / "groups.yaml"
    raw = _yaml(groups_file)
    if unknown := sorted(set(raw) - {"flags", "patch", "replica_patch", "groups"}):
        raise CorpusError(f"{groups_file}: unknown field(s) {', '.join(unknown)}")
    flags = _corpus_paths(_str_list(raw.get("flags", []), groups_file, "flags"), path)
    groups = {}
    for name, spec in (raw.get("groups") or {}).items():
        group = _group(groups_file, name, spec or {})
        group.flags = _corpus_paths(group.flags, path)
        groups[name] = group
    if "default" not in groups:
        raise CorpusError(f"{groups_file}: groups: a group named 'default' is required")
    common = raw.get("patch") or {}
    if not isinstance(common, dict):
        raise CorpusError(f"{groups_file}: patch: must be an object")
    each = raw.get("replica_patch") or {}
    if not isinstance(each, dict):
        raise CorpusError(f"{groups_file}: replica_patch: must be an object")
    if each and not replica_specs:
        raise CorpusError(f"{groups_file}: replica_patch: the kind names no replica specs map")
    shared = Shared(upstream, common, each, replica_specs)
    cases = [_case(f, groups, shared) for f in sorted(path.glob("*.yaml"))
             if f.name != "groups.yaml"]
    if not cases:
        raise CorpusError(f"{path}: no case files")
    return Corpus(path, flags, groups, cases)


@dataclass(frozen=True)
class Shared:
    """What every case of a corpus gets: manifest sources and the common patches."""

    upstream: Callable[[str], Path] | None
    patch: Obj
    replica_patch: Obj
    replica_specs: str

    def apply(self, manifest: Obj) -> Obj:
        """``patch``, then ``replica_patch`` under each replica spec the manifest has (the
        spec's own values win)."""
        out: Obj = merge_patch(manifest, self.patch)
        specs = (out.get("spec") or {}).get(self.replica_specs) if self.replica_patch else None
        if isinstance(specs, dict):
            out["spec"][self.replica_specs] = {
                rtype: merge_patch(self.replica_patch, spec) for rtype, spec in specs.items()}
        return out


def _group(path: Path, name: str, spec: Any) -> Group:
    if not isinstance(spec, dict):
        raise CorpusError(f"{path}: groups.{name}: must be an object")
    if unknown := sorted(set(spec) - {"flags", "resources", "env"}):
        raise CorpusError(f"{path}: groups.{name}: unknown field(s) {', '.join(unknown)}")
    env = spec.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                            for k, v in env.items()):
        raise CorpusError(f"{path}: groups.{name}.env: must map names to strings, got {env!r}")
    return Group(name, _str_list(spec.get("flags", []), path, f"groups.{name}.flags"),
                 _str_list(spec.get("resources", []), path, f"groups.{name}.resources"), env)


def _corpus_paths(flags: list[str], path: Path) -> list[str]:
    return [f.replace("{corpus}", str(path.resolve())) for f in flags]


def _yaml(path: Path) -> Obj:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise CorpusError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: must be a mapping")
    return data


def _str_list(value: Any, path: Path, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CorpusError(f"{path}: {where}: must be a list of strings, got {value!r}")
    return list(value)


def _case(path: Path, groups: dict[str, Group], shared: Shared) -> Case:
    raw = _yaml(path)
    name = path.stem
    known = {"description", "group", "short", "manifest", "patch", "steps", "create_error"}
    if unknown := sorted(set(raw) - known):
        raise CorpusError(f"{path}: unknown field(s) {', '.join(unknown)}")
    group = raw.get("group", "default")
    if group not in groups:
        raise CorpusError(f"{path}: group: {group!r} is not in groups.yaml ({sorted(groups)})")
    manifest = raw.get("manifest")
    if isinstance(manifest, str) and manifest.startswith("upstream:"):
        if shared.upstream is None:
            raise CorpusError(f"{path}: manifest: upstream files need the reference module")
        manifest = _yaml(shared.upstream(manifest.removeprefix("upstream:")))
    elif isinstance(manifest, str) and manifest.startswith("repo:"):
        manifest = _yaml(REPO / manifest.removeprefix("repo:"))
    if not isinstance(manifest, dict):
        raise CorpusError(f"{path}: manifest: must be an object, 'upstream:PATH' or "
                          "'repo:PATH'")
    manifest = merge_patch(shared.apply(manifest), raw.get("patch") or {})
    manifest.setdefault("metadata", {})["name"] = name
    manifest["metadata"].pop("namespace", None)
    steps = [_step(path, i, s) for i, s in enumerate(raw.get("steps") or [])]
    return Case(name=name, description=str(raw.get("description", "")), group=group,
                short=bool(raw.get("short", False)), manifest=manifest,
                create_error=bool(raw.get("create_error", False)), steps=steps)


STEP_FORMS = ("wait: TYPE, wait: {event: REASON}, wait: {object: PATH[, phase: PHASE]}, "
              "wait: {gone: PATH}, "
              "patch: {...}, patch: {object: PATH, merge|strategic: {...} | json: [...]}, "
              "sleep: SECONDS")
PATCH_TYPES = {"merge": dict, "strategic": dict, "json": list}


def _step(path: Path, index: int, raw: Any) -> Step:
    where = f"{path}: steps[{index}]"
    if not isinstance(raw, dict) or len(raw) != 1:
        raise CorpusError(f"{where}: must be one of {STEP_FORMS}; got {raw!r}")
    (action, arg), = raw.items()
    if action == "wait" and isinstance(arg, str):
        return Step("wait-condition", arg)
    if action == "wait" and isinstance(arg, dict) and set(arg) == {"event"}:
        return Step("wait-event", str(arg["event"]))
    if action == "wait" and isinstance(arg, dict) and "object" in arg \
            and set(arg) <= {"object", "phase"}:
        return Step("wait-object", {"object": _object_path(where, arg["object"]),
                                    "phase": arg.get("phase")})
    if action == "wait" and isinstance(arg, dict) and set(arg) == {"gone"}:
        return Step("wait-gone", _object_path(where, arg["gone"]))
    if action == "patch" and isinstance(arg, dict) and "object" in arg:
        kinds = sorted(set(arg) & set(PATCH_TYPES))
        if len(kinds) != 1 or len(arg) != 2 \
                or not isinstance(arg[kinds[0]], PATCH_TYPES[kinds[0]]):
            raise CorpusError(f"{where}: patch of an object: needs object and one of merge or "
                              f"strategic (an object) or json (a list); got {raw!r}")
        return Step("patch-object", {"object": _object_path(where, arg["object"]),
                                     "type": kinds[0], "patch": arg[kinds[0]]})
    if action == "sleep" and isinstance(arg, int | float) and not isinstance(arg, bool) \
            and 0 < arg <= 300:
        return Step("sleep", float(arg))
    if action == "patch" and isinstance(arg, dict):
        return Step("patch", arg)
    raise CorpusError(f"{where}: unknown step {raw!r} (one of {STEP_FORMS})")


def _object_path(where: str, value: Any) -> str:
    """``<plural>/<name>[/<subresource>]``."""
    if not isinstance(value, str) or not 2 <= len(value.split("/")) <= 3 \
            or not all(value.split("/")):
        raise CorpusError(f"{where}: object: must be PLURAL/NAME or PLURAL/NAME/SUBRESOURCE, "
                          f"got {value!r}")
    return value
