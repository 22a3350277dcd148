"""``mpi-controller render``: print the objects the controller would create for MPIJobs,
TFJobs and PyTorchJobs.

Reads one or more manifests (``-f FILE``, ``-f -`` for stdin; multi-document YAML), defaults
and validates each job, and prints as one YAML stream, per job in creation order: for an
MPIJob the Service, ConfigMap, SSH Secret, PodGroup (with ``--gang-scheduling``), worker pods,
launcher Job; for a TFJob or PyTorchJob the HPA (an elastic PyTorchJob with metrics), the
PodGroup (with ``--gang-scheduling``), then per replica type its pods (with TF_CONFIG, or the
PyTorch environment and init container) and headless Services. Objects carry the controller's
owner reference (``metadata.uid`` of the manifest, or a placeholder). A suspended MPIJob gets
no PodGroup and no workers, and a suspended launcher; a suspended TFJob or PyTorchJob
nothing.

Exit status: 0 on success; 2 when a document cannot be read or parsed (the message names the
file and line), is not an MPIJob, TFJob or PyTorchJob (the message names its kind), or fails
validation
(the errors go to stderr, one per line). Nothing is printed to stdout unless every document is
valid.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import yaml

from mpi_controller.engine.training import gang as training_gang
from mpi_controller.engine.training.api import API_VERSION as TRAINING_API_VERSION
from mpi_controller.engine.training.api import replica_specs
from mpi_controller.engine.training.framework import TrainingFramework
from mpi_controller.engine.training.plan import initial_children, replica_pod
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.kube.jsonvalue import as_dict, as_str
from mpi_controller.mpi import constants as mpi_constants
from mpi_controller.mpi.children import in_creation_order
from mpi_controller.mpi.configmap import desired_config_map
from mpi_controller.mpi.gang import new_pod_group
from mpi_controller.mpi.launcher import launcher_template_events, new_launcher_job
from mpi_controller.mpi.secret import new_ssh_auth_secret
from mpi_controller.mpi.service import new_job_service
from mpi_controller.mpi.v2beta1.defaults import set_defaults
from mpi_controller.mpi.v2beta1.types import parse_mpi_job
from mpi_controller.mpi.v2beta1.validation import validate
from mpi_controller.mpi.worker import new_worker
from mpi_controller.pytorch import constants as pytorch_constants
from mpi_controller.pytorch.kind import PyTorch
from mpi_controller.pytorch.v1 import validation_warnings as pytorch_warnings
from mpi_controller.tensorflow import constants as tensorflow_constants
from mpi_controller.tensorflow.kind import TensorFlow

__all__ = ["PLACEHOLDER_UID", "RenderError", "add_render_parser", "render_command", "render_job"]

PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"

_DESCRIPTION = """\
Print, as a YAML stream, every object the controller would create for each MPIJob, TFJob and
PyTorchJob in the given manifests, in creation order. MPIJob: Service, ConfigMap, SSH Secret,
PodGroup (only with --gang-scheduling), worker pods, launcher Job. TFJob and PyTorchJob: the
HPA (an elastic PyTorchJob with metrics), PodGroup (only with --gang-scheduling), then per
replica type its pods (with TF_CONFIG, or the PyTorch environment) and headless Services.
Jobs are defaulted and validated first. Owner references use the manifest's metadata.uid, or a
placeholder UID.

The SSH Secret's key pair is freshly generated on every run (the controller generates its own
when it creates the Secret), so that part of the output differs between runs.

