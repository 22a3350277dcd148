"""bench/readme_table.py (pure, and its README block): the side-by-side summary of one
``make bench`` run that issue 29's done-when asks the README to show."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.support import REPO

sys.path.insert(0, str(Path(REPO) / "bench"))
import harness  # bench/harness.py
import readme_table  # bench/readme_table.py


def _result(commit: str, *, cpu: float, rss: float, writes: float, running: float,
            running_or_done: float, succeeded: float, seen: int, events: float
            ) -> dict[str, Any]:
    def lat(p50: float, n: int = 30) -> dict[str, Any]:
        return {"p50": p50, "p99": p50 + 1.5, "n": n}

    return {"controller_cpu_ms_per_job": cpu, "controller_peak_rss_mb": rss,
            "latency_s": {"t_children": lat(1.0), "t_running": lat(running, seen),
                          "t_running_or_done": lat(running_or_done),
                          "t_succeeded": lat(succeeded)},
            "api_requests": {"child_and_status_writes_per_job": writes,
                             "event_writes_per_job": events},
            "environment": {"date": f"{commit}-date", "commit": commit, "scale": 0.3}}


# Of 30 jobs each; the reference saw 20 of them Running (its faster ones), ours all 30.
OURS = _result("abc1234", cpu=41.8, rss=58.5, writes=18.7, running=9.0, running_or_done=9.0,
               succeeded=18.0, seen=30, events=15.0)
THEIRS = _result("ref", cpu=33.0, rss=56.5, writes=17.3, running=7.9, running_or_done=12.0,
                 succeeded=18.0, seen=20, events=8.9)
LEAN = _result("lean", cpu=33.0, rss=56.5, writes=17.3, running=7.9, running_or_done=7.9,
               succeeded=18.0, seen=30, events=8.9)


def test_lower_is_ahead_and_descriptive_figures_are_not_ranked() -> None:
    assert readme_table.ahead("controller CPU per job lifecycle (ms)", 20.0, 40.0) is True
    assert readme_table.ahead("peak RSS (MB)", 56.5, 56.5) is True
    assert readme_table.ahead("t_succeeded p99 (s)", 18.1, 18.0) is False
    assert readme_table.ahead("jobs seen Running", 30, 20) is None
    assert readme_table.ahead("Event writes per job", 15.0, 8.9) is None
    assert readme_table.ahead("t_running p50 (s)", None, 3.0) is None


def test_a_percentile_over_other_jobs_is_not_ranked() -> None:
    running = ("latency_s", "t_running", "p50")
    assert readme_table.population(OURS, running) == 30
    assert readme_table.population(THEIRS, running) == 20
    # the reference's 7.9 s is over the 20 jobs it saw Running: not ranked against ours
    assert readme_table.ahead("t_running p50 (s)", 9.0, 7.9) is False
    assert readme_table.rank("t_running p50 (s)", OURS, THEIRS, running) is None
    # over the same 30 jobs it is
    assert readme_table.rank("t_running p50 (s)", OURS, LEAN, running) is False
    every = ("latency_s", "t_running_or_done", "p50")
    assert readme_table.rank("Running or finished p50 (s; every job)", OURS, THEIRS,
                             every) is True
    # a run left unfinished is over all its jobs ("of"), measured or bound
    unfinished = {**THEIRS, "latency_s": {"t_running_or_done": {"p50": 12.0, "n": 25,
                                                                "of": 30}}}
    assert readme_table.population(unfinished, every) == 30
    assert readme_table.population(OURS, ("controller_cpu_ms_per_job",)) is None
    assert readme_table.population(OURS, ("latency_s", "t_running", "n")) is None


def test_writes_per_job_are_not_ranked_against_a_run_that_missed_jobs_running() -> None:
    """As mpi-operator v0.8.2's burst of 40 MPIJobs in a make bench run (2026-12-07): it saw
    16 of them Running, its syncs of the others coming after they finished, so it wrote the
    Running status and ``discover_hosts.sh`` of those 16 only (``update configmaps`` 16):
    15.82 writes per job, against ours 16.0 with all 40 seen Running."""
    writes = readme_table.WRITES
    assert readme_table.population(OURS, writes) == 30
    assert readme_table.population(THEIRS, writes) == 20
    assert readme_table.rank("writes per job (children + status)", OURS, THEIRS, writes) is None
    assert readme_table.rank("writes per job (children + status)", OURS, LEAN, writes) is False
    assert readme_table.rank("writes per job (children + status)", LEAN, OURS, writes) is True
    trainjob = {"api_requests": {"child_and_status_writes_per_job": 4.9}}  # no t_running
    assert readme_table.population(trainjob, writes) is None
    assert readme_table.rank("writes per job (JobSet + TrainJob status)", trainjob,
                             {"api_requests": {"child_and_status_writes_per_job": 6.4}},
                             writes) is True


def test_the_summary_has_a_row_per_workload_with_its_count_of_figures_at_or_ahead() -> None:
    text = readme_table.summary([("tfjob", "training-operator v1.9.2", OURS, THEIRS)],
                                harness.side_by_side_rows)
    lines = text.splitlines()
    assert lines[0] == ("| workload | reference | Running or finished p50 / p99 (s) | "
                        "t_succeeded p50 / p99 (s) | CPU per job (ms) | peak RSS (MB) | "
                        "writes per job | figures at or ahead |")
    # Ranked: t_children p50, Running or finished p50/p99, t_succeeded p50/p99, CPU, RSS
    # (the lifecycle and all-children figures are absent from these results; t_running and
    # the writes are over 30 jobs seen Running here, 20 there); behind: CPU, RSS.
    assert lines[2] == ("| tfjob | training-operator v1.9.2 | 9 / 10.5 against 12 / 13.5 | "
                        "18 / 19.5 against 18 / 19.5 | 41.8 against 33 | 58.5 against 56.5 | "
                        "18.7 against 17.3 | 5 of 7 (**behind on 2**) |")
    assert lines[-1] == ("Each cell: ours against the reference. Runs: tfjob: ours abc1234-date "
                         "at `abc1234`, the reference ref-date, scale 0.3.")


def test_the_side_by_side_says_which_figures_it_left_unranked() -> None:
    text = harness.side_by_side({"tfjob": OURS}, {"tfjob": THEIRS}, "training-operator v1.9.2")
    rows = {line.split(" | ")[1]: line for line in text.splitlines()
            if line.startswith("| tfjob |")}
    assert rows["t_running p50 (s)"] == "| tfjob | t_running p50 (s) | 9 | 7.9 | 1.14 |  |"
    assert rows["Running or finished p50 (s; every job)"] == (
        "| tfjob | Running or finished p50 (s; every job) | 9 | 12 | 0.75 | yes |")
    assert rows["writes per job (children + status)"] == (
        "| tfjob | writes per job (children + status) | 18.7 | 17.3 | 1.08 |  |")
    assert ("Not ranked, each side's figure being over other jobs (a percentile over those its "
            "observer saw Running; writes per job where the operators saw different numbers "
            "of jobs Running, a job whose Running state its operator missed costing it no "
            "Running status write): tfjob t_running p50 (s); tfjob t_running p99 (s); tfjob "
            "writes per job (children + status). The Running or finished rows are over every "
            "job, one never seen Running at its finish.") in text


def test_a_workload_at_or_ahead_everywhere_says_so_and_one_run_is_named_once() -> None:
    text = readme_table.summary([("tfjob", "training-operator v1.9.2", LEAN, OURS),
                                 ("jaxjob", "training-operator v1.9.2", LEAN, OURS)],
                                harness.side_by_side_rows)
    lines = text.splitlines()
    assert lines[2].endswith("| 10 of 10 |")
    assert lines[3].startswith("| jaxjob | training-operator v1.9.2 | ")
    assert lines[-1] == ("Each cell: ours against the reference. Runs: tfjob, jaxjob: ours "
                         "lean-date at `lean`, the reference abc1234-date, scale 0.3.")


def test_the_block_between_the_markers_is_replaced_and_the_rest_kept(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    before = f"# x\n\nintro\n\n{readme_table.START}\nold table\n{readme_table.END}\n\n## next\n"
    readme.write_text(before)
    assert readme_table.write_block(readme, "| new |\n")
    assert readme.read_text() == (f"# x\n\nintro\n\n{readme_table.START}\n\n| new |\n\n"
                                  f"{readme_table.END}\n\n## next\n")
    assert not readme_table.write_block(readme, "")  # nothing to write: left alone
    unmarked = tmp_path / "OTHER.md"
    unmarked.write_text("no markers\n")
    assert not readme_table.write_block(unmarked, "| new |\n")
    assert unmarked.read_text() == "no markers\n"


def test_the_readme_has_the_markers() -> None:
    text = (Path(REPO) / "README.md").read_text()
    assert text.count(readme_table.START) == 1
    assert text.count(readme_table.END) == 1
    assert text.index(readme_table.START) < text.index(readme_table.END)
