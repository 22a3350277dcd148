"""A differential corpus: the jobs, the flag groups they run in, and what to do with each.

A corpus is a directory: ``groups.yaml`` and one ``<case>.yaml`` per job.

``groups.yaml``::

    flags: [--threadiness, "2"]            # given to both operators in every group
    patch: {spec: {...}}                   # merged into every job before its own patch
    groups:
      default: {}
      volcano: {flags: [--gang-scheduling, volcano], resources: [volcano-podgroups]}

A case file::

    description: what the case covers
    group: default                        # the flag group it runs in
    short: true                           # also part of the short form (make test)
    manifest: upstream:examples/v2beta1/pi/pi.yaml   # or an inline object
    patch: {spec: {slotsPerWorker: 2}}    # JSON merge patch applied to the manifest
    create_error: false                   # true: the API server must refuse it (both sides)
    steps:                                # run in order once the job is created
      - wait: Succeeded                   # a condition of this type becomes True
      - wait: {event: ValidationError}    # an Event with this reason on the job
      - patch: {spec: {runPolicy: {suspend: false}}}

``upstream:PATH`` is read from the reference operator's module source (the Go module cache),
so upstream's examples are used as they are without being copied here. The job is named after
the case file. Loading checks the shape and says which file and field is wrong.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]


class CorpusError(ValueError):
    """A corpus file is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class Step:
    action: str          # "wait-condition", "wait-event", "patch"
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


@dataclass
class Corpus:
    path: Path
    flags: list[str]
    groups: dict[str, Group]
    cases: list[Case]

    def in_group(self, group: str, *, short: bool = False) -> list[Case]:
        return [c for c in self.cases if c.group == group and (c.short or not short)]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (a ``null`` removes the key)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def load(path: Path, upstream: Callable[[str], Path] | None = None) -> Corpus:
    """Load the corpus in ``path``; ``upstream(rel)`` resolves ``upstream:`` manifests."""
    groups_file = path / "groups.yaml"
    raw = _yaml(groups_file)
    flags = _str_list(raw.get("flags", []), groups_file, "flags")
    groups = {}
    for name, spec in (raw.get("groups") or {}).items():
        spec = spec or {}
        groups[name] = Group(name, _str_list(spec.get("flags", []), groups_file,
                                             f"groups.{name}.flags"),
                             _str_list(spec.get("resources", []), groups_file,
                                       f"groups.{name}.resources"))
    if "default" not in groups:
        raise CorpusError(f"{groups_file}: groups: a group named 'default' is required")
    common = raw.get("patch") or {}
    if not isinstance(common, dict):
        raise CorpusError(f"{groups_file}: patch: must be an object")
    cases = [_case(f, groups, upstream, common) for f in sorted(path.glob("*.yaml"))
             if f.name != "groups.yaml"]
    if not cases:
        raise CorpusError(f"{path}: no case files")
    return Corpus(path, flags, groups, cases)


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


def _case(path: Path, groups: dict[str, Group], upstream: Callable[[str], Path] | None,
          common: Obj) -> Case:
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
        if upstream is None:
            raise CorpusError(f"{path}: manifest: upstream files need the reference module")
        manifest = _yaml(upstream(manifest.removeprefix("upstream:")))
    if not isinstance(manifest, dict):
        raise CorpusError(f"{path}: manifest: must be an object or 'upstream:PATH'")
    manifest = merge_patch(merge_patch(manifest, common), raw.get("patch") or {})
    manifest.setdefault("metadata", {})["name"] = name
    manifest["metadata"].pop("namespace", None)
    steps = [_step(path, i, s) for i, s in enumerate(raw.get("steps") or [])]
    return Case(name=name, description=str(raw.get("description", "")), group=group,
                short=bool(raw.get("short", False)), manifest=manifest,
                create_error=bool(raw.get("create_error", False)), steps=steps)


def _step(path: Path, index: int, raw: Any) -> Step:
    where = f"{path}: steps[{index}]"
    if not isinstance(raw, dict) or len(raw) != 1:
        raise CorpusError(f"{where}: must be one of wait: TYPE, wait: {{event: REASON}}, "
                          f"patch: {{...}}; got {raw!r}")
    (action, arg), = raw.items()
    if action == "wait" and isinstance(arg, str):
        return Step("wait-condition", arg)
    if action == "wait" and isinstance(arg, dict) and set(arg) == {"event"}:
        return Step("wait-event", str(arg["event"]))
    if action == "patch" and isinstance(arg, dict):
        return Step("patch", arg)
    raise CorpusError(f"{where}: unknown step {raw!r}")
