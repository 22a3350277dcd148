"""``--feature-gates`` as Kubernetes components take it: known gates only, true or false."""

from __future__ import annotations

import pytest

from mpi_controller.kube.featuregates import parse_feature_gates

KNOWN = ["Alpha", "Beta"]


def test_named_gates_are_returned_with_their_values() -> None:
    assert parse_feature_gates("", KNOWN) == {}
    assert parse_feature_gates("Alpha=true", KNOWN) == {"Alpha": True}
    assert parse_feature_gates(" Alpha = TRUE , Beta=false ,", KNOWN) == {
        "Alpha": True, "Beta": False}
    assert parse_feature_gates("Alpha=1,Beta=f", KNOWN) == {"Alpha": True, "Beta": False}


@pytest.mark.parametrize(("text", "message"), [
    ("Gamma=true", '--feature-gates: unknown feature gate "Gamma"; known gates: Alpha, Beta'),
    ("Alpha", '--feature-gates: missing "=<true|false>" after "Alpha"'),
    ("Alpha=yes", '--feature-gates: invalid value "yes" for "Alpha": want true or false'),
    ("Alpha=true,Alpha=false", '--feature-gates: feature gate "Alpha" is given twice'),
])
def test_bad_gates_are_errors_naming_the_flag(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"^--feature-gates: ") as err:
        parse_feature_gates(text, KNOWN)
    assert str(err.value) == message
