"""conformance.real_node: which of upstream's specs run on the real node, and how they are
reported when it cannot serve."""

from conformance.e2e_suite import skip_reason
from conformance.real_node import REAL_SPECS, real_specs, skipped

SPECS = [
    "MPIJob with OpenMPI implementation when has malformed command should fail",
    "MPIJob with OpenMPI implementation when running as root should succeed",
    "MPIJob with OpenMPI implementation with scheduler-plugins scheduler should create "
    "pending pods",
]


def test_only_the_specs_needing_real_processes_run_there() -> None:
    assert real_specs(SPECS) == [SPECS[0]]
    # on the KWOK nodes the same spec is skipped, with the reason naming what it needs
    assert skip_reason(SPECS[0]) is not None
    assert "real MPI process" in (skip_reason(SPECS[0]) or "")
    assert REAL_SPECS == (r"has malformed command",)


def test_without_a_real_node_they_are_skipped_with_the_reason() -> None:
    [result] = skipped([SPECS[0]], "the real node is not built on this machine yet (kubelet)")
    assert (result.text, result.outcome, result.seconds, result.reason) == (
        SPECS[0], "skipped", 0.0, "the real node is not built on this machine yet (kubelet)")
