"""Kubeflow Trainer v2.3.0's source, for tests that compare with it: ``go mod download`` puts
``github.com/kubeflow/trainer/v2@v2.3.0`` in the Go module cache (from the module proxy, once;
:func:`tests.upstream.module_dir`) and :func:`trainer_dir` says where. No copy of its files is
kept in this repository."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.upstream import module_dir

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

__all__ = ["TRAINER_MODULE", "TRAINER_VERSION", "crd", "trainer_dir"]

TRAINER_MODULE = "github.com/kubeflow/trainer/v2"
TRAINER_VERSION = "v2.3.0"


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
