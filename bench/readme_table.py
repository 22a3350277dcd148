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
many Events were written, which a reference that drops Events makes lower; how many jobs
finished).

A run that did not finish within the harness's timeout (a reference operator whose jobs wait
in its work queue's backoff) keeps what it measured until the harness stopped waiting; the
figures it did not reach are listed in the result's :data:`LOWER_BOUNDS` (dotted key paths):
their values are only lower bounds of what the run would have measured (every such figure
grows with time: a wall time, a latency of a job not yet finished, CPU, peak RSS, writes).
:func:`compare` then ranks a figure only when the bound decides it: ours at or under a
reference's bound is ahead of it, ours a bound over a reference's figure is behind it;
anything else stays unranked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

START = "<!-- bench side-by-side: written by `make bench` (bench/harness.py --docs) -->"
END = "<!-- end of bench side-by-side -->"
UNRANKED = ("jobs seen Running", "Event writes per job", "jobs finished")
# The key of a result's list of figures not reached (dotted key paths, values lower bounds).
LOWER_BOUNDS = "lower_bounds"

# (column title, key path) of the README row.
COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Running or finished p50 / p99 (s)", ("latency_s", "t_running_or_done")),
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


def is_bound(result: Obj, path: Sequence[str]) -> bool:
    """Whether ``result``'s figure at ``path`` was not reached (its value a lower bound)."""
    return ".".join(path) in (result.get(LOWER_BOUNDS) or ())


def compare(label: str, ours: Any, ref: Any, *, ours_bound: bool = False,
            ref_bound: bool = False) -> bool | None:
    """:func:`ahead` where either side may be a lower bound only (a figure its run did not
    reach): True when ours is at or under the reference's value, which is then at or under
    the reference's true figure; False when ours, itself at most its true figure, is over
    the reference's true figure; None when the bounds leave it open."""
    verdict = ahead(label, ours, ref)
    if verdict is None or not (ours_bound or ref_bound):
        return verdict
    if ours_bound and ref_bound:
        return None
    if ref_bound:  # ours <= ref <= the reference's true figure
        return True if verdict else None
    return False if not verdict else None  # ours' true figure >= ours > ref


WRITES = ("api_requests", "child_and_status_writes_per_job")
"""A result's writes per job (children and status)."""


def population(result: Obj, path: Sequence[str]) -> Any:
    """The jobs a latency percentile (``latency_s.<key>.<p>``) is over: all of them when the
    run left some unfinished (``of``), else those measured (``n``). For :data:`WRITES`, the
    jobs its operator saw Running (``t_running``'s ``n``, where the workload has it): a job
    whose Running state the operator missed (its syncs came after the job had finished)
    cost it no Running status write, nor for an MPIJob its ``discover_hosts.sh`` update.
    None for another figure."""
    if tuple(path) == WRITES:
        return dig(result, ("latency_s", "t_running", "n"))
    if len(path) != 3 or path[0] != "latency_s" or path[2] == "n":
        return None
    figures = dig(result, path[:2]) or {}
    return figures.get("of", figures.get("n"))


def rank(label: str, ours: Obj, ref: Obj, path: Sequence[str]) -> bool | None:
    """:func:`compare` of the figure at ``path`` of two results, or None (not ranked) for a
    figure the two runs took over different numbers of jobs (:func:`population`):
    ``t_running`` is over the jobs each observer saw Running, and an operator that misses
    the Running state of its slower jobs would be measured over its faster ones only; it
    would also skip those jobs' Running writes."""
    if population(ours, path) != population(ref, path):
        return None
    return compare(label, dig(ours, path), dig(ref, path), ours_bound=is_bound(ours, path),
                   ref_bound=is_bound(ref, path))


def _undecided(label: str, ours: Obj, ref: Obj, path: Sequence[str]) -> bool:
    """Whether a figure both sides have, over the same jobs, is left unranked by a bound (a
    run that did not finish)."""
    return (rank(label, ours, ref, path) is None
            and ahead(label, dig(ours, path), dig(ref, path)) is not None
            and population(ours, path) == population(ref, path))


def shown(value: Any, bound: bool = False) -> str:
    """A figure as the tables show it; a bound as ``not reached (>= value)``."""
    text = f"{value:g}" if isinstance(value, float) else "-" if value is None else str(value)
    return f"not reached (>= {text})" if bound and value is not None else text


def _cell(ours: Obj, ref: Obj, path: tuple[str, ...]) -> str:
    a, b = dig(ours, path), dig(ref, path)
    if isinstance(a, dict) or isinstance(b, dict):  # a latency: p50 / p99 of each
        a, b = a or {}, b or {}

        def pair(res: Obj, lat: Obj) -> str:
            return " / ".join(shown(lat.get(p), is_bound(res, (*path, p))) for p in ("p50", "p99"))
        return f"{pair(ours, a)} against {pair(ref, b)}"
    return f"{shown(a, is_bound(ours, path))} against {shown(b, is_bound(ref, path))}"


def unfinished(result: Obj) -> str:
    """What a run that did not finish within its timeout achieved, in words."""
    if "objects_seen" in result:  # the wide workload: one job's objects
        return (f"did not finish: {result.get('objects_seen')} of {result.get('objects')} "
                f"workers + launcher seen within {shown(result.get('timeout_s'))} s, the "
                f"figures not reached are lower bounds")
    how = "did not finish" if result.get("exit_code") is None else \
        f"exited with {result['exit_code']} mid-workload"
    return (f"{how}: {result.get('jobs_finished')} of {result.get('jobs')} jobs "
            f"finished within {shown(result.get('timeout_s'))} s, the figures not reached "
            f"are lower bounds")


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
        verdicts = [(rank(figure, ours, ref, path), _undecided(figure, ours, ref, path))
                    for figure, path in rows(name)]
        ranked = [v for v, _ in verdicts if v is not None]
        behind = len(ranked) - sum(ranked)
        undecided = sum(1 for _, open_ in verdicts if open_)
        count = f"{sum(ranked)} of {len(ranked)}" + (" (**behind on "
                                                     f"{behind}**)" if behind else "") + (
            f" ({undecided} undecided: not reached)" if undecided else "")
        cells = " | ".join(_cell(ours, ref, path) for _, path in COLUMNS)
        lines.append(f"| {name} | {label} | {cells} | {count} |")
        env, ref_env = ours.get("environment") or {}, ref.get("environment") or {}
        run = (f"ours {env.get('date')} at `{env.get('commit')}`, the reference "
               f"{ref_env.get('date')}, scale {env.get('scale')}")
        for who, res in (("ours", ours), ("the reference", ref)):
            if res.get("complete") is False:
                run += f" ({who} {unfinished(res)})"
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
