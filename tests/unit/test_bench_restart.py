"""The harness's steady restart (pure parts): both operators' "caches synced, workers started"
read from their own log lines, and "CPU until idle" cut after the restart's last write, so
the two sides measure the same events (issue 29)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support import REPO

sys.path.insert(0, str(Path(REPO) / "bench"))
import harness  # bench/harness.py


def _ours(event: str, stamp: str) -> str:
    return json.dumps({"event": event, "level": "info", "timestamp": stamp})


def test_ours_synced_time_is_the_timestamp_of_its_manager_line() -> None:
    log = "\n".join([
        _ours("starting informers", "2026-12-06T04:00:01.000000Z"),
        "not json caches synced; starting controllers",
        _ours("caches synced; starting controllers", "2026-12-06T04:00:01.250000Z"),
        _ours("caches synced; starting controllers", "2026-12-06T04:09:00.000000Z"),
    ])
    expected = datetime(2026, 12, 6, 4, 0, 1, 250000, tzinfo=UTC).timestamp()
    assert harness.synced_line_time(log, "ours", year=2026) == expected


def test_go_synced_time_is_the_klog_header_of_started_workers() -> None:
    log = "\n".join([
        "I1206 04:00:00.900000       7 mpi_job_controller.go:489] Starting workers",
        "I1206 04:00:00.912345       7 mpi_job_controller.go:495] Started workers",
    ])
    # klog writes local time without a year.
    expected = datetime(2026, 12, 6, 4, 0, 0, 912345).timestamp()
    assert harness.synced_line_time(log, "go", year=2026) == expected


def test_no_synced_line_yet_or_an_operator_without_one() -> None:
    assert harness.synced_line_time(_ours("starting informers", "2026-12-06T04:00:01Z"),
                                    "ours", year=2026) is None
    # a line merely quoting the words is not the Go operator's own
    assert harness.synced_line_time(
        "I1206 04:00:00.912345       7 x.go:1] Started workers for 3 jobs", "go",
        year=2026) is None
    assert harness.synced_line_time("Starting workers", "training-operator", year=2026) is None


def _samples(cpu_per_second: list[float]) -> list[tuple[float, float, int]]:
    """Samples every 0.5 s from t=100 s, the CPU seconds used in each second given."""
    out, cpu = [(100.0, 0.0, 0)], 0.0
    for i, used in enumerate(cpu_per_second):
        for half in (0.5, 1.0):
            cpu += used / 2
            out.append((100.0 + i + half, cpu, 0))
    return out


def test_first_quiet_is_the_first_second_under_five_percent_of_a_core() -> None:
    samples = _samples([0.9, 0.5, 0.02, 0.3, 0.01, 0.01])
    assert harness.first_quiet(samples, 100.0) == 102.0
    assert harness.first_quiet(samples, 102.5) == 104.0
    assert harness.first_quiet(samples, 105.5) is None  # no full second left


def _write(end: float) -> dict[str, Any]:
    stamp = datetime.fromtimestamp(end, tz=UTC).isoformat().replace("+00:00", "Z")
    return {"verb": "create", "stageTimestamp": stamp}


def test_restart_idle_waits_for_the_last_write_of_the_restart() -> None:
    # A paced operator: quiet at 102 s while its queue still holds work written until 103.5 s.
    samples = _samples([0.9, 0.5, 0.02, 0.3, 0.01, 0.01])
    idle, last = harness.restart_idle(samples, 101.0, [_write(101.5), _write(103.5)])
    assert (idle, last) == (104.0, 103.5)
    # Without writes (ours after a restart): the first quiet second after the sync.
    assert harness.restart_idle(samples, 101.0, []) == (102.0, None)


def test_steady_synced_figure_is_the_median_of_the_starts_that_logged_it() -> None:
    # One slow start (a cold page cache) does not decide the figure; a start that never
    # logged its line (None) is left out, and none at all gives None.
    assert harness.median_start([1.454, 0.805, 1.872]) == 1.454
    assert harness.median_start([1.9, 0.8, 0.9]) == 0.9
    assert harness.median_start([None, 0.8, 1.0]) == 0.9
    assert harness.median_start([None, None]) is None
    assert harness.STEADY_STARTS == 3
