"""conformance.e2e_suite: spec texts from Ginkgo v1's verbose dry run; where each spec runs;
the two parts' verdicts merged in the suite's order."""

from conformance.e2e_suite import (
    NOT_RUN,
    REAL_NODE,
    REAL_NODE_OUTCOME,
    SKIPS,
    SpecResult,
    merge,
    parse_spec_texts,
    real_node_reason,
    skip_reason,
)
from conformance.report import e2e_table

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
