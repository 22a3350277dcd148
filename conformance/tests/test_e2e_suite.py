"""conformance.e2e_suite: spec texts from Ginkgo v1's verbose dry run; where each spec runs;
the two parts' verdicts merged in the suite's order."""

from pathlib import Path
from typing import Any

from conformance import e2e_suite
from conformance.diff import Difference
from conformance.e2e_suite import (
    CONFLICT,
    NOT_RUN,
    REAL_NODE,
    REAL_NODE_OUTCOME,
    SKIPS,
    SpecResult,
    merge,
    parse_spec_texts,
    real_node_reason,
    run_spec,
    skip_reason,
)
from conformance.report import e2e_table, failure_digest

# The shape of `<suite>.test -ginkgo.dryRun -ginkgo.v -ginkgo.noColor` (Ginkgo v1.16).
DRY_RUN = "\n".join([
    'Running Suite: E2e Suite',
    '========================',
    'Random Seed: 1796286093',
    'Will run 3 of 3 specs',
    '',
    'Widget when small ',
    '  should fit',
    '  example.com/suite@v1.0.0/test/e2e/widget_test.go:96',
    '\u2022',
    '------------------------------',
    'Widget when small when painted ',
    '  should keep its colour, mostly',
    '  example.com/suite@v1.0.0/test/e2e/widget_test.go:108',
    '\u2022',
    '------------------------------',
    'Widget with scheduler-plugins ',
    '  should create pending pods',
    '  example.com/suite@v1.0.0/test/e2e/widget_test.go:120',
    '\u2022',
    'Ran 3 of 3 Specs in 0.000 seconds',
    'SUCCESS! -- 0 Passed | 0 Failed | 0 Pending | 0 Skipped',
    'PASS',
    '',
])


def test_parse_spec_texts_joins_containers_and_spec() -> None:
    assert parse_spec_texts(DRY_RUN) == [
        "Widget when small should fit",
        "Widget when small when painted should keep its colour, mostly",
        "Widget with scheduler-plugins should create pending pods",
    ]


def test_every_spec_of_the_suite_runs_somewhere() -> None:
    # mpi-operator v0.8.2's suite: nothing is skipped for a missing component any more
    assert SKIPS == ()
    assert skip_reason("MPIJob with scheduler-plugins should create pending pods") is None
    assert real_node_reason("Widget when small should fit") is None
    for text, needs in [
        ("MPIJob with scheduler-plugins should create pending pods",
         "--gang-scheduling=scheduler-plugins-scheduler"),
        ("MPIJob with volcano-scheduler should create pending pods", "--gang-scheduling=volcano"),
        ("MPIJob with custom cluster-domain when running as root should succeed",
         "--cluster-domain=cluster.local"),
        ("MPIJob with OpenMPI implementation when has malformed command should fail",
         "real MPI process"),
    ]:
        assert needs in (real_node_reason(text) or ""), text
    assert [p for p, _ in REAL_NODE] == [r"has malformed command", r"with scheduler-plugins",
                                         r"with volcano-scheduler", r"with custom cluster-domain"]


KWOK = [SpecResult("A should pass", "passed", 1.5),
        SpecResult("MPIJob with volcano-scheduler should create pending pods",
                   REAL_NODE_OUTCOME, 0.0, "why"),
        SpecResult("C should fail", "failed", 2.0, "boom"),
        SpecResult("MPIJob with custom cluster-domain when running as root should succeed",
                   REAL_NODE_OUTCOME, 0.0, "why")]


def test_merge_puts_the_real_node_verdicts_in_the_suites_order() -> None:
    real = [SpecResult("MPIJob with custom cluster-domain when running as root should succeed",
                       "passed", 14.0),
            SpecResult("MPIJob with volcano-scheduler should create pending pods", "failed",
                       9.0, "timed out"),
            SpecResult("only on the real node", "passed", 1.0)]
    assert merge(KWOK, real) == [KWOK[0], real[1], KWOK[2], real[0], real[2]]


def test_merge_without_the_real_node_part_says_so() -> None:
    merged = merge(KWOK, None, left_out="not asked for")
    assert [(r.outcome, r.reason) for r in merged] == [
        ("passed", ""), (NOT_RUN, "not asked for"), ("failed", "boom"), (NOT_RUN, "not asked for")]
    # a spec the real-node part did not list is not run, never passed
    assert merge(KWOK[:2], [])[1] == SpecResult(KWOK[1].text, NOT_RUN, 0.0,
                                                "not listed by the real-node part")


def test_table_names_where_each_spec_ran_and_counts_the_specs_not_run() -> None:
    merged = merge(KWOK[:2], None, left_out="left out")
    table = e2e_table({"ours": merged}, places={KWOK[0].text: "KWOK", KWOK[1].text: "real node"})
    lines = table.splitlines()
    assert lines[0] == "| upstream e2e spec (mpi-operator v0.8.2) | runs on | ours | note |"
    assert lines[2] == "| A should pass | KWOK | passed (1.5s) |  |"
    assert lines[3] == ("| MPIJob with volcano-scheduler should create pending pods | real node "
                        "| not run | left out |")
    assert "ours: 1 passed, 0 skipped, 0 failed, 1 not run" in table


