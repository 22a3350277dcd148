"""The ``mpi-controller`` command line: ``run``, ``render`` and ``version``.

``main(argv)`` returns the process exit code: 0 on success, 2 for bad input or usage.

``run`` sets the collector's thresholds to :data:`GC_THRESHOLDS` before it starts: the caches
hold tens of thousands of long-lived objects (9000 cached pods: ~150,000), and with Python's
defaults (700, 10, 10) filling them at start-up costs a full collection every time the heap
grows by a quarter, each one walking every cached object.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mpi_controller import __version__
from mpi_controller.options import add_run_arguments, options_from_args
from mpi_controller.render import add_render_parser

__all__ = ["GC_THRESHOLDS", "main"]

GC_THRESHOLDS = (50_000, 20, 10)
"""Young-generation collections every 50,000 net allocations (not 700): a steady restart with
9000 cached pods spends ~0.25 s instead of ~0.45 s in the collector (``bench/harness.py
--workloads steady``; figures in docs/benchmarks.md)."""


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
    import gc

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
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        return asyncio.run(app.run(opts))
    except KeyboardInterrupt:
        return 130
