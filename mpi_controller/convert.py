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

``--to trainer.kubeflow.org/v1alpha1`` (or ``v1alpha1``) goes from the v1 kinds to Kubeflow
Trainer v2 (:mod:`mpi_controller.trainjob.from_v1`): a PyTorchJob, XGBoostJob, JAXJob or an
MPIJob (any version) becomes its ``TrainJob``, preceded, where the shipped runtime
(``torch-distributed``, ...) does not fit, by a ``TrainingRuntime`` of the same name. Each field
with no equivalent is a warning on stderr (``warning: FILE:LINE: KIND NS/NAME: FIELD: why``) and
notes on behaviour that is no field are ``note:`` lines; exit status 0. With ``--strict`` the
losses are errors: nothing on stdout, exit status 1. Another kind is a usage error (2).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mpi_controller.kinds import plugins
from mpi_controller.manifests import Manifest, ManifestError, dump_manifests, read_manifests
from mpi_controller.trainjob import constants as trainer

__all__ = ["TRAINER_VERSION", "add_convert_parser", "convert_command"]

TRAINER_VERSION = f"{trainer.GROUP}/{trainer.VERSION}"


def add_convert_parser(subparsers: Any) -> argparse.ArgumentParser:
    versions = sorted({f"{p.group}/{v}" for p in plugins() if p.convert for v in p.api_versions})
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "convert", help="convert job manifests between API versions (MPIJob v2beta1, v1, "
        "v1alpha2), or a v1 job to its Trainer v2 TrainJob",
        description="Print the manifests converted to --to, with the conversion webhook's "
        f"conversion. Versions: {', '.join(versions)}. With --to {TRAINER_VERSION}: the "
        "TrainJob (and TrainingRuntime) equivalent to a PyTorchJob, XGBoostJob, JAXJob or "
        "MPIJob, each field "
        "with no equivalent a warning on stderr. Exit status 0; 1 with --strict when a field "
        "has no equivalent; 2 on bad input.")
    parser.add_argument("-f", "--filename", dest="files", action="append", required=True,
                        metavar="FILE", help="manifest file or directory; '-' reads stdin; "
                        "repeatable")
    parser.add_argument("-R", "--recursive", action="store_true",
                        help="with -f DIR, also read the directories under it")
    parser.add_argument("--to", required=True, metavar="VERSION",
                        help="the version to write, e.g. v2beta1, kubeflow.org/v1, or "
                        f"{TRAINER_VERSION} (Trainer v2: from PyTorchJob, XGBoostJob, JAXJob, "
                        "MPIJob)")
    parser.add_argument("--strict", action="store_true",
                        help=f"with --to {TRAINER_VERSION}: fail (exit status 1, nothing "
                        "printed) when a field has no equivalent")
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


def _to_v2beta1(obj: Any) -> dict[str, Any]:
    return _convert(obj, "kubeflow.org/v2beta1")


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {namespace}{meta.get('name')}"


def _to_trainer(manifests: list[Manifest], strict: bool) -> int:
    """``--to trainer.kubeflow.org/v1alpha1`` (module doc)."""
    from mpi_controller.trainjob.from_v1 import NotConvertible, to_trainer  # not for `run`

    out: list[dict[str, Any]] = []
    problems: list[str] = []
    losses: list[str] = []
    notes: dict[str, None] = {}
    for manifest in manifests:
        if not isinstance(manifest.obj, dict):
            problems.append(f"error: {manifest.where}: expected a mapping, got "
                            f"{type(manifest.obj).__name__}")
            continue
        try:
            converted = to_trainer(manifest.obj, _to_v2beta1)
        except (NotConvertible, ValueError) as err:
            problems.append(f"error: {manifest.where}: {err}")
            continue
        out += converted.objects
        name = _name(manifest.obj)
        losses += [f"{manifest.source}:{manifest.line_of(loss.field)}: {name}: {loss}"
                   for loss in converted.losses]
        notes.update({f"note: {name}: {note}": None for note in converted.notes})
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    if strict and losses:
        print("\n".join(f"error: {line}" for line in losses), file=sys.stderr)
        return 1
    for line in [*(f"warning: {line}" for line in losses), *notes]:
        print(line, file=sys.stderr)
    sys.stdout.write(dump_manifests(out))
    return 0


def convert_command(args: argparse.Namespace) -> int:
    """Handler of ``mpi-controller convert``; returns the exit status."""
    try:
        manifests = read_manifests(args.files, recursive=args.recursive)
    except ManifestError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.to in (TRAINER_VERSION, trainer.VERSION):
        return _to_trainer(manifests, args.strict)
    if args.strict:
        print(f"error: --strict goes with --to {TRAINER_VERSION}", file=sys.stderr)
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

