"""Upstream operators' sources, for tests that compare with them: the reference operators'
modules at the versions ``hack/versions.env`` pins, as ``hack/reference-operators.sh
module-dir`` finds them in the Go module cache (downloading them from the module proxy the
first time). No copy of upstream's files is kept in this repository, and a test that needs
one fails (``CalledProcessError``, the script's message on stderr) rather than skipping when
it cannot be had."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from conformance.operators import reference

__all__ = ["reference_dir", "training_operator_dir"]


@cache
def reference_dir(operator: str) -> Path:
    """The module directory of ``operator`` (a ``hack/reference-operators.sh`` name:
    ``mpi-operator``, ``mpi-operator-v0.2``, ``training-operator``, ``trainer``)."""
    return Path(reference("module-dir", operator))


def training_operator_dir() -> Path:
    """training-operator's module directory (its manifests and examples)."""
    return reference_dir("training-operator")
