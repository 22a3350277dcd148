"""``tests.processes.ProcSampler.switches_pid``: a process's context switches, every live
thread's summed (the benchmark harness reports them per job beside the CPU)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.processes import ProcSampler

SLEEPS = 300

# The main thread starts a helper that sleeps SLEEPS times (a voluntary switch each), says
# so, and then both wait on stdin: the helper's switches are not the main thread's own.
CHILD = f"""
import sys, threading, time
done = threading.Event()
def helper():
    for _ in range({SLEEPS}):
        time.sleep(0.0005)
    done.set()
    sys.stdin.readline()
threading.Thread(target=helper, daemon=True).start()
done.wait()
print("slept", flush=True)
sys.stdin.readline()
"""


def _leader_voluntary(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines()
                if line.startswith("voluntary_ctxt_switches"))


def test_switches_count_every_live_thread_and_none_once_the_process_is_gone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "slept\n"
        switches = ProcSampler.switches_pid(proc.pid)
        assert switches is not None
        voluntary, involuntary = switches
        assert voluntary >= SLEEPS
        assert involuntary >= 0
        # The thread-group leader's own count leaves the helper's sleeps out.
        assert _leader_voluntary(proc.pid) < SLEEPS <= voluntary
    finally:
        proc.communicate("\n\n", timeout=30)
    assert proc.returncode == 0
    assert ProcSampler.switches_pid(proc.pid) is None
