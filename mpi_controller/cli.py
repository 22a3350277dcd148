"""The ``mpi-controller`` command line: ``run``, ``render``, ``convert`` (:mod:`.convert`),
``version`` and ``completion`` (:mod:`.completion`).

``main(argv)`` returns the process exit code: 0 on success, 2 for a usage error (an unknown
flag, a flag value out of range: the message names the flag), 1 when ``run`` cannot start with
the configuration it was given (a kubeconfig that is missing or is not one, an API server that
cannot be reached or refuses the credentials): one line on stderr, never a traceback.

``--help`` lists each flag once (``--name``; Go's ``-name`` and the aliases are accepted but
not listed), grouped, with its default in Go's ``flag`` style.

``run`` sets the collector's thresholds to :data:`GC_THRESHOLDS` before it starts: the caches
hold tens of thousands of long-lived objects (9000 cached pods: ~150,000), and with Python's
defaults (700, 10, 10) filling them at start-up costs a full collection every time the heap
grows by a quarter, each one walking every cached object. It also lowers asyncio's TLS read
buffer per connection (:mod:`mpi_controller.runtime.tlsbuffer`: 256 KiB to 16 KiB, one
connection per watch), and runs on an event loop that gathers messages for
``--wakeup-gather`` seconds while busy (:mod:`mpi_controller.runtime.eventloop`).

Importing this module installs :mod:`mpi_controller.startcache` (the dataclasses' generated
methods compiled once and kept beside the bytecode); :func:`main` finishes it once the command's
modules are imported.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from mpi_controller import startcache

startcache.install()  # before the modules whose dataclasses it compiles (until finish())

import mpi_controller  # noqa: E402
from mpi_controller.completion import add_completion_parser, subcommands  # noqa: E402
from mpi_controller.convert import add_convert_parser  # noqa: E402
from mpi_controller.engine.plugin import KindPlugin  # noqa: E402
from mpi_controller.kinds import plugins  # noqa: E402
from mpi_controller.options import add_run_arguments, options_from_args  # noqa: E402
from mpi_controller.render import add_render_parser  # noqa: E402

__all__ = ["GC_THRESHOLDS", "HelpFormatter", "build_parser", "main"]

GC_THRESHOLDS = (50_000, 20, 10)
"""Young-generation collections every 50,000 net allocations (not 700): a steady restart with
9000 cached pods spends ~0.25 s instead of ~0.45 s in the collector (``bench/harness.py
--workloads steady``; figures in docs/benchmarks.md)."""

class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Go ``flag``-style help: each flag once (its first ``--`` spelling) with a type word
    (``int``, ``float``, ``string``) and ``(default X)`` when the default is not empty."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=34, width=100)

    def _get_default_metavar_for_optional(self, action: argparse.Action) -> str:
        kind: object = action.type
        return "int" if kind is int else "float" if kind is float else "string"

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings:
            return super()._format_action_invocation(action)
        name = next((s for s in action.option_strings if s.startswith("--")),
                    action.option_strings[0])
        if action.nargs == 0:
            return name
        default = self._get_default_metavar_for_optional(action)
        return f"{name} {self._format_args(action, default)}"

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        value: Any = action.default
        if (action.nargs == 0 or value in (None, "", [], argparse.SUPPRESS)
                or "default" in text):
            return text
        shown = f'"{value}"' if isinstance(value, str) else f"{value:g}" if isinstance(
            value, float) else str(value)
        return f"{text} (default {shown})".replace("%", "%%")


def _description() -> str:
    """The kinds served: MPIJob with its versions, the other ``kubeflow.org/v1`` kinds, then
    those of other groups (TrainJob) with their group and versions."""
    def versioned(p: KindPlugin) -> str:
        return f"{p.kind} ({p.group}/{', '.join(p.api_versions)})"
    v1 = [p.kind if p.scheme != "mpijob" else versioned(p) for p in plugins()
          if p.group == "kubeflow.org"]
    others = "".join(f", and {versioned(p)}" for p in plugins() if p.group != "kubeflow.org")
    return textwrap.fill("A Python implementation of the Kubeflow training operators, serving "
                         f"{', '.join(v1[:-1])} and {v1[-1]} (kubeflow.org/v1){others}.", 90)


def _version_line() -> str:
    return f"mpi-controller {mpi_controller.__version__}"


class _VersionAction(argparse.Action):
    """``--version``: argparse's ``version`` action, with the version read only when asked
    (reading it imports ``importlib.metadata``, which ``run`` never needs)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(_version_line())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The whole command line (``completion`` reads it too)."""
    parser = argparse.ArgumentParser(prog="mpi-controller", description=_description(),
                                     formatter_class=HelpFormatter)
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run the controller against a cluster",
                         formatter_class=HelpFormatter, usage="%(prog)s [flags]",
                         description="Run the controller. Flags mirror the Go operators' "
                                     "(Go's -name spelling works too).")
    add_run_arguments(run)
    add_render_parser(sub)
    add_convert_parser(sub)
    sub.add_parser("version", help="print the version and exit")
    add_completion_parser(sub)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args``, but an unknown flag after a command is that command's usage
    error (``usage: mpi-controller run [flags]`` and ``mpi-controller run: error: ...``, as
    its bad values are), not the top level's."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        target = subcommands(parser).get(args.command or "", parser)
        target.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = _parse(parser, argv)
    if args.command != "run":
        startcache.finish()  # run's own imports come first
    if args.command == "version":
        print(_version_line())
        return 0
    if args.command == "run":
        return _run(args)
    if args.command is not None:
        return int(args.handler(args))
    parser.print_help(sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    import asyncio
    import gc
    from functools import partial

    from mpi_controller import app, logging
    from mpi_controller.runtime.eventloop import new_event_loop
    from mpi_controller.runtime.kubeconfig import ConfigError
    from mpi_controller.runtime.tlsbuffer import limit_tls_read_buffer

    startcache.finish()
    if args.version:
        print(_version_line())
        return 0
    try:
        opts = options_from_args(args)
    except ValueError as err:
        print(f"mpi-controller run: {err}", file=sys.stderr)
        return 2
    logging.configure(opts.log_format, opts.log_level)
    gc.set_threshold(*GC_THRESHOLDS)
    limit_tls_read_buffer()
    try:
        with asyncio.Runner(loop_factory=partial(new_event_loop, opts.wakeup_gather)) as runner:
            return runner.run(app.run(opts))
    except (ConfigError, OSError) as err:
        print(f"mpi-controller run: {err}", file=sys.stderr)
        return 1
    except ExceptionGroup as group:
        # A port that cannot be bound (--monitoring-port, --webhook-server-port) fails a task
        # of the manager's group: the same one line; anything else keeps its traceback.
        matched, rest = group.split((ConfigError, OSError))
        if matched is None or rest is not None:
            raise
        for leaf in _leaves(matched):
            print(f"mpi-controller run: {leaf}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    return [leaf for err in group.exceptions
            for leaf in (_leaves(err) if isinstance(err, BaseExceptionGroup) else [err])]
