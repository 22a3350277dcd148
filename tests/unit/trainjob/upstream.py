"""Kubeflow Trainer v2.3.0's source, for tests that compare with it: ``go mod download`` puts
``github.com/kubeflow/trainer/v2@v2.3.0`` in the Go module cache (from the module proxy, once)
and :func:`trainer_dir` says where. No copy of its files is kept in this repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

__all__ = ["TRAINER_MODULE", "TRAINER_VERSION", "crd", "module_dir", "trainer_dir"]

TRAINER_MODULE = "github.com/kubeflow/trainer/v2"
TRAINER_VERSION = "v2.3.0"


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


def trainer_dir() -> Path:
    return module_dir(TRAINER_MODULE, TRAINER_VERSION)


@cache
def _crd_text(plural: str) -> str:
    path = trainer_dir() / "manifests" / "base" / "crds" / f"trainer.kubeflow.org_{plural}.yaml"
    return path.read_text()


def crd(plural: str) -> dict[str, Any]:
    """Upstream's CRD of ``plural`` (a fresh copy), without controller-gen's annotation."""
    document: dict[str, Any] = yaml.load(_crd_text(plural), Loader=_LOADER)
    document["metadata"].pop("annotations", None)
    return document
