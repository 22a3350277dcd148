"""Kubeflow Trainer v2.3.0's source, for tests that compare with it: :func:`trainer_dir` is
its module in the Go module cache (:func:`tests.upstream.reference_dir`, downloaded the first
time). No copy of its files is kept in this repository."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.upstream import reference_dir

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

__all__ = ["crd", "trainer_dir"]


def trainer_dir() -> Path:
    return reference_dir("trainer")


@cache
def _crd_text(plural: str) -> str:
    path = trainer_dir() / "manifests" / "base" / "crds" / f"trainer.kubeflow.org_{plural}.yaml"
    return path.read_text()


def crd(plural: str) -> dict[str, Any]:
    """Upstream's CRD of ``plural`` (a fresh copy), without controller-gen's annotation."""
    document: dict[str, Any] = yaml.load(_crd_text(plural), Loader=_LOADER)
    document["metadata"].pop("annotations", None)
    return document
