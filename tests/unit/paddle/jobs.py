"""Test helpers for PaddleJobs: manifests (upstream's examples, small jobs of either mode) and
the exact environment upstream's ``setPodEnv`` gives a pod."""

from __future__ import annotations

from typing import Any

from tests.tfjobs import example, replica_selector, training_job
from tests.tfjobs import replica as tf_replica

GROUP, VERSION, PLURAL, KIND = "kubeflow.org", "v1", "paddlejobs", "PaddleJob"
IMAGE = "registry.baidubce.com/paddlepaddle/paddle:2.4.0rc0-cpu"
CPU_EXAMPLE = "paddlepaddle/simple-cpu.yaml"
GPU_EXAMPLE = "paddlepaddle/simple-gpu.yaml"


def simple_cpu() -> dict[str, Any]:
    """examples/paddlepaddle/simple-cpu.yaml (a fresh copy)."""
    return example(CPU_EXAMPLE)


def simple_gpu() -> dict[str, Any]:
    """examples/paddlepaddle/simple-gpu.yaml (a fresh copy)."""
    return example(GPU_EXAMPLE)


def replica(replicas: int | None = 1, *, restart: str | None = None, port: int | None = None,
            annotations: dict[str, str] | None = None, **pod_spec: Any) -> dict[str, Any]:
    """A replica spec with one ``paddle`` container (``port``: its ``master`` port)."""
    return tf_replica(replicas, restart=restart, port=port, annotations=annotations,
                      container_port=("paddle", "master", IMAGE), **pod_spec)


def paddlejob(name: str, replicas: dict[str, dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """A PaddleJob with these replica specs (``run_policy=`` goes to ``spec.runPolicy``,
    ``elastic=`` to ``spec.elasticPolicy``)."""
    return training_job(KIND, "paddleReplicaSpecs", name, replicas, **spec)


def env(job: str, *, nnodes: int, master: str, server: bool | None = None
        ) -> list[dict[str, Any]]:
    """The variables upstream gives a pod of ``job``, in its order: ``master`` is
    ``PADDLE_MASTER``'s value (``$(POD_IP_DUMMY):<port>`` on the rendezvous pod, which then also
    gets ``POD_IP_DUMMY`` first); ``server``: parameter-server mode (True: a Master pod, False:
    a Worker pod; ``None``: collective mode)."""
    out: list[dict[str, Any]] = [{"name": "PYTHONUNBUFFERED", "value": "1"},
                                 {"name": "PADDLE_JOB_ID", "value": job},
                                 {"name": "PADDLE_NNODES", "value": str(nnodes)}]
    if master.startswith("$(POD_IP_DUMMY)"):
        out.append({"name": "POD_IP_DUMMY",
                    "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
    out.append({"name": "PADDLE_MASTER", "value": master})
    if server is not None:
        out.append({"name": "PADDLE_SERVER_NUM" if server else "PADDLE_TRAINER_NUM",
                    "value": "1"})
    return out


def selector(job: str, rtype: str) -> str:
    """``status.replicaStatuses[<rtype>].selector`` of ``job``."""
    return replica_selector(job, "paddlejob-controller", rtype)
