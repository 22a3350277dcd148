"""Tables of a conformance run (pure): markdown for the terminal and conformance-results/."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from conformance.diff import Difference
from conformance.e2e_suite import SpecResult
from conformance.intended import Rule


def e2e_table(results: dict[str, list[SpecResult]], *,
              places: dict[str, str] | None = None) -> str:
    """One row per spec, one column per operator it ran against (``places``: where each spec
    ran, a column of its own)."""
    sides = list(results)
    texts = list(dict.fromkeys(r.text for rs in results.values() for r in rs))
    by = {side: {r.text: r for r in rs} for side, rs in results.items()}
    where = ["runs on"] if places else []
    lines = ["| upstream e2e spec (mpi-operator v0.8.2) | " + " | ".join(where + sides)
             + " | note |", "|---|" + "---|" * (len(where) + len(sides)) + "---|"]
    for text in texts:
        cells, notes = [places.get(text, "-")] if places else [], []
        for side in sides:
            r = by[side].get(text)
            if r is None:
                cells.append("-")
                continue
            timed = r.outcome in ("passed", "failed")
            cells.append(f"{r.outcome} ({r.seconds:g}s)" if timed else r.outcome)
            if r.reason and r.reason not in notes:
                notes.append(f"{side}: {r.reason}" if r.outcome == "failed" else r.reason)
        lines.append(f"| {text} | " + " | ".join(cells) + f" | {'; '.join(notes)} |")
    for side in sides:
        count = Counter(r.outcome for r in results[side])
        lines.append(f"\n{side}: " + ", ".join(
            f"{count[o]} {o}" for o in ("passed", "skipped", "failed", "not run")
            if count[o] or o != "not run"))
    return "\n".join(lines) + "\n"


def differential_table(kind: str, summary: dict[str, Any],
                       intended: list[tuple[Difference, Rule]],
                       unexplained: list[Difference]) -> str:
    per_case_int: dict[str, Counter[str]] = defaultdict(Counter)
    for d, rule in intended:
        per_case_int[d.case][rule.id] += 1
    per_case_bad = Counter(d.case for d in unexplained)
    lines = [f"| {kind} case | group | objects compared | intended differences | unexplained |",
             "|---|---|---|---|---|"]
    cases = dict(summary.get("cases", {}))
    cases.setdefault("(CRD)", {"group": "-", "objects": 1})
    for name, info in cases.items():
        ints = ", ".join(f"{rid} x{n}" for rid, n in sorted(per_case_int[name].items())) or "-"
        bad = per_case_bad[name]
        lines.append(f"| {name} | {info['group']} | {info['objects']} | {ints} | "
                     f"{'**' + str(bad) + '**' if bad else 0} |")
    lines.append(f"\n{kind}: {len(cases)} cases, {len(intended)} intended differences, "
                 f"{len(unexplained)} unexplained")
    if unexplained:
        lines.append("\nUnexplained differences (each fails the run; fix it, or list it in the "
                     "differences tables in docs/ and conformance/intended.py):")
        lines += [f"- {d.describe()}" for d in unexplained]
    if intended:
        lines.append("\nIntended differences (rows of the differences tables in docs/):")
        rows: dict[str, int] = Counter(rule.readme for _, rule in intended)
        lines += [f"- {row}: {n}" for row, n in sorted(rows.items())]
    return "\n".join(lines) + "\n"


def failure_digest(specs: list[SpecResult], unexplained: dict[str, list[Difference]], *,
                   tail_lines: int = 12) -> str:
    """What failed, for the last lines of a run's output (a CI log often keeps only its tail):
    each failed spec with its reason and the end of its output, each kind's unexplained
    differences. Empty when nothing failed."""
    lines: list[str] = []
    for r in specs:
        if r.outcome != "failed":
            continue
        lines.append(f"FAILED spec: {r.text}: {r.reason or 'no reason found'} ({r.seconds:g}s)")
        lines += ["    " + ln for ln in r.output.rstrip().splitlines()[-tail_lines:]]
    for kind, diffs in unexplained.items():
        lines += [f"FAILED {kind}: {d.describe()}" for d in diffs]
    return "\n".join(lines)
