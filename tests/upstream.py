"""Upstream operators' sources, for tests that compare with them: ``go mod download`` puts a
module in the Go module cache (from the module proxy, once; later calls read the cache) and
:func:`module_dir` says where. No copy of upstream's files is kept in this repository, and a
test that needs one fails (saying why) rather than skipping when it cannot be had."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

__all__ = ["TRAINING_OPERATOR_MODULE", "TRAINING_OPERATOR_VERSION", "module_dir",
           "training_operator_dir"]

TRAINING_OPERATOR_MODULE = "github.com/kubeflow/training-operator"
TRAINING_OPERATOR_VERSION = "v1.9.2"


@cache
def module_dir(module: str, version: str) -> Path:
    """The module's directory in the Go module cache, downloaded when missing (an
    AssertionError saying why when ``go`` is missing or the download fails)."""
    go = shutil.which("go")
    assert go, f"the Go toolchain is needed to download {module}@{version} (go mod download)"
    done = subprocess.run(
        [go, "mod", "download", "-json", f"{module}@{version}"], capture_output=True, text=True,
        timeout=600, check=False, cwd=Path(__file__).parent,
        env={**os.environ, "GOFLAGS": "-mod=mod", "GO111MODULE": "on"})
    answer = json.loads(done.stdout or "{}")
    why = f"go mod download {module}@{version}: {answer.get('Error') or done.stderr}"
    assert done.returncode == 0, why
    assert "Dir" in answer, why
    return Path(answer["Dir"])


def training_operator_dir() -> Path:
    """training-operator v1.9.2's module directory (its manifests and examples)."""
    return module_dir(TRAINING_OPERATOR_MODULE, TRAINING_OPERATOR_VERSION)
