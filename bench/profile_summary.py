"""Summarize a py-spy ``--format raw`` profile (collapsed stacks): the functions with the most
samples on the stack (inclusive) and at the top of the stack (self).

    .venv/bin/python bench/profile_summary.py bench-results/burst-controller.profile.txt \
        [-n 25] [--busy] [--functions]

``--busy`` leaves out idle samples (the event loop waiting in ``select``) and start-up imports
(any stack through ``_find_and_load``), so the shares are of the time the controller worked.
``--functions`` counts a function's samples together whatever its line (``name (file)``
instead of ``name (file:line)``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path


def _function(frame: str) -> str:
    """``name (file:line)`` without its line."""
    head, sep, tail = frame.rpartition(":")
    return f"{head})" if sep and tail.rstrip(")").isdigit() else frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("-n", type=int, default=25)
    parser.add_argument("--busy", action="store_true",
                        help="leave out idle samples and start-up imports")
    parser.add_argument("--functions", action="store_true",
                        help="one entry per function, not per line")
    args = parser.parse_args(argv)
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in args.profile.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = stack.split(";")
        if args.busy and (frames[-1].startswith("EpollSelector.select")
                          or any(f.startswith("_find_and_load ") for f in frames)):
            continue
        if args.functions:
            frames = [_function(f) for f in frames]
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    print(f"{total} samples")
    for title, counter in (("self", own), ("inclusive", inclusive)):
        print(f"-- {title}")
        for frame, n in counter.most_common(args.n):
            print(f"{100 * n / total:5.1f}%  {frame}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
