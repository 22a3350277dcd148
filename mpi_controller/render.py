"""``mpi-controller render``: print the objects the controller would create for jobs of every
kind it serves (:mod:`mpi_controller.kinds`; each kind's
:class:`~mpi_controller.engine.plugin.Renderer`).

Reads one or more manifests (``-f FILE``, ``-f DIR`` (``-R``: with its subdirectories), ``-f
-`` for stdin; multi-document YAML, ``kind: List``; :mod:`mpi_controller.manifests`, with its
size and alias-expansion limits), converts a job of an older version its CRD serves (MPIJob
``v1``, ``v1alpha2``) with the conversion webhook's conversion (a warning says the older
generation's launch mode is not shown), defaults and validates each job, and prints as one YAML
stream, per job in creation order, what the first sync of the job creates: for an MPIJob the
Service, ConfigMap, SSH Secret, PodGroup (with ``--gang-scheduling``), worker pods, launcher
Job; for a training-operator kind (TFJob, PyTorchJob, ...) its companions (an elastic
PyTorchJob's HPA), the PodGroup (with ``--gang-scheduling``), then per replica type its pods
(with the kind's environment) and headless Services; for a TrainJob (``trainer.kubeflow.org/
v1alpha1``) on a runtime given with ``-f`` (a ``ClusterTrainingRuntime`` or
``TrainingRuntime`` manifest) or shipped in ``deploy/runtimes``, the MPI SSH Secret and
hostfile ConfigMap (MPI runtimes), then its JobSet. Objects carry the controller's owner
reference (``metadata.uid`` of the manifest, or a placeholder). A suspended MPIJob gets no
PodGroup and no workers, and a suspended launcher; a suspended training job nothing.

Exit status: 0 on success; 2 when the input is empty, too large, an alias bomb, or a document
cannot be read or parsed (the message names the file and line), is not a job of a kind served
(the message names its kind), or fails validation (the errors go to stderr, one per line, each
with the file and the line of the field). Nothing is printed to stdout unless every
document is valid.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from mpi_controller.engine.plugin import KindPlugin, RenderOptions
from mpi_controller.kinds import plugins
from mpi_controller.kube.jsonvalue import as_dict, as_str, json_copy
from mpi_controller.manifests import Manifest, ManifestError, dump_manifests, read_manifests
from mpi_controller.trainjob import constants as trainer

if TYPE_CHECKING:  # the TrainJob renderer is imported when used: `run` never needs it
    from mpi_controller.trainjob.render import Runtimes

__all__ = ["PLACEHOLDER_UID", "RenderError", "add_render_parser", "render_command", "render_job"]

PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"

_DESCRIPTION = """\
Print, as a YAML stream, every object the controller would create for each job in the given
manifests (MPIJob, and every kubeflow.org/v1 training kind it serves), in creation order.
MPIJob: Service, ConfigMap, SSH Secret, PodGroup (only with --gang-scheduling), worker pods,
launcher Job. Training kinds (TFJob, PyTorchJob, ...): the HPA (an elastic PyTorchJob with
metrics), PodGroup (only with --gang-scheduling), then per replica type its pods (with the
kind's environment) and headless Services. TrainJob (trainer.kubeflow.org/v1alpha1): the SSH
Secret and hostfile ConfigMap (MPI runtimes), then the JobSet, on the runtime it names: a
ClusterTrainingRuntime or TrainingRuntime given with -f, else one shipped in deploy/runtimes
(in a source checkout). Jobs are defaulted and validated first. Owner
references use the manifest's metadata.uid, or a placeholder UID.

The SSH Secret's key pair is freshly generated on every run (the controller generates its own
when it creates the Secret), so that part of the output differs between runs.

Input: files, directories (-R: recursively), '-' for stdin; multi-document YAML and kind: List.
MPIJobs of kubeflow.org/v1 and v1alpha2 are converted to v2beta1 first (as the conversion
webhook does); their generation's own launch mode is not shown.

Exit status: 0 on success, 2 on empty, unreadable or unparsable input, a document that is not
a job of a kind served, or validation errors (printed to stderr with file and line).
"""


class RenderError(Exception):
    """A problem with the input; its message is printed to stderr and the exit status is 2."""


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
        help="print the objects the controller would create for job manifests",
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
        help="job manifest (multi-document YAML, kind: List), or a directory of them; '-' "
        "reads stdin; repeatable",
    )
    parser.add_argument(
        "-R",
        "--recursive",
        action="store_true",
        help="with -f DIR, also read the directories under it",
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


def _renderable() -> list[tuple[KindPlugin, str]]:
    """(kind, apiVersion) pairs ``render`` reads: each kind's version the controller reads."""
    return [(p, f"{p.group}/{p.version}") for p in plugins() if p.renderer is not None]


def _kind_names() -> str:
    names = [p.kind for p, _ in _renderable()]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def _check_kind(where: str, doc: object) -> tuple[KindPlugin, dict[str, Any]]:
    """The kind of ``doc`` and the object in the version the controller reads: a job of
    another version the kind's CRD serves (MPIJob ``v1``, ``v1alpha2``) goes through the
    kind's conversion (the conversion webhook's)."""
    if not isinstance(doc, dict):
        raise RenderError(f"{where}: expected a mapping (an {_kind_names()}), got "
                          f"{type(doc).__name__}")
    kind, api_version = doc.get("kind"), doc.get("apiVersion")
    for described, served in _renderable():
        if (kind, api_version) == (described.kind, served):
            return described, doc
        versions = [f"{described.group}/{v}" for v in described.api_versions]
        if kind == described.kind and api_version in versions and described.convert:
            try:
                return described, json_copy(described.convert(doc, described.version))
            except ValueError as err:
                raise RenderError(f"{where}: {kind} {api_version}: cannot convert to "
                                  f"{served}: {err}") from None
    expected = ", or ".join(f"kind {p.kind!r}, apiVersion "
                            f"{' or '.join(repr(f'{p.group}/{v}') for v in p.api_versions)}"
                            for p, _ in _renderable())
    raise RenderError(f"{where}: kind {kind!r} (apiVersion {api_version!r}) is not an "
                      f"{_kind_names()}; expected {expected}")


