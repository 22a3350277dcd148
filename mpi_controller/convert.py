"""``mpi-controller convert``: rewrite job manifests in another API version of their kind, with
the conversion the CRD's conversion webhook uses (MPIJob: ``kubeflow.org/v2beta1``, ``v1``,
``v1alpha2``; :attr:`~mpi_controller.engine.plugin.KindPlugin.convert`).

Reads manifests as ``render`` does (:func:`~mpi_controller.manifests.read_manifests`: files,
directories, stdin, ``kind: List``); prints the converted objects as one YAML stream in input
order. Objects already in the requested version are printed unchanged. Exit status 0; 2 when
the input cannot be read, holds an object of a kind that has no such version, or an object
cannot be converted (each problem on stderr with its file and line; nothing on stdout).

A conversion that loses fields records them in the object's annotations (as the webhook does),
so converting back gives the original.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mpi_controller.kinds import plugins
from mpi_controller.manifests import ManifestError, dump_manifests, read_manifests

__all__ = ["add_convert_parser", "convert_command"]


def add_convert_parser(subparsers: Any) -> argparse.ArgumentParser:
    versions = sorted({f"{p.group}/{v}" for p in plugins() if p.convert for v in p.api_versions})
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "convert", help="convert job manifests between API versions (MPIJob v2beta1, v1, "
        "v1alpha2)",
        description="Print the manifests converted to --to, with the conversion webhook's "
        f"conversion. Versions: {', '.join(versions)}. Exit status 0, or 2 on bad input.")
    parser.add_argument("-f", "--filename", dest="files", action="append", required=True,
                        metavar="FILE", help="manifest file or directory; '-' reads stdin; "
                        "repeatable")
    parser.add_argument("-R", "--recursive", action="store_true",
                        help="with -f DIR, also read the directories under it")
    parser.add_argument("--to", required=True, metavar="VERSION",
                        help="the version to write, e.g. v2beta1 or kubeflow.org/v1")
    parser.set_defaults(handler=convert_command)
    return parser


def _convert(obj: Any, to: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a mapping, got {type(obj).__name__}")
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    for described in plugins():
        versions = [f"{described.group}/{v}" for v in described.api_versions]
        if kind != described.kind or api_version not in versions:
            continue
        version = to.rpartition("/")[2]
        if version not in described.api_versions or (
                "/" in to and not to.startswith(f"{described.group}/")):
            raise ValueError(f"{kind} has no version {to!r} (versions: {', '.join(versions)})")
        if api_version == f"{described.group}/{version}":
            return obj
        if described.convert is None:
            raise ValueError(f"{kind} has no conversion")
        return dict(described.convert(obj, version))
    raise ValueError(f"kind {kind!r} (apiVersion {api_version!r}) is not a job kind served here")


def convert_command(args: argparse.Namespace) -> int:
    """Handler of ``mpi-controller convert``; returns the exit status."""
    try:
        manifests = read_manifests(args.files, recursive=args.recursive)
    except ManifestError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for manifest in manifests:
        try:
            out.append(_convert(manifest.obj, args.to))
        except ValueError as err:
            problems.append(f"error: {manifest.where}: {err}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    sys.stdout.write(dump_manifests(out))
    return 0

