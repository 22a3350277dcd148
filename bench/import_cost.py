"""Import cost of the controller's dependencies: RSS and CPU of importing each module in a fresh
interpreter, alone and in the order ``mpi-controller run`` meets them.

* alone: ``python -c "import M"``: RSS after the import minus an empty interpreter's, and the
  import's CPU time (median of ``--rounds`` interpreters);
* in order: one interpreter imports the modules one after the other; each row is what that
  import added to what came before (shared dependencies count once, at the first). The rows
  after ``mpi_controller.cli`` are modules an idle ``mpi-controller run`` no longer imports
  (what they would add).

The controller's own modules are compiled first (``tests.processes.compile_package``, which
also writes :mod:`mpi_controller.startcache`'s table), as an installed package has them, and
the table is installed before the first of them is imported, as the command line does.
``kubeauth`` stands for :func:`mpi_controller.runtime.kubeauth.kube_auth` (kubernetes_asyncio's
configuration and authentication without its generated API). Not a test: nothing asserts.

    .venv/bin/python bench/import_cost.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.processes import compile_package  # noqa: E402

MODULES = ("asyncio", "yaml", "msgspec", "structlog", "prometheus_client", "kubeauth",
           "mpi_controller.app", "mpi_controller.cli",
           # not imported by an idle `mpi-controller run` (tests/unit/test_startup_imports.py):
           "aiohttp", "aiohttp.web", "importlib.metadata", "urllib3", "cryptography.x509",
           "kubernetes_asyncio.client")

PROBE = r"""
import importlib, json, sys, time
def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024
out = [("", rss(), 0.0)]
for name in sys.argv[1:]:
    start = time.process_time()
    if name.startswith("mpi_controller") and "mpi_controller.startcache" not in sys.modules:
        from mpi_controller import startcache  # as the command line does before its imports
        startcache.install()
    if name == "kubeauth":
        from mpi_controller.runtime.kubeauth import kube_auth
        kube_auth()
    else:
        importlib.import_module(name)
    out.append((name, rss(), (time.process_time() - start) * 1000))
print(json.dumps(out))
"""


def probe(*modules: str) -> list[tuple[str, float, float]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *modules], check=True,
                          capture_output=True, text=True, cwd=REPO)
    return [tuple(row) for row in json.loads(done.stdout)]  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    compile_package(REPO / "mpi_controller")
    print("| module | alone: RSS added (MB) | alone: CPU (ms) | in order: RSS added (MB) "
          "| in order: CPU (ms) |")
    print("|---|---|---|---|---|")
    alone = {m: [probe(m) for _ in range(args.rounds)] for m in MODULES}
    ordered = [probe(*MODULES) for _ in range(args.rounds)]
    empty = statistics.median(r[0][1] for rows in alone.values() for r in rows)
    for i, module in enumerate(MODULES, start=1):
        rss = statistics.median(r[1][1] - r[0][1] for r in alone[module])
        cpu = statistics.median(r[1][2] for r in alone[module])
        o_rss = statistics.median(r[i][1] - r[i - 1][1] for r in ordered)
        o_cpu = statistics.median(r[i][2] for r in ordered)
        print(f"| `{module}` | {rss:.1f} | {cpu:.0f} | {o_rss:.1f} | {o_cpu:.0f} |")
    total = statistics.median(r[-1][1] for r in ordered)
    print(f"\nempty interpreter: {empty:.1f} MB; all of the above: {total:.1f} MB "
          f"(medians of {args.rounds})")


if __name__ == "__main__":
    main()
