"""XGBoostJob manifests for the unit tests: upstream's examples (copied into
``examples/xgboost/``) and small jobs of ``xgboost`` containers."""

from __future__ import annotations

from typing import Any

from tests.support import REPO
from tests.tfjobs import example as any_example
from tests.tfjobs import replica as any_replica
from tests.tfjobs import training_job

IMAGE = "ghcr.io/kubeflow/training-v1/xgboost-dist-iris:latest"
EXAMPLES = REPO / "examples" / "xgboost"


def example(name: str = "xgboostjob.yaml") -> dict[str, Any]:
    """An example manifest of ``examples/xgboost/`` (a fresh copy)."""
    return any_example(f"xgboost/{name}")


def replica(replicas: int | None = 1, *, restart: str | None = None, port: int | None = None,
            **pod_spec: Any) -> dict[str, Any]:
    """A replica spec with one ``xgboost`` container (``port``: its ``xgboostjob-port``)."""
    return any_replica(replicas, restart=restart, port=port,
                       container_port=("xgboost", "xgboostjob-port", IMAGE), **pod_spec)


def xgboostjob(name: str, replicas: dict[str, dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """An XGBoostJob with these replica specs (``run_policy=`` goes to ``spec.runPolicy``)."""
    return training_job("XGBoostJob", "xgbReplicaSpecs", name, replicas, **spec)


def master_and_workers(name: str = "job", workers: int = 2, *,
                       restart: str | None = None, **spec: Any) -> dict[str, Any]:
    """One Master and ``workers`` Workers (``restart``: the Workers' restart policy)."""
    return xgboostjob(name, {"Master": replica(1), "Worker": replica(workers, restart=restart)},
                      **spec)
