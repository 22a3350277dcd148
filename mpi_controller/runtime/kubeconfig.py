"""Which API server a process talks to, and why not: kubeconfig selection and checks.

Contract:

* :func:`kubeconfig_source` picks the kubeconfig as client-go's ``BuildConfigFromFlags`` does:
  an explicit path (``--kubeConfig``) wins; else ``$KUBECONFIG`` (a list separated by
  ``os.pathsep``; files that do not exist are skipped, as client-go does); else
  ``~/.kube/config`` when it exists; else none (in-cluster).
* :func:`inspect_kubeconfig` reads the chosen files (merged as client-go merges them: the first
  ``current-context`` and the first entry of each name win) and returns the :class:`Target`
  (server, context, namespace), or raises :class:`ConfigError` with one line naming the file and
  what is wrong with it: missing, unreadable, not YAML (with the line), not a kubeconfig, no
  current context, a context or cluster that is not defined, a cluster without a server.
* Nothing here talks to the network; the caller builds its client from the same files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = ["ConfigError", "KubeconfigSource", "Target", "inspect_kubeconfig",
           "kubeconfig_source"]

DEFAULT_KUBECONFIG = "~/.kube/config"
MAX_KUBECONFIG_BYTES = 16 << 20


class ConfigError(Exception):
    """A configuration the process cannot start with; the message is one line."""


@dataclass(frozen=True)
class KubeconfigSource:
    """The kubeconfig files to read (empty: in-cluster) and where they came from, as a user
    would name it (``--kubeConfig /path``, ``$KUBECONFIG``, ``~/.kube/config``)."""

    paths: tuple[str, ...]
    origin: str


@dataclass(frozen=True)
class Target:
    """The API server a process uses: its URL, the kubeconfig context (``""`` in-cluster),
    the context's namespace (``""`` when it sets none) and the source."""

    server: str
    context: str
    namespace: str
    source: str


def kubeconfig_source(explicit: str, *, flag: str = "--kubeConfig",
                      environ: Mapping[str, str] | None = None) -> KubeconfigSource:
    """The kubeconfig to read: ``explicit`` first, then ``$KUBECONFIG``, then the default file.
    Raises ConfigError when ``$KUBECONFIG`` is set but names no existing file."""
    env = os.environ if environ is None else environ
    if explicit:
        return KubeconfigSource((explicit,), f"{flag} {explicit}")
    listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        existing = tuple(p for p in listed if os.path.exists(os.path.expanduser(p)))
        if not existing:
            raise ConfigError(f"$KUBECONFIG={env['KUBECONFIG']}: no such file")
        return KubeconfigSource(existing, f"$KUBECONFIG={env['KUBECONFIG']}")
    default = os.path.expanduser(DEFAULT_KUBECONFIG)
    if os.path.exists(default) and not env.get("KUBERNETES_SERVICE_HOST"):
        return KubeconfigSource((default,), default)
    return KubeconfigSource((), "in-cluster")


def _load(path: str, origin: str) -> dict[str, Any]:
    where = origin if origin.endswith(path) else f"{origin} ({path})"
    try:
        with open(os.path.expanduser(path), "rb") as fh:
            data = fh.read(MAX_KUBECONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{where}: is a directory, not a kubeconfig file") from None
    except OSError as err:
        raise ConfigError(f"{where}: cannot read: {err.strerror or err}") from None
    if len(data) > MAX_KUBECONFIG_BYTES:
        raise ConfigError(f"{where}: larger than {MAX_KUBECONFIG_BYTES >> 20} MiB; not a "
                          "kubeconfig")
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or "cannot parse"
        raise ConfigError(f"{where}: not a kubeconfig: invalid YAML{line}: {problem}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not a kubeconfig: not UTF-8 text") from None
    if doc is None:
        raise ConfigError(f"{where}: empty file, not a kubeconfig")
    if not isinstance(doc, dict) or not any(k in doc for k in ("clusters", "contexts",
                                                               "current-context")):
        got = type(doc).__name__ if not isinstance(doc, dict) else "a mapping without them"
        got = {"str": "plain text", "list": "a list"}.get(got, got)
        raise ConfigError(f"{where}: not a kubeconfig (expected clusters, contexts and "
                          f"current-context; got {got})")
    return doc


def _named(docs: Sequence[dict[str, Any]], section: str, key: str) -> dict[str, dict[str, Any]]:
    """First definition of each name in ``section`` (client-go's merge: first one wins)."""
    out: dict[str, dict[str, Any]] = {}
    for doc in docs:
        for entry in doc.get(section) or []:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                body = entry.get(key)
                out.setdefault(entry["name"], body if isinstance(body, dict) else {})
    return out


def inspect_kubeconfig(source: KubeconfigSource, *, context: str = "",
                       master: str = "") -> Target:
    """The target that ``source`` (with an explicit ``context`` or ``master``) selects;
    ConfigError naming what is wrong otherwise. ``source.paths`` must not be empty."""
    docs = [_load(path, source.origin) for path in source.paths]
    current = context or next((str(d["current-context"]) for d in docs
                               if d.get("current-context")), "")
    contexts = _named(docs, "contexts", "context")
    if not current:
        if master:
            return Target(master.rstrip("/"), "", "", source.origin)
        raise ConfigError(f"{source.origin}: no current-context set (kubectl config "
                          "use-context NAME)")
    if current not in contexts:
        known = ", ".join(contexts) or "none"
        raise ConfigError(f"{source.origin}: context {current!r} is not defined (contexts: "
                          f"{known})")
    ctx = contexts[current]
    namespace = str(ctx.get("namespace") or "")
    if master:
        return Target(master.rstrip("/"), current, namespace, source.origin)
    cluster_name = str(ctx.get("cluster") or "")
    clusters = _named(docs, "clusters", "cluster")
    if cluster_name not in clusters:
        raise ConfigError(f"{source.origin}: context {current!r} names cluster "
                          f"{cluster_name!r}, which is not defined")
    server = str(clusters[cluster_name].get("server") or "")
    if not server:
        raise ConfigError(f"{source.origin}: cluster {cluster_name!r} has no server")
    return Target(server.rstrip("/"), current, namespace, source.origin)
