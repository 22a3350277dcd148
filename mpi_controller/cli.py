"""The ``mpi-controller`` command line: ``run``, ``render`` and ``version``.

``main(argv)`` returns the process exit code: 0 on success, 2 for bad input or usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mpi_controller import __version__

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpi-controller",
        description="A Python implementation of the Kubeflow MPI Operator (kubeflow.org/v2beta1).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("version", help="print the version and exit")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"mpi-controller {__version__}")
        return 0
    parser.print_help(sys.stderr)
    return 2
