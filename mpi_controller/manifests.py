"""Reading Kubernetes manifests as ``kubectl apply -f`` does, safely: files, directories,
stdin, multi-document YAML and ``kind: List``, each object with where it came from.

Contract (:func:`read_manifests`):

* ``-`` is stdin; a directory contributes its ``.yaml``, ``.yml`` and ``.json`` files in name
  order (its subdirectories too with ``recursive``); anything else is read as one file.
* Empty documents are skipped; a ``kind: List`` (or any ``*List`` with ``items``) contributes
  its items. Input with no object at all is an error (:class:`ManifestError`).
* Limits, each failing fast with a message that names it: a file larger than
  :data:`MAX_BYTES`; a document whose aliases expand to more than :data:`MAX_NODES` nodes
  (a "billion laughs" alias bomb is refused while it is still a few small nodes: nothing is
  expanded before the count).
* :func:`dump_manifests` writes objects back as one YAML stream (block style, keys in their
  order, multi-line strings as literal blocks).
* Every :class:`Manifest` keeps its YAML node: :meth:`Manifest.line_of` turns a field path
  (``spec.mpiReplicaSpecs[Worker].replicas``, as validation messages name fields) into the
  1-based line of the nearest field of that path present in the file.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = ["MAX_BYTES", "MAX_NODES", "Manifest", "ManifestError", "dump_manifests",
           "read_manifests"]

MAX_BYTES = 8 << 20
"""Largest manifest file read (8 MiB; the API server refuses requests above 3 MiB)."""
MAX_NODES = 200_000
"""Most YAML nodes one document may expand to, counting each alias as a copy of its target."""

EXTENSIONS = (".yaml", ".yml", ".json")
_PATH_TOKEN = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


class ManifestError(Exception):
    """Input that cannot be read as manifests; the message names the file (and line)."""


@dataclass(frozen=True)
class Manifest:
    """One object of the input: ``source`` (a path or ``<stdin>``), ``document`` (1-based
    number in the file), ``line`` (first line of the object) and ``item`` (its index in a
    ``kind: List``, else ``None``)."""

    source: str
    document: int
    line: int
    obj: Any
    node: yaml.Node
    item: int | None = None

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"

    def line_of(self, path: str) -> int:
        """The line of the deepest field of ``path`` present in the file (the object's first
        line when none is)."""
        node, line = self.node, self.line
        for key, index in _PATH_TOKEN.findall(path):
            token = key or index
            child = _child(node, token)
            if child is None:
                break
            node, line = child[1], child[0]
        return line


def _child(node: yaml.Node, token: str) -> tuple[int, yaml.Node] | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == token:
                return key.start_mark.line + 1, value
    elif (isinstance(node, yaml.SequenceNode) and token.isdigit()
          and int(token) < len(node.value)):
        item = node.value[int(token)]
        return item.start_mark.line + 1, item
    return None


def _expanded_size(node: yaml.Node, memo: dict[int, int], limit: int) -> int:
    """Nodes ``node`` expands to (aliases counted as copies), computed over the node graph
    with a memo; stops counting past ``limit``."""
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = limit + 1  # a cycle counts as too large
    total = 1
    if isinstance(node, yaml.MappingNode):
        children = [n for pair in node.value for n in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    else:
        children = []
    for child in children:
        total += _expanded_size(child, memo, limit)
        if total > limit:
            break
    memo[id(node)] = total
    return total


def _read(path: str) -> str:
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            stdin = getattr(sys.stdin, "buffer", None)
            data = (stdin.read(MAX_BYTES + 1) if stdin is not None
                    else sys.stdin.read(MAX_BYTES + 1).encode())
        else:
            with open(path, "rb") as fh:
                data = fh.read(MAX_BYTES + 1)
    except OSError as err:
        raise ManifestError(f"{name}: cannot read: {err.strerror or err}") from None
    if len(data) > MAX_BYTES:
        raise ManifestError(f"{name}: larger than {MAX_BYTES >> 20} MiB; refusing to read it")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ManifestError(f"{name}: not UTF-8 text (byte {err.start})") from None


def _yaml_error(name: str, err: yaml.YAMLError) -> ManifestError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    where = f":{mark.line + 1}" if mark is not None else ""
    reason = getattr(err, "problem", None) or str(err)
    return ManifestError(f"{name}{where}: invalid YAML: {reason}")


def _documents(name: str, text: str) -> Iterator[Manifest]:
    loader = yaml.SafeLoader(text)
    number = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            number += 1
            if node is None:
                continue
            if _expanded_size(node, {}, MAX_NODES) > MAX_NODES:
                raise ManifestError(
                    f"{name}:{node.start_mark.line + 1}: document {number} expands to more "
                    f"than {MAX_NODES} YAML nodes through its aliases; refusing it (an alias "
                    "bomb?)")
            obj = loader.construct_document(node)
            if obj is not None:
                yield from _items(Manifest(name, number, node.start_mark.line + 1, obj, node))
    except yaml.YAMLError as err:
        raise _yaml_error(name, err) from None
    finally:
        loader.dispose()


def _items(manifest: Manifest) -> Iterator[Manifest]:
    obj = manifest.obj
    if not (isinstance(obj, dict) and str(obj.get("kind", "")).endswith("List")
            and isinstance(obj.get("items"), list)):
        yield manifest
        return
    items = _child(manifest.node, "items")
    for index, item in enumerate(obj["items"]):
        node = items[1].value[index] if items is not None else manifest.node
        line = node.start_mark.line + 1
        if item is not None:
            yield Manifest(manifest.source, manifest.document, line, item, node, index)


def _files(path: str, recursive: bool) -> list[str]:
    if path == "-" or not os.path.isdir(path):
        return [path]
    found: list[str] = []
    for root, dirs, names in os.walk(path):
        dirs.sort()
        found += [os.path.join(root, n) for n in sorted(names) if n.endswith(EXTENSIONS)]
        if not recursive:
            break
    if not found:
        raise ManifestError(f"{path}: a directory with no {', '.join(EXTENSIONS)} files")
    return found


def read_manifests(paths: Sequence[str], *, recursive: bool = False) -> list[Manifest]:
    """Every object of ``paths`` (module docstring); ManifestError on the first problem."""
    found: list[Manifest] = []
    for path in paths:
        for file in _files(path, recursive):
            name = "<stdin>" if file == "-" else file
            found += _documents(name, _read(file))
    if not found:
        names = ", ".join("<stdin>" if p == "-" else p for p in paths)
        raise ManifestError(f"no objects in {names}: the input is empty")
    return found


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings as literal blocks."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not value.endswith(" ") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_manifests(objects: Sequence[Any]) -> str:
    """``objects`` as one YAML stream (module docstring)."""
    return str(yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False,
                             default_flow_style=False))
