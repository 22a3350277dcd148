"""Run the controller (``python -m mpi_controller ARGS``) under cProfile timed by the process's
CPU clock, writing the stats to OUT when it exits:

    python bench/cpu_cprofile.py OUT [ARGS...]

``python -m cProfile`` times calls by the wall clock, so a function that waits in a system call
while the machine runs something else (a socket send that wakes the API server on a loaded
2-core machine) looks expensive; here only CPU time the process spends counts (all its threads
together). The harness uses it with ``BENCH_CPROFILE=cpu``.
"""

from __future__ import annotations

import cProfile
import runpy
import sys
import time


def main() -> None:
    out, args = sys.argv[1], sys.argv[2:]
    sys.argv = ["mpi_controller", *args]
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    try:
        runpy.run_module("mpi_controller", run_name="__main__", alter_sys=True)
    finally:
        profile.disable()
        profile.dump_stats(out)


if __name__ == "__main__":
    main()
