"""The harness with a run that did not finish within its timeout (pure parts): what it
reached is kept, the rest are lower bounds, and the side-by-side ranks a figure only where
a bound decides it (issue 29: the Go operator's MPIJobs waiting in its work queue's backoff)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.support import REPO

sys.path.insert(0, str(Path(REPO) / "bench"))
import harness  # bench/harness.py
import readme_table  # bench/readme_table.py


def test_percentiles_without_jobs_left_are_the_plain_ones() -> None:
    values = [3.0, 1.0, 2.0]
    assert harness.censored_percentiles(values, []) == (harness.percentiles(values), [])


def test_a_rank_on_a_measured_value_under_every_bound_is_exact() -> None:
    # A burst: 6 of 10 jobs finished in 1..6 s, 4 still waiting after 100 s.
    figures, bounds = harness.censored_percentiles([6.0, 1.0, 2.0, 3.0, 4.0, 5.0],
                                                   [100.0] * 4)
    assert figures == {"n": 6, "of": 10, "p50": 5.0, "p90": 100.0, "p99": 100.0,
                       "max": 100.0}
    assert bounds == ["p90", "p99", "max"]


def test_a_job_created_late_leaves_the_ranks_over_its_bound_open() -> None:
    # Arrival: a job created 5 s before the harness stopped may still finish before 10 s, so
    # the median of {10, 20, 30, x >= 5} is at least 10 but not known.
    figures, bounds = harness.censored_percentiles([10.0, 20.0, 30.0], [5.0])
    assert figures == {"n": 3, "of": 4, "p50": 10.0, "p90": 30.0, "p99": 30.0, "max": 30.0}
    assert bounds == ["p50", "p90", "p99", "max"]
    # A bound equal to the value at the rank leaves it open too.
    assert harness.censored_percentiles([5.0], [5.0])[1] == ["p50", "p90", "p99", "max"]


def test_latencies_of_an_unfinished_run_count_the_jobs_left_as_bounds() -> None:
    done = harness.JobTrack(needed=1, created=0.0, children_at=1.0, running_at=2.0,
                            succeeded_at=3.0)
    unseen_running = harness.JobTrack(needed=1, created=0.0, children_at=1.0,
                                      succeeded_at=4.0)
    failed = harness.JobTrack(needed=1, created=0.0, children_at=1.0, failed_at=5.0)
    left = harness.JobTrack(needed=1, created=10.0, children_at=11.0, running_at=12.0)
    no_children = harness.JobTrack(needed=1, created=20.0)
    jobs = {"a": done, "b": unseen_running, "c": failed, "d": left, "e": no_children}
    lat, bounds = harness._latencies(jobs, stopped=50.0)
    # every child: 4 measured (1 s each) and e's 30 s bound
    assert {k: lat["t_children"][k] for k in ("n", "of", "p50", "max")} == {
        "n": 4, "of": 5, "p50": 1.0, "max": 30.0}
    # Running: a and d measured; e (not finished) a bound; b finished unseen and c failed
    # are left out as in a finished run
    assert {k: lat["t_running"][k] for k in ("n", "of", "p50", "max")} == {
        "n": 2, "of": 3, "p50": 2.0, "max": 30.0}
    # Running or finished: every job but e measured (b at its success, c at its failure);
    # e a bound
    assert {k: lat["t_running_or_done"][k] for k in ("n", "of", "p50", "max")} == {
        "n": 4, "of": 5, "p50": 4.0, "max": 30.0}
    assert lat["t_running_or_done"]["samples"] == [2.0, 4.0, 5.0, 2.0]
    # Succeeded: a and b measured; d and e bounds (40 s, 30 s); c failed, left out
    assert {k: lat["t_succeeded"][k] for k in ("n", "of", "p50", "p90", "max")} == {
        "n": 2, "of": 4, "p50": 4.0, "p90": 40.0, "max": 40.0}
    assert lat["t_succeeded"]["samples"] == [3.0, 4.0]
    # the nearest ranks of p90 and up (the 3rd of 3, the 5th of 5, the 4th of 4) fall on a
    # bound in each
    assert bounds == [f"latency_s.{key}.{p}" for key in ("t_children", "t_running",
                                                         "t_running_or_done", "t_succeeded")
                      for p in ("p90", "p99", "max")]
    assert lat["t_children"]["p90"] == 30.0
    # Finished: no bounds, the plain percentiles
    finished, none = harness._latencies({"a": done, "b": unseen_running, "c": failed})
    assert none == []
    assert finished["t_succeeded"]["n"] == 2
    assert "of" not in finished["t_succeeded"]


def test_the_figures_an_unfinished_lifecycle_leaves_as_bounds() -> None:
    assert harness.unfinished_bounds(["latency_s.t_succeeded.max"], all_children=True) == [
        "latency_s.t_succeeded.max", "lifecycle_wall_s", "controller_cpu_s",
        "controller_cpu_ms_per_job", "controller_peak_rss_mb",
        "api_requests.child_and_status_writes_per_job", "api_requests.event_writes_per_job",
        "api_requests.total", "controller_wakeups_per_job", "controller_preemptions_per_job"]
    assert harness.unfinished_bounds([], all_children=False)[-1] == "all_children_s"


def test_an_unfinished_run_grades_no_target_and_marks_the_figures_not_reached() -> None:
    res: dict[str, Any] = {
        "complete": False, "lower_bounds": ["controller_cpu_ms_per_job"],
        "targets": [harness.target("controller CPU per job lifecycle (ms)", 60.0, "<= 50", False),
                    harness.target("t_children p99 (s)", 1.0, "(reported)", None)]}
    harness.unfinished_targets(res)
    assert [(t["met"], t["not_reached"]) for t in res["targets"]] == [(None, True),
                                                                      (None, False)]
    done: dict[str, Any] = {"targets": [harness.target("peak RSS (MB)", 1.0, "<= 2", True)]}
    harness.unfinished_targets(done)
    assert done["targets"] == [{"figure": "peak RSS (MB)", "value": 1.0, "target": "<= 2",
                                "met": True}]


def test_compare_ranks_a_bound_only_where_it_decides() -> None:
    cpu = "controller CPU per job lifecycle (ms)"
    # the reference did not reach its figure: ours at or under its bound is ahead
    assert readme_table.compare(cpu, 30.0, 40.0, ref_bound=True) is True
    assert readme_table.compare(cpu, 50.0, 40.0, ref_bound=True) is None
    # ours did not reach it: over the reference's figure is behind
    assert readme_table.compare(cpu, 50.0, 40.0, ours_bound=True) is False
    assert readme_table.compare(cpu, 30.0, 40.0, ours_bound=True) is None
    assert readme_table.compare(cpu, 30.0, 40.0, ours_bound=True, ref_bound=True) is None
    assert readme_table.compare(cpu, 30.0, 40.0) is True
    assert readme_table.compare("jobs finished within the harness's timeout", 60, 31) is None
    assert readme_table.shown(624.0, True) == "not reached (>= 624)"
    assert readme_table.shown(None, True) == "-"
    assert readme_table.shown(12.5) == "12.5"


def _burst(date: str, *, wall: float, cpu: float, p50: float, p99: float, finished: int,
           bounds: list[str] | None = None) -> dict[str, Any]:
    res: dict[str, Any] = {
        "jobs": 60, "jobs_finished": finished, "lifecycle_wall_s": wall,
        "controller_cpu_ms_per_job": cpu, "flags": ["--threadiness", "16"],
        "latency_s": {"t_running": {"n": 60, "p50": 1.0, "p99": 2.0},
                      "t_running_or_done": {"n": 60, "p50": 1.0, "p99": 2.0},
                      "t_succeeded": {"n": finished, "p50": p50, "p99": p99}},
        "environment": {"scale": 0.3, "date": date, "commit": "abc"}}
    if bounds is not None:
        res.update({"complete": False, "timeout_s": 600, "lower_bounds": bounds})
        res["latency_s"]["t_succeeded"]["of"] = 60  # its jobs left unfinished as bounds
    return res


OURS = _burst("ours-date", wall=30.0, cpu=25.0, p50=12.0, p99=20.0, finished=60)
GO = _burst("go-date", wall=600.0, cpu=20.0, p50=15.0, p99=600.0, finished=31,
            bounds=["lifecycle_wall_s", "controller_cpu_ms_per_job",
                    "latency_s.t_succeeded.p99", "latency_s.t_succeeded.max"])


def test_the_side_by_side_with_a_reference_that_did_not_finish() -> None:
    lines = harness.side_by_side({"burst": OURS}, {"burst": GO}).splitlines()
    assert lines[2:] == [
        "| burst | whole lifecycle, create to every job finished and workers gone (s) | 30 | "
        "not reached (>= 600) | - | yes |",
        "| burst | jobs finished within the harness's timeout | 60 | 31 | 1.94 |  |",
        "| burst | time until every child of every job exists (s) | - | - | - |  |",
        "| burst | t_running p50 (s) | 1 | 1 | 1.00 | yes |",
        "| burst | t_running p99 (s) | 2 | 2 | 1.00 | yes |",
        "| burst | jobs seen Running | 60 | 60 | 1.00 |  |",
        "| burst | Running or finished p50 (s; every job) | 1 | 1 | 1.00 | yes |",
        "| burst | Running or finished p99 (s; every job) | 2 | 2 | 1.00 | yes |",
        "| burst | t_succeeded p50 (s) | 12 | 15 | 0.80 | yes |",
        "| burst | t_succeeded p99 (s) | 20 | not reached (>= 600) | - | yes |",
        # ours over the bound: open, not ranked
        "| burst | controller CPU per job lifecycle (ms) | 25 | not reached (>= 20) | - |  |",
        "| burst | peak RSS (MB) | - | - | - |  |",
        "| burst | writes per job (children + status) | - | - | - |  |",
        "| burst | Event writes per job | - | - | - |  |",
        "",
        "Same workloads, QPS, threads and observers (flags ours: --threadiness 16; Go: "
        "--threadiness 16); burst at scale 0.3: ours ours-date, Go go-date.",
        "Not finished within the harness's timeout (a figure marked not reached is what the "
        "run had reached when the harness stopped waiting, a lower bound; it is ranked only "
        "where the bound decides): Go's burst did not finish: 31 of 60 jobs finished within "
        "600 s, the figures not reached are lower bounds."]


def test_the_readme_summary_counts_the_figures_a_bound_leaves_open() -> None:
    text = readme_table.summary([("burst", "Go (mpi-operator v0.8.2)", OURS, GO)],
                                harness.side_by_side_rows)
    lines = text.splitlines()
    # ranked: lifecycle, t_running p50/p99, Running or finished p50/p99, t_succeeded
    # p50/p99; CPU open
    assert lines[2] == ("| burst | Go (mpi-operator v0.8.2) | 1 / 2 against 1 / 2 | "
                        "12 / 20 against 15 / not reached (>= 600) | 25 against not reached "
                        "(>= 20) | - against - | - against - | 7 of 7 (1 undecided: not "
                        "reached) |")
    assert lines[-1] == ("Each cell: ours against the reference. Runs: burst: ours ours-date at "
                         "`abc`, the reference go-date, scale 0.3 (the reference did not "
                         "finish: 31 of 60 jobs finished within 600 s, the figures not reached "
                         "are lower bounds).")


def test_the_results_table_says_a_run_did_not_finish() -> None:
    res = {**GO, "targets": [{"figure": "controller CPU per 4-worker job lifecycle (ms)",
                              "value": 20.0, "target": "<= 50", "met": None,
                              "not_reached": True}],
           "latency_s": {k: {"n": 31, "of": 60, "p50": 15.0, "p90": 600.0, "p99": 600.0,
                             "max": 600.0} for k in ("t_children", "t_running", "t_succeeded")}}
    lines = harness.table({"burst": res}).splitlines()
    assert lines[4] == ("| burst | **not finished** | did not finish: 31 of 60 jobs finished "
                        "within 600 s, the figures not reached are lower bounds | (reported) | |")
    assert lines[5] == ("| burst | controller CPU per 4-worker job lifecycle (ms) | "
                        "not reached (>= 20) | <= 50 |  |")
    assert lines[8] == ("| burst | t_succeeded p50 / p90 / p99 / max (s) | 15 / 600 / "
                        "not reached (>= 600) / not reached (>= 600) | (reported, n=31 of 60) "
                        "| |")
    assert "| burst | lifecycle_wall_s | not reached (>= 600) | (reported) | |" in lines


def test_a_reference_that_exited_mid_workload_says_so() -> None:
    exited = {**GO, "exit_code": 255, "timeout_s": 480}
    assert readme_table.unfinished(exited) == (
        "exited with 255 mid-workload: 31 of 60 jobs finished within 480 s, the figures not "
        "reached are lower bounds")
    assert readme_table.unfinished(GO).startswith("did not finish: 31 of 60 jobs finished ")
    wide = {"complete": False, "objects_seen": 200, "objects": 257, "timeout_s": 300}
    assert readme_table.unfinished(wide) == (
        "did not finish: 200 of 257 workers + launcher seen within 300 s, the figures not "
        "reached are lower bounds")
