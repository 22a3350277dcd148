"""Idle footprint of ``mpi-controller run``: RSS and CPU of a controller that serves every kind
whose CRD is installed and has nothing to do, for one or more source trees side by side.

For each round and each ``--source`` (a checkout or worktree; its ``mpi_controller`` wins
through ``PYTHONPATH``) it starts ``python -m mpi_controller run`` (health and metrics ports
served, JSON logs, leader election as given by ``--flags``), waits until ``/readyz`` answers,
lets it idle ``--settle`` seconds, and reads ``/proc``: RSS now, peak RSS (``VmHWM``), CPU
seconds from start to ready and over the idle window. Sources alternate within a round, so the
machine's load weighs on each alike; the medians over rounds are printed as a Markdown table.
Not a test: nothing asserts.

    .venv/bin/python bench/idle_rss.py \\
        --kubeconfig ~/.cache/mpi-controller/cluster-perf/kubeconfig \\
        --source before=/work/main --source after=$PWD --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.processes import ControllerProcess, ProcSampler  # noqa: E402

FIGURES = ("rss_mb", "peak_rss_mb", "cpu_to_ready_s", "idle_cpu_ms_per_s", "ready_s")


def measure(kubeconfig: str, source: str, *, settle: float, flags: list[str],
            log: Path) -> dict[str, float]:
    """One controller from ``source``: its idle figures (see the module doc)."""
    proc = ControllerProcess(kubeconfig, log, *flags)
    proc.env["PYTHONPATH"] = source
    here = os.getcwd()
    os.chdir(source)  # `python -m` puts the working directory first on sys.path
    try:
        proc.start()
    finally:
        os.chdir(here)
    try:
        ready = proc.wait_ready(timeout=180)
        at_ready = ProcSampler.read_pid(proc.pid)
        time.sleep(settle)
        now = ProcSampler.read_pid(proc.pid)
    finally:
        proc.stop()
    if at_ready is None or now is None:
        raise RuntimeError(f"controller exited; see {log}")
    return {"rss_mb": round(now[1] / 2**20, 1), "peak_rss_mb": round(now[2] / 2**20, 1),
            "cpu_to_ready_s": round(at_ready[0], 2),
            "idle_cpu_ms_per_s": round((now[0] - at_ready[0]) * 1000 / settle, 1),
            "ready_s": ready}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--source", action="append", required=True,
                        help="label=path of a source tree (repeatable)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--flags", default="--no-leader-elect",
                        help="extra flags of `mpi-controller run` (one string)")
    args = parser.parse_args()
    sources = dict(s.split("=", 1) for s in args.source)
    runs: dict[str, list[dict[str, float]]] = {label: [] for label in sources}
    logs = Path(tempfile.mkdtemp(prefix="idle-rss-"))
    for round_ in range(args.rounds):
        for label, path in sources.items():
            got = measure(args.kubeconfig, path, settle=args.settle, flags=args.flags.split(),
                          log=logs / f"{label}-{round_}.log")
            runs[label].append(got)
            print(f"round {round_} {label}: {got}", flush=True)
    print("\n| source | " + " | ".join(FIGURES) + " |")
    print("|---|" + "---|" * len(FIGURES))
    for label, results in runs.items():
        medians = [statistics.median(r[f] for r in results) for f in FIGURES]
        print(f"| {label} | " + " | ".join(f"{m:g}" for m in medians) + " |")
    print(f"(medians of {args.rounds} rounds; logs in {logs})")


if __name__ == "__main__":
    main()
