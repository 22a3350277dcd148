"""conformance.e2e_suite: spec texts from Ginkgo v1's verbose dry run; skips by reason."""

from conformance.e2e_suite import SKIPS, parse_spec_texts, skip_reason

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


def test_skips_name_their_reason() -> None:
    assert skip_reason("Widget when small should fit") is None
    reason = skip_reason("MPIJob with scheduler-plugins should create pending pods")
    assert reason is not None
    assert "scheduler-plugins" in reason
    assert skip_reason("MPIJob with OpenMPI implementation when has malformed command should "
                       "fail") == next(r for p, r in SKIPS if "malformed" in p)
    assert all(len(reason) > 20 for _, reason in SKIPS)
