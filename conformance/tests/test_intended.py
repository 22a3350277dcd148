"""conformance.intended: rules match only what they describe, and each is a README row."""

import re

from conformance.diff import MISSING, Difference
from conformance.intended import RULES, classify
from conformance.operators import REPO


def readme_difference_rows() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Differences from the Go operator", 1)[1].split("\n## ", 1)[0]
    return [m.group(1).strip() for m in re.finditer(r"^\| ([^|]+?) \|", section, re.MULTILINE)
            if m.group(1).strip() not in ("Area", "---")]


def test_every_rule_is_a_readme_row() -> None:
    rows = readme_difference_rows()
    for rule in RULES:
        assert any(row.startswith(rule.readme) for row in rows), (rule.id, rule.readme)


def test_rule_ids_are_unique() -> None:
    assert len({r.id for r in RULES}) == len(RULES)


def test_classify_splits_intended_from_unexplained() -> None:
    running = Difference("pi", "events", "events",
                         '["Normal MPIJobRunning: MPIJob <ns>/pi is running"].count', 7, 1)
    more_running = Difference("pi", "events", "events",
                              '["Normal MPIJobRunning: MPIJob <ns>/pi is running"].count', 1, 2)
    hostfile = Difference("pi", "ConfigMap/pi-config", "final", "data.hostfile", "a", "b")
    found, unexplained = classify([running, more_running, hostfile])
    assert [(d, r.id) for d, r in found] == [(running, "mpijob-running-event-once")]
    assert unexplained == [more_running, hostfile]


def test_managed_by_rule_only_for_its_case_and_only_ours_reporting() -> None:
    path = ('["Warning ValidationError: Found validation errors: spec.runPolicy.managedBy: '
            'Unsupported value"]')
    ours_only = Difference("managed-by-unknown", "events", "events", path, MISSING, {"count": 1})
    elsewhere = Difference("example-pi", "events", "events", path, MISSING, {"count": 1})
    found, unexplained = classify([ours_only, elsewhere])
    assert [r.id for _, r in found] == ["managed-by-unknown"]
    assert unexplained == [elsewhere]


def test_status_change_event_repeated_by_the_go_operator_only() -> None:
    path = '["Normal MPIJobCreated: MPIJob <ns>/pi is created."].count'
    go_twice = Difference("pi", "events", "events", path, 2, 1)
    ours_twice = Difference("pi", "events", "events", path, 1, 2)
    found, unexplained = classify([go_twice, ours_twice])
    assert [r.id for _, r in found] == ["status-change-event-once"]
    assert unexplained == [ours_twice]


def test_running_unobserved_rules_need_the_case_context() -> None:
    path = "status.conditions[1].reason"
    plain = Difference("pi", "MPIJob/pi", "final", path, "MPIJobSucceeded", "MPIJobRunning")
    timed = Difference("pi", "MPIJob/pi", "final", path, "MPIJobSucceeded", "MPIJobRunning",
                       context="running-unobserved-by-ours")
    found, unexplained = classify([plain, timed])
    assert [r.id for _, r in found] == ["running-unobserved-conditions"]
    assert unexplained == [plain]
