"""The ``mpi-controller`` command line: ``run``, ``render`` and ``version``.

``main(argv)`` returns the process exit code: 0 on success, 2 for bad input or usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mpi_controller import __version__
from mpi_controller.options import add_run_arguments, options_from_args
from mpi_controller.render import add_render_parser

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpi-controller",
        description="A Python implementation of the Kubeflow MPI Operator (kubeflow.org/v2beta1).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("version", help="print the version and exit")
    run = sub.add_parser("run", help="run the controller against a cluster")
    add_run_arguments(run)
    add_render_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"mpi-controller {__version__}")
        return 0
    if args.command == "render":
        return int(args.handler(args))
    if args.command == "run":
        return _run(args)
    parser.print_help(sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from mpi_controller import app, logging

    if args.version:
        print(f"mpi-controller {__version__}")
        return 0
    try:
        opts = options_from_args(args)
    except ValueError as err:
        print(f"mpi-controller run: {err}", file=sys.stderr)
        return 2
    logging.configure(opts.log_format, opts.log_level)
    try:
        return asyncio.run(app.run(opts))
    except KeyboardInterrupt:
        return 130
