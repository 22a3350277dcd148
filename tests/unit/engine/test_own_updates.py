"""OwnUpdates: the echo of the engine's own child update starts no sync; every other version
of the child does, including one delivered while an update is in flight that turns out not to
be ours, and every version held by an update that failed."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.writer import OwnUpdates

CM = ("ConfigMap", "ns", "job-config")


def version(rv: str, name: str = "job-config") -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": rv}}


def tracker() -> tuple[OwnUpdates, list[str]]:
    missed: list[str] = []
    return OwnUpdates(missed.append), missed


def test_the_echo_of_our_update_is_absorbed_once() -> None:
    own, missed = tracker()
    own.begin(CM)
    own.end(CM, version("7"))
    assert own.absorbs("ConfigMap", version("7"), "ns/job") is True
    assert own.absorbs("ConfigMap", version("7"), "ns/job") is False  # delivered already
    assert len(own) == 0
    assert missed == []


def test_another_version_is_not_absorbed_and_ends_ours() -> None:
    own, _ = tracker()
    own.begin(CM)
    own.end(CM, version("7"))
    assert own.absorbs("ConfigMap", version("8"), "ns/job") is False  # someone else's write
    assert own.absorbs("ConfigMap", version("7"), "ns/job") is False
    # kind and name are part of the identity
    own.begin(CM)
    own.end(CM, version("9"))
    assert own.absorbs("Secret", version("9"), "ns/job") is False
    assert own.absorbs("ConfigMap", version("9", name="other"), "ns/job") is False
    assert own.absorbs("ConfigMap", version("9"), "ns/job") is True


def test_two_updates_before_either_echo() -> None:
    own, _ = tracker()
    for rv in ("7", "8"):
        own.begin(CM)
        own.end(CM, version(rv))
    assert own.absorbs("ConfigMap", version("7"), "ns/job") is True
    assert own.absorbs("ConfigMap", version("8"), "ns/job") is True
    assert len(own) == 0


def test_a_version_delivered_before_the_answer_waits_for_it() -> None:
    own, missed = tracker()
    own.begin(CM)
    # the watch delivers our write before the PUT's answer is read, then a foreign one
    assert own.absorbs("ConfigMap", version("7"), "ns/job") is True
    assert own.absorbs("ConfigMap", version("8"), "ns/job") is True
    own.end(CM, version("7"))
    assert missed == ["ns/job"]  # version 8 was not ours: its job is synced
    assert len(own) == 0


def test_a_failed_update_releases_what_it_held() -> None:
    own, missed = tracker()
    own.begin(CM)
    assert own.absorbs("ConfigMap", version("5"), "ns/job") is True
    own.end(CM, None)
    assert missed == ["ns/job"]
    assert own.absorbs("ConfigMap", version("6"), "ns/job") is False


def test_a_deleted_child_forgets_its_versions() -> None:
    own, _ = tracker()
    own.begin(CM)
    own.end(CM, version("7"))
    own.forget("ConfigMap", version("7"))
    assert len(own) == 0
    assert own.absorbs("ConfigMap", version("7"), "ns/job") is False
    assert own.latest(*CM) is None


def test_the_last_version_written_is_read_until_the_cache_has_it() -> None:
    own, _ = tracker()
    assert own.latest(*CM) is None
    own.begin(CM)
    assert own.latest(*CM) is None  # in flight: nothing written yet
    own.end(CM, version("7"))
    assert own.latest(*CM) == version("7")
    assert own.latest("Secret", "ns", "job-config") is None
    own.begin(CM)
    own.end(CM, version("8"))
    assert own.latest(*CM) == version("8")
    assert own.absorbs("ConfigMap", version("7"), "ns/job") is True
    assert own.latest(*CM) == version("8")  # the cache has 7, not 8 yet
    assert own.absorbs("ConfigMap", version("8"), "ns/job") is True
    assert own.latest(*CM) is None
    # a failed update writes nothing; a foreign version ends ours
    own.begin(CM)
    own.end(CM, None)
    assert own.latest(*CM) is None
    own.begin(CM)
    own.end(CM, version("9"))
    assert own.absorbs("ConfigMap", version("10"), "ns/job") is False
    assert own.latest(*CM) is None