def test_failure_digest_names_each_failure_with_the_end_of_its_output() -> None:
    failed = SpecResult("B should fail", "failed", 3.25, "Expected <bool>: false",
                        "\n".join(f"line {i}" for i in range(20)) + "\n")
    diff = Difference("example-pi", "ConfigMap/pi-config", "final", "data.hostfile", "a", "b")
    digest = failure_digest([KWOK[0], failed], {"mpijob-v2beta1": [diff]}, tail_lines=2)
    assert digest.splitlines() == [
        "FAILED spec: B should fail: Expected <bool>: false (3.25s)",
        "    line 18",
        "    line 19",
        "FAILED mpijob-v2beta1: example-pi: ConfigMap/pi-config final data.hostfile: "
        "go='a' ours='b'",
    ]
    assert failure_digest([KWOK[0]], {}) == ""


def _fake_suite(tmp_path: Path, outputs: list[tuple[int, str]]) -> Path:
    """A stand-in for the suite's test binary that prints ``outputs[n]`` and exits with its
    code on its n-th run (a counter file beside it)."""
    tmp_path.mkdir(exist_ok=True)
    for i, (code, text) in enumerate(outputs):
        (tmp_path / f"out{i}").write_text(text)
        (tmp_path / f"code{i}").write_text(str(code))
    script = tmp_path / "suite.test"
    script.write_text(
        "#!/bin/sh\nd=$(dirname \"$0\")\nn=$(cat \"$d/count\" 2>/dev/null || echo 0)\n"
        "echo $((n + 1)) > \"$d/count\"\ncat \"$d/out$n\"\nexit $(cat \"$d/code$n\")\n")
    script.chmod(0o755)
    return script


CONFLICT_RUN = (1, "STEP: Resuming MPIJob\nUnexpected error:\n  Operation cannot be fulfilled on "
                f"mpijobs.kubeflow.org \"pi\": {CONFLICT} and try again\nRan 1 of 14 Specs\n")


def test_a_spec_failing_on_the_suites_own_conflict_runs_again(tmp_path: Path) -> None:
    binary = _fake_suite(tmp_path, [CONFLICT_RUN, (0, "Ran 1 of 14 Specs\nSUCCESS!\n")])
    logs = tmp_path / "logs"
    logs.mkdir()
    r = run_spec(binary, tmp_path / "kubeconfig", "A should pass", logs)
    assert (r.outcome, r.output) == ("passed", "Ran 1 of 14 Specs\nSUCCESS!\n")
    assert r.reason == ("attempt 2 of 5: the earlier ones failed on the suite's own "
                        "stale-object conflict (e2e_suite.CONFLICT)")
    assert sorted(p.name for p in logs.iterdir()) == ["a-should-pass-attempt2.log",
                                                      "a-should-pass.log"]


def test_a_conflict_every_time_or_another_failure_stands(tmp_path: Path) -> None:
    thrice = run_spec(_fake_suite(tmp_path / "a", [CONFLICT_RUN] * 5),
                     tmp_path / "kubeconfig", "A", _mkdir(tmp_path / "a" / "logs"))
    assert thrice.outcome == "failed"
    assert thrice.reason.startswith("Unexpected error: Operation cannot be fulfilled")
    assert thrice.reason.endswith("; attempt 5 of 5: the earlier ones failed on the suite's own "
                                 "stale-object conflict (e2e_suite.CONFLICT)")
    other = run_spec(_fake_suite(tmp_path / "b", [(1, "Expected\n  <int>: 1\nRan 1 of 1\n"),
                                                  (0, "Ran 1 of 1\n")]),
                     tmp_path / "kubeconfig", "A", _mkdir(tmp_path / "b" / "logs"))
    assert (other.outcome, other.reason) == ("failed", "Expected <int>: 1 Ran 1 of 1")


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def test_specs_that_race_run_alone_before_the_others(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(e2e_suite, "RUN_ALONE", (r"when painted",))
    (tmp_path / "dry-run").write_text(DRY_RUN)
    binary = tmp_path / "suite.test"
    # a dry run prints the listing; a focused run logs its start and end around a short sleep
    binary.write_text(
        "#!/bin/sh\nd=$(dirname \"$0\")\n"
        "if [ \"$1\" = -ginkgo.dryRun ]; then cat \"$d/dry-run\"; exit 0; fi\n"
        "echo \"start $2\" >> \"$d/order\"; sleep 0.3; echo \"end $2\" >> \"$d/order\"\n"
        "echo 'Ran 1 of 3 Specs'\n")
    binary.chmod(0o755)
    results = e2e_suite.run_suite(binary, tmp_path / "kubeconfig", tmp_path / "logs", parallel=2)
    assert [(r.text, r.outcome) for r in results] == [
        ("Widget when small should fit", "passed"),
        ("Widget when small when painted should keep its colour, mostly", "passed"),
        ("Widget with scheduler-plugins should create pending pods", REAL_NODE_OUTCOME)]
    order = [line.split(" ")[0] + (" painted" if "painted" in line else " fit")
             for line in (tmp_path / "order").read_text().splitlines()]
    assert order == ["start painted", "end painted", "start fit", "end fit"]
