"""Drives one TrainJob through the Kubeflow SDK (``kubeflow``, its ``TrainerClient``, the client
Kubeflow Trainer v2's users train with) and prints, as one JSON document on stdout, what the
SDK answered.

It runs on the SDK's own virtualenv (``.venv-kubeflow``, ``make kubeflow-sdk-venv``: the SDK
needs ``kubernetes<36``, the project pins 37), so it imports nothing of the project.
tests/integration/test_trainer_sdk.py runs it:

    .venv-kubeflow/bin/python e2e/sdk/trainer_driver.py < scenario.json

The scenario: ``{"kubeconfig": path, "namespace": ns, "runtime": name, "num_nodes": n,
"wait_timeout": seconds}``. The driver calls, in order:

1. ``list_runtimes()``;
2. ``get_runtime(runtime)``;
3. ``train(runtime=..., trainer=CustomTrainer(func=train_func, func_args=..., num_nodes=n))``;
4. ``wait_for_job_status(name, {"Complete"})``;
5. ``get_job(name)`` (its status, node count and steps: the pods the SDK finds by
   ``jobset.sigs.k8s.io/jobset-name`` and ``replicatedjob-name``);
6. ``list_jobs()`` and ``list_jobs(runtime=...)``;
7. ``delete_job(name)``, then ``list_jobs()`` until the TrainJob is gone.

Output keys: ``runtimes`` (name, kind, framework, trainer type, command and node count of
each), ``runtime``, ``sent`` (the TrainJob as stored, read back with the plain API: what
``train`` created), ``waited`` (status), ``job`` (name, runtime, status, num_nodes, steps:
name, status, pod, device, device count), ``listed``, ``listed_on_runtime``,
``listed_after_delete``, and ``jobset`` (read with the plain API before the delete: each
replicated Job's name, parallelism and ``node`` container's command); on an exception,
``error`` (its type and message) and what was gathered so far.
"""

from __future__ import annotations

import sys
from typing import Any

from driving import delete_and_list, run
from kubeflow.trainer import CustomTrainer, KubernetesBackendConfig, TrainerClient
from kubernetes import client, config


def train_func(epochs: int) -> None:
    """The training function the SDK ships to the nodes (KWOK runs no program: the pods end
    as if it returned)."""
    import torch.distributed as dist

    dist.init_process_group(backend="gloo")
    for epoch in range(epochs):
        print(f"epoch {epoch} on rank {dist.get_rank()}")
    dist.destroy_process_group()


def runtime_view(runtime: Any) -> dict[str, Any]:
    return {"name": runtime.name, "kind": str(runtime.kind.value),
            "framework": runtime.trainer.framework,
            "trainer_type": str(runtime.trainer.trainer_type.value),
            "command": list(runtime.trainer.command), "num_nodes": runtime.trainer.num_nodes,
            "device": runtime.trainer.device, "device_count": runtime.trainer.device_count}


def job_view(job: Any) -> dict[str, Any]:
    return {"name": job.name, "runtime": job.runtime.name, "status": job.status,
            "num_nodes": job.num_nodes,
            "steps": [{"name": s.name, "status": s.status, "pod": s.pod_name,
                       "device": s.device, "device_count": s.device_count}
                      for s in job.steps]}


def drive(scenario: dict[str, Any], out: dict[str, Any]) -> None:
    namespace = scenario["namespace"]
    sdk = TrainerClient(backend_config=KubernetesBackendConfig(
        namespace=namespace, config_file=scenario["kubeconfig"]))
    out["runtimes"] = sorted((runtime_view(r) for r in sdk.list_runtimes()),
                             key=lambda r: r["name"])
    runtime = sdk.get_runtime(scenario["runtime"])
    out["runtime"] = runtime_view(runtime)
    name = sdk.train(runtime=runtime, trainer=CustomTrainer(
        func=train_func, func_args={"epochs": 2}, num_nodes=scenario["num_nodes"]))
    api = client.CustomObjectsApi(config.new_client_from_config(scenario["kubeconfig"]))
    sent = api.get_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", namespace,
                                            "trainjobs", name)
    out["sent"] = {"metadata": {"name": sent["metadata"]["name"]}, "spec": sent["spec"]}
    waited = sdk.wait_for_job_status(name, {"Complete"},
                                     timeout=scenario.get("wait_timeout", 180),
                                     polling_interval=1)
    out["waited"] = waited.status
    out["job"] = job_view(sdk.get_job(name))
    out["listed"] = [j.name for j in sdk.list_jobs()]
    out["listed_on_runtime"] = [j.name for j in sdk.list_jobs(runtime=runtime)]
    jobset = api.get_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", namespace,
                                              "jobsets", name)
    out["jobset"] = [{"name": r["name"], "parallelism": r["template"]["spec"]["parallelism"],
                      "command": next(c.get("command") for c in r["template"]["spec"]["template"]
                                      ["spec"]["containers"] if c["name"] == "node")}
                     for r in jobset["spec"]["replicatedJobs"]]
    delete_and_list(lambda: sdk.delete_job(name), lambda: [j.name for j in sdk.list_jobs()],
                    name, out)


if __name__ == "__main__":
    sys.exit(run(drive))
