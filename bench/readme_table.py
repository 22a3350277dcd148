"""The README's side-by-side summary of one ``make bench`` run: ours against each reference.

Issue 29's done-when is "the README's side-by-side tables come from one ``make bench`` run,
every row at or ahead of the reference". :func:`summary` turns the harness's results (ours
and a reference's, per workload) into one row per workload with the figures that decide it
(ours / the reference), and how many of the workload's side-by-side figures are at or ahead;
:func:`write_block` puts it into README.md between :data:`START` and :data:`END`, leaving
everything else as it was. Pure apart from :func:`write_block`'s file.

Which way is ahead: every compared figure is a time, a CPU or memory figure, or a request
count, where lower is better (:func:`ahead`), except those in :data:`UNRANKED`, which
describe a run rather than grade it (how many jobs an observer happened to see Running; how
many Events were written, which a reference that drops Events makes lower).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

START = "<!-- bench side-by-side: written by `make bench` (bench/harness.py --docs) -->"
END = "<!-- end of bench side-by-side -->"
UNRANKED = ("jobs seen Running", "Event writes per job")

# (column title, key path) of the README row.
COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("t_running p50 / p99 (s)", ("latency_s", "t_running")),
    ("t_succeeded p50 / p99 (s)", ("latency_s", "t_succeeded")),
    ("CPU per job (ms)", ("controller_cpu_ms_per_job",)),
    ("peak RSS (MB)", ("controller_peak_rss_mb",)),
    ("writes per job", ("api_requests", "child_and_status_writes_per_job")),
)


def dig(value: Any, path: Sequence[str]) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def ahead(label: str, ours: Any, ref: Any) -> bool | None:
    """Whether ours is at or ahead of the reference on a figure (None: not ranked, or a
    figure one side lacks)."""
    if any(label.startswith(u) for u in UNRANKED):
        return None
    if not isinstance(ours, int | float) or not isinstance(ref, int | float):
        return None
    return ours <= ref


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return "-" if value is None else str(value)


def _cell(ours: Obj, ref: Obj, path: tuple[str, ...]) -> str:
    a, b = dig(ours, path), dig(ref, path)
    if isinstance(a, dict) or isinstance(b, dict):  # a latency: p50 / p99 of each
        a, b = a or {}, b or {}
        return (f"{_num(a.get('p50'))} / {_num(a.get('p99'))} against "
                f"{_num(b.get('p50'))} / {_num(b.get('p99'))}")
    return f"{_num(a)} against {_num(b)}"


def summary(pairs: Sequence[tuple[str, str, Obj, Obj]],
            rows: Callable[[str], Sequence[tuple[str, tuple[str, ...]]]]) -> str:
    """The README table: one row per (workload, reference label, ours, theirs); ``rows(name)``
    gives the workload's side-by-side figures (label, key path) that the count is over."""
    head = ["| workload | reference | " + " | ".join(t for t, _ in COLUMNS)
            + " | figures at or ahead |",
            "|---|---|" + "---|" * len(COLUMNS) + "---|"]
    lines: list[str] = []
    runs: dict[str, list[str]] = {}  # the run's description -> its workloads
    for name, label, ours, ref in pairs:
        verdicts = [ahead(figure, dig(ours, path), dig(ref, path))
                    for figure, path in rows(name)]
        ranked = [v for v in verdicts if v is not None]
        behind = len(ranked) - sum(ranked)
        count = f"{sum(ranked)} of {len(ranked)}" + (" (**behind on "
                                                     f"{behind}**)" if behind else "")
        cells = " | ".join(_cell(ours, ref, path) for _, path in COLUMNS)
        lines.append(f"| {name} | {label} | {cells} | {count} |")
        env, ref_env = ours.get("environment") or {}, ref.get("environment") or {}
        run = (f"ours {env.get('date')} at `{env.get('commit')}`, the reference "
               f"{ref_env.get('date')}, scale {env.get('scale')}")
        runs.setdefault(run, []).append(name)
    if not lines:
        return ""
    said = "; ".join(f"{', '.join(names)}: {run}" for run, names in runs.items())
    return "\n".join([*head, *lines, "", f"Each cell: ours against the reference. Runs: {said}."]
                     ) + "\n"


def write_block(readme: Path, text: str) -> bool:
    """Replace what lies between :data:`START` and :data:`END` in ``readme`` with ``text``;
    False (nothing written) when the markers are missing or ``text`` is empty."""
    current = readme.read_text()
    start, end = current.find(START), current.find(END)
    if not text or start < 0 or end < start:
        return False
    readme.write_text(current[:start + len(START)] + "\n\n" + text + "\n" + current[end:])
    return True