Exit status: 0 on success, 2 on unreadable or unparsable input, a document that is not an
MPIJob, TFJob or PyTorchJob, or validation errors (printed to stderr).
"""


class RenderError(Exception):
    """A problem with the input; its message is printed to stderr and the exit status is 2."""


@dataclass(frozen=True)
class _Options:
    cluster_domain: str
    gang_scheduling: str
    running_workers: int
    namespace: str
    priority_classes: dict[str, int]


def _priority_class(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    try:
        if not sep or not name:
            raise ValueError(text)
        return name, int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}") from None


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {value}")
    return value


def add_render_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``render`` subcommand to an ``argparse`` subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "render",
        help="print the objects the controller would create for MPIJob, TFJob and PyTorchJob "
        "manifests",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-f",
        "--filename",
        dest="files",
        action="append",
        required=True,
        metavar="FILE",
        help="MPIJob, TFJob or PyTorchJob manifest (multi-document YAML); '-' reads stdin; "
        "repeatable",
    )
    parser.add_argument(
        "--cluster-domain",
        default="",
        help="cluster domain appended to host names in hostfile, discover_hosts.sh and "
        "TF_CONFIG",
    )
    parser.add_argument(
        "--gang-scheduling",
        default="",
        metavar="NAME",
        help="'volcano', or a scheduler name (e.g. scheduler-plugins-scheduler) for "
        "scheduler-plugins; adds a PodGroup and decorates the pods",
    )
    parser.add_argument(
        "--running-workers",
        type=_non_negative,
        default=0,
        metavar="N",
        help="treat the first N workers as Running when filling discover_hosts.sh (default 0)",
    )
    parser.add_argument(
        "-n",
        "--namespace",
        default="default",
        help="namespace for manifests that set none (default 'default')",
    )
    parser.add_argument(
        "--priority-class",
        dest="priority_classes",
        type=_priority_class,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a PriorityClass value used to size PodGroup minResources; repeatable",
    )
    parser.set_defaults(handler=render_command)
    return parser


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise RenderError(f"{path}: cannot read: {exc}") from None


def _documents(path: str) -> Iterator[tuple[int, Any]]:
    """(1-based document number, document) for the non-empty documents of ``path``."""
    name = "<stdin>" if path == "-" else path
    try:
        docs = list(yaml.safe_load_all(_read(path)))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise RenderError(f"{name}{where}: invalid YAML: {reason}") from None
    for number, doc in enumerate(docs, start=1):
        if doc is not None:
            yield number, doc


_TRAINING_KINDS = (tensorflow_constants.KIND, pytorch_constants.KIND)


def _check_kind(name: str, number: int, doc: object) -> dict[str, Any]:
    where = f"{name}: document {number}"
    if not isinstance(doc, dict):
        raise RenderError(f"{where}: expected a mapping (an MPIJob, TFJob or PyTorchJob), got "
                          f"{type(doc).__name__}")
    kind, api_version = doc.get("kind"), doc.get("apiVersion")
    known = [(mpi_constants.KIND, mpi_constants.API_VERSION),
             *((k, TRAINING_API_VERSION) for k in _TRAINING_KINDS)]
    if (kind, api_version) not in known:
        expected = ", or ".join(f"kind {k!r}, apiVersion {v!r}" for k, v in known)
        raise RenderError(
            f"{where}: kind {kind!r} (apiVersion {api_version!r}) is not an MPIJob, TFJob or "
            f"PyTorchJob; expected {expected}"
        )
    return doc


def _is_training(job: dict[str, Any]) -> bool:
    return job.get("kind") in _TRAINING_KINDS


def _framework(job: dict[str, Any], options: _Options) -> TrainingFramework:
    if job.get("kind") == pytorch_constants.KIND:
        return PyTorch()
    return TensorFlow(cluster_domain=options.cluster_domain)


def _prepare(doc: dict[str, Any], options: _Options) -> dict[str, Any]:
    job = _framework(doc, options).set_defaults(doc) if _is_training(doc) else set_defaults(doc)
    meta = job["metadata"] = dict(as_dict(job.get("metadata")))
    meta.setdefault("namespace", options.namespace)
    meta.setdefault("uid", PLACEHOLDER_UID)
    return job


def _running_workers(job: dict[str, Any], options: _Options) -> list[dict[str, Any]]:
    count = min(options.running_workers, parse_mpi_job(job).worker_replicas)
    pods = [new_worker(job, i) for i in range(count)]
    for pod in pods:
        pod["status"] = {"phase": "Running"}
    return pods


def _render_training(job: dict[str, Any], options: _Options) -> list[dict[str, Any]]:
    return initial_children(_framework(job, options), job,
                            gang=training_gang.gang_scheduler(options.gang_scheduling),
                            priority=options.priority_classes.get)


def _training_warnings(job: dict[str, Any], options: _Options) -> list[str]:
    fw = _framework(job, options)
    gang = training_gang.gang_scheduler(options.gang_scheduling)
    specs = replica_specs(job, fw.replica_specs_field)
    messages: list[str] = pytorch_warnings(job) if job.get("kind") == pytorch_constants.KIND else []
    for spec in specs.values():
        for event in replica_pod(fw, job, specs, spec, 0, gang=gang)[1]:
            messages += [] if event.message in messages else [event.message]
    return messages


def _errors_and_warnings(job: dict[str, Any], options: _Options,
                         ) -> tuple[list[FieldError], list[str]]:
    if _is_training(job):
        errors = _framework(job, options).validate(job)
        return errors, [] if errors else _training_warnings(job, options)
    errors = validate(job)
    return errors, [] if errors else [e.message for e in launcher_template_events(job)]


def render_job(job: dict[str, Any], options: _Options) -> list[dict[str, Any]]:
    """The objects for one defaulted, valid MPIJob, TFJob or PyTorchJob, in creation order."""
    if _is_training(job):
        return _render_training(job, options)
    view = parse_mpi_job(job)
    gang = options.gang_scheduling
    objects: list[dict[str, Any]] = [
        new_job_service(job),
        desired_config_map(
            job, _running_workers(job, options), cluster_domain=options.cluster_domain
        ),
        new_ssh_auth_secret(job),
    ]
    if not view.suspended:
        pod_group = new_pod_group(
            job, gang_scheduling=gang, priority_classes=options.priority_classes
        )
        if pod_group is not None:
            objects.append(pod_group)
        if view.spec.worker is not None:
            objects += [
                new_worker(job, i, gang_scheduling=gang) for i in range(view.worker_replicas)
            ]
    objects.append(new_launcher_job(job, gang_scheduling=gang))
    return in_creation_order(objects)


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings as literal blocks."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not value.endswith(" ") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def _collect(files: Sequence[str], options: _Options, stderr: TextIO) -> list[dict[str, Any]]:
    """Parse, check and validate every document; raise RenderError listing all problems."""
    problems: list[str] = []
    jobs: list[dict[str, Any]] = []
    for path in files:
        name = "<stdin>" if path == "-" else path
        try:
            for number, doc in _documents(path):
                job = _prepare(_check_kind(name, number, doc), options)
                errors, warnings = _errors_and_warnings(job, options)
                meta = as_dict(job.get("metadata"))
                label = (f"{name}: {job.get('kind')} {as_str(meta.get('namespace'))}/"
                         f"{as_str(meta.get('name'))}")
                problems += [f"{label}: {err}" for err in errors]
                if not errors:
                    jobs.append(job)
                    for message in warnings:
                        print(f"{label}: warning: {message}", file=stderr)
        except RenderError as exc:
            problems.append(str(exc))
    if problems:
        raise RenderError("\n".join(problems))
    return jobs


def render_command(args: argparse.Namespace) -> int:
    """Handler of ``mpi-controller render``; returns the exit status."""
    options = _Options(
        cluster_domain=args.cluster_domain,
        gang_scheduling=args.gang_scheduling,
        running_workers=args.running_workers,
        namespace=args.namespace,
        priority_classes=dict(args.priority_classes),
    )
    try:
        jobs = _collect(args.files, options, sys.stderr)
    except RenderError as exc:
        print(f"error: {exc}".replace("\n", "\nerror: "), file=sys.stderr)
        return 2
    objects = [obj for job in jobs for obj in render_job(job, options)]
    sys.stdout.write(
        yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
    )
    return 0
