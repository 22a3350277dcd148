"""Message truncation and API timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from mpi_controller.kube.text import truncate_message
from mpi_controller.kube.timefmt import format_micro_time, format_time


def test_a_message_that_fits_is_kept() -> None:
    assert truncate_message("short") == "short"
    assert truncate_message("a" * 1024) == "a" * 1024


def test_a_long_message_is_cut_at_a_character_boundary_and_ends_in_dots() -> None:
    cut = truncate_message("é" * 600)  # 1200 bytes; 'é' is 2 bytes
    assert cut == "é" * 510 + "..."
    assert len(cut.encode()) == 1023
    cut = truncate_message("a" + "€" * 400)  # 1 + 1200 bytes; '€' is 3 bytes
    assert cut == "a" + "€" * 340 + "..."
    assert len(cut.encode()) == 1024
    assert truncate_message("abcdef", limit=5) == "ab..."


def test_timestamps_are_utc_rfc3339() -> None:
    moment = datetime(2026, 1, 2, 5, 4, 5, 6, tzinfo=timezone(timedelta(hours=2)))
    assert format_time(moment) == "2026-01-02T03:04:05Z"
    assert format_micro_time(moment) == "2026-01-02T03:04:05.000006Z"
    assert format_time(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05Z"  # naive: UTC
    assert format_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05Z"


def test_api_timestamps_parse_back_to_aware_utc_datetimes() -> None:
    from mpi_controller.kube.timefmt import parse_time

    assert parse_time("2026-01-02T03:04:05Z") == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert parse_time("2026-01-02T03:04:05.000006Z") == datetime(2026, 1, 2, 3, 4, 5, 6,
                                                                 tzinfo=UTC)
    assert parse_time("2026-01-02T05:04:05+02:00") == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    for bad in (None, "", "yesterday", 17, ["2026-01-02T03:04:05Z"]):
        assert parse_time(bad) is None
