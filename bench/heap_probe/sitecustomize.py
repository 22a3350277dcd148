"""A memory probe for ``mpi-controller run`` under a benchmark, loaded by putting this folder
first on ``PYTHONPATH`` and setting ``HEAP_PROBE=<output folder>`` (inert otherwise, and in
any process that is not ``mpi-controller``).

A daemon thread samples ``VmRSS`` every 0.1 s. Every 5 s (``t<seconds>``) and at each new
RSS peak (at least 0.5 MB above the last one saved, 1 s after it: ``peak``) it appends one
JSON line to ``stats.jsonl``: RSS, glibc's ``mallinfo2`` (C heap in use and free, mmapped),
pymalloc's arenas (``sys._debugmallocstats``: 1 MiB each, and the bytes in used blocks), and
the modules imported since the previous line.

With ``HEAP_PROBE_GC=1`` each line also counts, by type, the objects that only the cyclic
collector could free since the previous line (``gc.DEBUG_SAVEALL``, then a full collection
from the probe's thread: the probe collects more often than the controller would).

With ``HEAP_PROBE_TRACE=1`` it also starts :mod:`tracemalloc` (one frame per trace) and writes
``<name>.snap`` beside each line, for ``bench/heap_probe/compare.py``; pymalloc then reports
no arenas, and tracing inflates RSS (the traces, and each snapshot's copy of them): use those
figures for where Python's allocations went, never for RSS itself.
"""

from __future__ import annotations

import os
import sys

if os.environ.get("HEAP_PROBE") and sys.argv and sys.argv[0].endswith("mpi-controller"):
    import collections
    import ctypes
    import gc
    import json
    import tempfile
    import threading
    import time
    import tracemalloc

    class _Mallinfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    _libc = ctypes.CDLL("libc.so.6")
    _libc.mallinfo2.restype = _Mallinfo2
    _out = os.environ["HEAP_PROBE"]
    _trace = os.environ.get("HEAP_PROBE_TRACE") == "1"
    _cycles = os.environ.get("HEAP_PROBE_GC") == "1"
    _seen_modules: set[str] = set()
    os.makedirs(_out, exist_ok=True)

    def _rss() -> float:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def _pymalloc() -> dict[str, int]:
        """``sys._debugmallocstats`` (written to fd 2): arenas now, bytes in used blocks."""
        with tempfile.TemporaryFile() as tmp:
            saved = os.dup(2)
            try:
                os.dup2(tmp.fileno(), 2)
                sys._debugmallocstats()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode(errors="replace")
        found: dict[str, int] = {}
        for line in text.splitlines():
            label, _, value = line.rpartition("=")
            label = label.strip().lstrip("#").strip()
            if label in ("arenas allocated current", "bytes in allocated blocks"):
                found[label] = int(value.strip().replace(",", ""))
        return found

    def _save(name: str, rss: float, start: float) -> None:
        info = _libc.mallinfo2()
        modules = set(sys.modules)
        line = {"name": name, "t": round(time.monotonic() - start, 1), "rss_mb": rss,
                "c_heap_in_use_mb": round(info.uordblks / 2**20, 2),
                "c_heap_free_mb": round(info.fordblks / 2**20, 2),
                "c_mmapped_mb": round(info.hblkhd / 2**20, 2),
                "pymalloc": _pymalloc(), "modules": len(modules),
                "new_modules": sorted(modules - _seen_modules) if _seen_modules else []}
        _seen_modules.update(modules)
        if _cycles:
            gc.collect()
            found = collections.Counter(type(o).__qualname__ for o in gc.garbage)
            gc.set_debug(0)  # or the cleared garbage would be saved again
            gc.garbage.clear()
            gc.collect()
            gc.set_debug(gc.DEBUG_SAVEALL)
            line["cyclic_garbage"] = dict(found.most_common(15))
        if _trace:
            line["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 2)
            tracemalloc.take_snapshot().dump(os.path.join(_out, f"{name}.snap"))
        with open(os.path.join(_out, "stats.jsonl"), "a") as f:
            f.write(json.dumps(line) + "\n")

    def _watch() -> None:
        start = time.monotonic()
        saved_peak, last, next_tick = 0.0, 0.0, 5.0
        while True:
            time.sleep(0.1)
            now = time.monotonic() - start
            rss = _rss()
            if now >= next_tick:
                _save(f"t{int(next_tick)}", rss, start)
                next_tick += 5
            elif rss >= saved_peak + 0.5 and now - last >= 1:
                _save("peak", rss, start)
                saved_peak, last = rss, now

    if _trace:
        tracemalloc.start(1)
    if _cycles:
        gc.set_debug(gc.DEBUG_SAVEALL)
    threading.Thread(target=_watch, name="heap-probe", daemon=True).start()