def _converted_note(origin: object, job: dict[str, Any]) -> str:
    return (f"rendered through the conversion from {origin} to {job.get('apiVersion')}: these "
            f"are the {job.get('apiVersion')} objects; the controller launches a job created "
            f"as {origin} in that generation's own mode, which render does not show")


def _prepare(described: KindPlugin, doc: dict[str, Any],
             options: RenderOptions) -> dict[str, Any]:
    assert described.renderer is not None
    job = described.renderer.prepare(doc, options)
    meta = job["metadata"] = dict(as_dict(job.get("metadata")))
    meta.setdefault("namespace", options.namespace)
    meta.setdefault("uid", PLACEHOLDER_UID)
    return job


def render_job(job: dict[str, Any], options: RenderOptions) -> list[dict[str, Any]]:
    """The objects for one defaulted, valid job of a kind ``render`` reads, in creation
    order."""
    described, _ = _check_kind("job", job)
    assert described.renderer is not None
    return described.renderer.objects(job, options)


def _is_trainjob(obj: object) -> bool:
    return isinstance(obj, dict) and (obj.get("kind"), obj.get("apiVersion")) == (
        trainer.KIND, f"{trainer.GROUP}/{trainer.VERSION}")


def _runtimes(manifests: Sequence[Manifest], namespace: str) -> Runtimes:
    """The shipped runtimes (a source checkout's ``deploy/runtimes``), then the given ones."""
    from mpi_controller.trainjob.render import Runtimes, is_runtime, shipped_runtimes

    runtimes = Runtimes()
    for runtime in shipped_runtimes():
        runtimes.add(runtime)
    for manifest in manifests:
        if is_runtime(manifest.obj):
            runtimes.add(manifest.obj, namespace=namespace)
    return runtimes


def _trainjob(manifest: Manifest, runtimes: Runtimes, namespace: str) -> list[dict[str, Any]]:
    job = dict(manifest.obj)
    meta = job["metadata"] = dict(as_dict(job.get("metadata")))
    meta.setdefault("namespace", namespace)
    meta.setdefault("uid", PLACEHOLDER_UID)
    from mpi_controller.trainjob.render import TrainJobRenderError, render_trainjob

    try:
        return render_trainjob(job, runtimes)
    except TrainJobRenderError as err:
        raise RenderError(f"{manifest.where}: TrainJob {meta['namespace']}/"
                          f"{as_str(meta.get('name'))}: {err}") from None


def _collect(files: Sequence[str], options: RenderOptions, stderr: TextIO, *,
             recursive: bool = False) -> list[list[dict[str, Any]]]:
    """Parse, check and validate every object (:func:`read_manifests`); the objects of each
    job; raise RenderError listing all problems, each with its file and line. TrainJobs are
    rendered on the runtimes given beside them or shipped (:mod:`mpi_controller.trainjob.
    render`)."""
    from mpi_controller.trainjob.render import is_runtime

    try:
        manifests = read_manifests(files, recursive=recursive)
    except ManifestError as exc:
        raise RenderError(str(exc)) from None
    problems: list[str] = []
    jobs: list[list[dict[str, Any]]] = []
    runtimes = _runtimes(manifests, options.namespace)
    for manifest in manifests:
        if is_runtime(manifest.obj):
            continue
        if _is_trainjob(manifest.obj):
            try:
                jobs.append(_trainjob(manifest, runtimes, options.namespace))
            except RenderError as exc:
                problems.append(str(exc))
            continue
        try:
            described, checked = _check_kind(manifest.where, manifest.obj)
        except RenderError as exc:
            problems.append(str(exc))
            continue
        job = _prepare(described, checked, options)
        assert described.renderer is not None
        errors, warnings = described.renderer.check(job, options)
        meta = as_dict(job.get("metadata"))
        name = f"{job.get('kind')} {as_str(meta.get('namespace'))}/{as_str(meta.get('name'))}"
        problems += [f"{manifest.source}:{manifest.line_of(err.field)}: {name}: {err}"
                     for err in errors]
        if not errors:
            jobs.append(render_job(job, options))
            origin = manifest.obj.get("apiVersion")
            if origin != checked.get("apiVersion"):
                warnings = [*warnings, _converted_note(origin, checked)]
            for message in warnings:
                print(f"{manifest.source}: {name}: warning: {message}", file=stderr)
    if problems:
        raise RenderError("\n".join(problems))
    return jobs


def render_command(args: argparse.Namespace) -> int:
    """Handler of ``mpi-controller render``; returns the exit status."""
    options = RenderOptions(
        cluster_domain=args.cluster_domain,
        gang_scheduling=args.gang_scheduling,
        running_workers=args.running_workers,
        namespace=args.namespace,
        priority_classes=dict(args.priority_classes),
    )
    try:
        jobs = _collect(args.files, options, sys.stderr, recursive=args.recursive)
    except RenderError as exc:
        print(f"error: {exc}".replace("\n", "\nerror: "), file=sys.stderr)
        return 2
    objects = [obj for job in jobs for obj in job]
    sys.stdout.write(dump_manifests(objects))
    return 0
