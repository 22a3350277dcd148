"""Test helpers for JAXJobs: upstream's example manifests (examples/jax/), small jobs, and the
exact environment upstream gives a pod."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tfjobs import example as any_example
from tests.tfjobs import replica as tf_replica
from tests.tfjobs import replica_selector, training_job

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = ("demo.yaml", "jaxjob_dist_spmd_mnist_gloo.yaml")
IMAGE = "ghcr.io/kubeflow/training-v1/jaxjob-simple:latest"


def example(name: str = "demo.yaml") -> dict[str, Any]:
    """An example manifest from examples/jax/ (a fresh copy)."""
    return any_example(f"jax/{name}")


def replica(replicas: int | None = 1, *, restart: str | None = None, port: int | None = None,
            annotations: dict[str, str] | None = None, **pod_spec: Any) -> dict[str, Any]:
    """A replica spec with one ``jax`` container (``port``: its ``jaxjob-port``)."""
    return tf_replica(replicas, restart=restart, port=port, annotations=annotations,
                      container_port=("jax", "jaxjob-port", IMAGE), **pod_spec)


def jaxjob(name: str, replicas: dict[str, dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """A JAXJob with these replica specs (``run_policy=`` goes to ``spec.runPolicy``)."""
    return training_job("JAXJob", "jaxReplicaSpecs", name, replicas, **spec)


def env(job: str, *, index: int, processes: int, port: int = 6666) -> list[dict[str, str]]:
    """The variables upstream's ``setPodEnv`` appends to each container of worker ``index``."""
    pairs = [("PYTHONUNBUFFERED", "1"), ("COORDINATOR_PORT", str(port)),
             ("COORDINATOR_ADDRESS", f"{job}-worker-0"), ("NUM_PROCESSES", str(processes)),
             ("PROCESS_ID", str(index))]
    return [{"name": k, "value": v} for k, v in pairs]


def selector(job: str, rtype: str = "Worker") -> str:
    """``status.replicaStatuses[<rtype>].selector`` of ``job`` (ours: with the deprecated
    ``group-name`` and ``job-name`` labels the engine puts on every child)."""
    return replica_selector(job, "jaxjob-controller", rtype)
