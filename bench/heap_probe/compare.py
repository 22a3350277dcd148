"""What grew between two snapshots written by the heap probe (``sitecustomize.py`` here).

``python bench/heap_probe/compare.py OUT/idle.snap OUT/peak.snap [--by lineno|filename]
[--top 25]`` prints the total traced growth and the largest differences, one line each:
size difference (KB), count difference, where (file:line, or file).
"""

from __future__ import annotations

import argparse
import tracemalloc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--by", choices=("lineno", "filename"), default="lineno")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    before = tracemalloc.Snapshot.load(args.before)
    after = tracemalloc.Snapshot.load(args.after)
    diffs = after.compare_to(before, args.by)
    total = sum(d.size_diff for d in diffs)
    print(f"traced growth: {total / 1024:.0f} KB")
    for d in diffs[:args.top]:
        frame = d.traceback[0]
        where = frame.filename if args.by == "filename" else f"{frame.filename}:{frame.lineno}"
        print(f"{d.size_diff / 1024:9.1f} KB {d.count_diff:+8d}  {where}")


if __name__ == "__main__":
    main()
