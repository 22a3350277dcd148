"""Test helpers for PyTorchJobs: manifests (the issue's example, small and elastic jobs), the
exact environment upstream gives a pod, and on a cluster CRUD plus the scale subresource and
HPAs through the official sync client (an observer independent of the controller under
test)."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from tests.tfjobs import TFJobs, example, replica_selector, training_job
from tests.tfjobs import replica as tf_replica

GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "pytorchjobs"
EXAMPLE = "pytorch-simple.yaml"
IMAGE = "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727"
INIT_COMMAND = ("err=1;for i in $(seq {tries}); do if nslookup {master}; then err=0 && break; "
                "fi;echo waiting for master; sleep 2; done; exit $err")


def simple() -> dict[str, Any]:
    """examples/pytorch-simple.yaml (a fresh copy)."""
    return example(EXAMPLE)


def replica(replicas: int | None = 1, *, restart: str | None = None, port: int | None = None,
            annotations: dict[str, str] | None = None, **pod_spec: Any) -> dict[str, Any]:
    """A replica spec with one ``pytorch`` container (``port``: its ``pytorchjob-port``)."""
    return tf_replica(replicas, restart=restart, port=port, annotations=annotations,
                      container_port=("pytorch", "pytorchjob-port", IMAGE), **pod_spec)


def pytorchjob(name: str, replicas: dict[str, dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """A PyTorchJob with these replica specs (``run_policy=`` goes to ``spec.runPolicy``,
    ``elastic=`` to ``spec.elasticPolicy``)."""
    return training_job("PyTorchJob", "pytorchReplicaSpecs", name, replicas, **spec)


CPU_METRIC = {"type": "Resource", "resource": {"name": "cpu", "target": {
    "type": "Utilization", "averageUtilization": 80}}}


def master_env(job: str, *, rank: int, world: int, nnodes: str, port: int = 23456,
               nproc: str = "auto") -> list[dict[str, str]]:
    """The variables upstream gives a pod of a job with a Master (not elastic)."""
    master = f"{job}-master-0"
    pairs = [("PYTHONUNBUFFERED", "1"), ("MASTER_PORT", str(port)),
             ("PET_MASTER_PORT", str(port)), ("MASTER_ADDR", master),
             ("PET_MASTER_ADDR", master), ("WORLD_SIZE", str(world)), ("RANK", str(rank)),
             ("PET_NODE_RANK", str(rank)), ("PET_NPROC_PER_NODE", nproc),
             ("PET_NNODES", nnodes)]
    return [{"name": k, "value": v} for k, v in pairs]


def init_container(job: str, *, tries: int = 100, image: str = "alpine:3.10") -> dict[str, Any]:
    """Upstream's default init container of a worker of ``job``."""
    return {"name": "init-pytorch", "image": image, "imagePullPolicy": "IfNotPresent",
            "resources": {"limits": {"cpu": "100m", "memory": "20Mi"},
                          "requests": {"cpu": "50m", "memory": "10Mi"}},
            "command": ["sh", "-c", INIT_COMMAND.format(tries=tries, master=f"{job}-master-0")]}


def selector(job: str, rtype: str) -> str:
    """``status.replicaStatuses[<rtype>].selector`` of ``job``."""
    return replica_selector(job, "pytorchjob-controller", rtype)


class PyTorchJobs(TFJobs):
    """CRUD on PyTorchJobs in one namespace (see TFJobs), their scale subresource and HPAs."""

    group, version, plural, kind = GROUP, VERSION, PLURAL, "PyTorchJob"

    def __init__(self, api: Any, namespace: str) -> None:
        super().__init__(api, namespace)
        self.autoscaling = client.AutoscalingV2Api(api)

    def scale(self, name: str) -> dict[str, Any]:
        """The job's scale subresource (``autoscaling/v1`` Scale)."""
        return self.custom.get_namespaced_custom_object_scale(  # type: ignore[no-any-return]
            self.group, self.version, self.namespace, self.plural, name)

    def hpa(self, name: str) -> dict[str, Any] | None:
        """The HPA ``name`` as a plain dict (``None``: there is none)."""
        try:
            hpa = self.autoscaling.read_namespaced_horizontal_pod_autoscaler(name, self.namespace)
        except client.ApiException as err:
            if err.status == 404:
                return None
            raise
        plain: dict[str, Any] = self.core.api_client.sanitize_for_serialization(hpa)
        return plain
