"""The JobSet of a TrainJob (Trainer v2.3.0 ``pkg/runtime/framework/plugins/jobset/jobset.go``
``SyncParallelCount`` and ``Build``, and ``builder.go``), from the runtime info after the ML
policy plugins ran (:func:`build_jobset`).

* Every replicated Job's ``parallelism`` and ``completions`` become its pod set's count.
* The JobSet has the TrainJob's name and namespace, the runtime template's labels and
  annotations (and the runtime patches'), and a controller owner reference to the TrainJob
  (``blockOwnerDeletion``).
* The dataset and model initializer Jobs (labelled with their ancestor step) get one replica;
  their container of the same name gets ``STORAGE_URI`` and the TrainJob's initializer env,
  and an ``envFrom`` of its ``secretRef``.
* The trainer Job gets one replica; its ``node`` container the TrainJob's image, command and
  args when set, and its env (again: upstream's builder upserts it after the plugins did).
* Every pod template gets the gang-scheduling plugins' labels; ``spec.suspend`` is the
  TrainJob's.

Pure: returns a new dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.trainjob import constants
from mpi_controller.trainjob.apply import upsert_env
from mpi_controller.trainjob.info import RuntimeInfo, pod_spec

__all__ = ["STORAGE_URI_ENV", "build_jobset", "sync_parallel_count"]

STORAGE_URI_ENV = "STORAGE_URI"
Obj = dict[str, Any]


def sync_parallel_count(info: RuntimeInfo) -> None:
    """Each replicated Job's ``parallelism`` and ``completions``: its pod set's count."""
    for pod_set in info.pod_sets:
        for rjob in info.spec.get("replicatedJobs") or []:
            if rjob.get("name") == pod_set.name:
                job_spec = rjob.setdefault("template", {}).setdefault("spec", {})
                job_spec["parallelism"] = pod_set.count
                job_spec["completions"] = pod_set.count
                break


def _ancestor(rjob: Mapping[str, Any]) -> str | None:
    labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
    ancestor = labels.get(constants.LABEL_TRAINJOB_ANCESTOR)
    return ancestor if isinstance(ancestor, str) else None


def _initializers(spec: Obj, trainjob: Mapping[str, Any]) -> None:
    initializer = (trainjob.get("spec") or {}).get("initializer") or {}
    for rjob in spec.get("replicatedJobs") or []:
        for step, config in ((constants.DATASET_INITIALIZER, initializer.get("dataset")),
                             (constants.MODEL_INITIALIZER, initializer.get("model"))):
            if _ancestor(rjob) != step:
                continue
            rjob["replicas"] = 1
            for container in pod_spec(rjob).get("containers") or []:
                if container.get("name") != step or config is None:
                    continue
                env = container.setdefault("env", [])
                if config.get("storageUri") is not None:
                    upsert_env(env, [{"name": STORAGE_URI_ENV, "value": config["storageUri"]}])
                upsert_env(env, config.get("env") or [])
                if config.get("secretRef") is not None:
                    container.setdefault("envFrom", []).append(
                        {"secretRef": {"name": config["secretRef"]["name"]}})


def _trainer(info: RuntimeInfo, spec: Obj, trainjob: Mapping[str, Any]) -> None:
    trainer = (trainjob.get("spec") or {}).get("trainer")
    launcher_node = bool(((info.ml_policy or {}).get("mpi") or {}).get("runLauncherAsNode"))
    for rjob in spec.get("replicatedJobs") or []:
        is_trainer = _ancestor(rjob) == constants.ANCESTOR_TRAINER
        if is_trainer:
            rjob["replicas"] = 1
        if not (is_trainer or (launcher_node and rjob.get("name") == constants.NODE)):
            continue
        for container in pod_spec(rjob).get("containers") or []:
            if container.get("name") != constants.NODE or trainer is None:
                continue
            if is_trainer:
                for key in ("image", "command", "args"):
                    if trainer.get(key) is not None:
                        container[key] = trainer[key]
            upsert_env(container.setdefault("env", []), trainer.get("env") or [])


def _drop_empty(spec: Obj) -> None:
    """The empty lists the builders made (an apply configuration omits them)."""
    for rjob in spec.get("replicatedJobs") or []:
        pod = pod_spec(rjob)
        for key in ("initContainers", "volumes"):
            if pod.get(key) == []:
                del pod[key]
        for container in (*pod.get("containers", []), *pod.get("initContainers", [])):
            for key in ("env", "ports", "volumeMounts", "envFrom"):
                if container.get(key) == []:
                    del container[key]


def build_jobset(info: RuntimeInfo, trainjob: Mapping[str, Any]) -> Obj:
    """The JobSet (``jobset.x-k8s.io/v1alpha2``) of ``trainjob`` (module doc)."""
    sync_parallel_count(info)
    spec = info.spec
    _initializers(spec, trainjob)
    _trainer(info, spec, trainjob)
    for key, values in (("labels", info.pod_labels), ("annotations", info.pod_annotations)):
        if not values:
            continue
        for rjob in spec.get("replicatedJobs") or []:
            template = rjob.setdefault("template", {}).setdefault("spec", {}).setdefault(
                "template", {})
            template.setdefault("metadata", {}).setdefault(key, {}).update(values)
    job_spec = trainjob.get("spec") or {}
    if job_spec.get("suspend") is not None:
        spec["suspend"] = job_spec["suspend"]
    _drop_empty(spec)
    meta = trainjob["metadata"]
    metadata: Obj = {"name": meta["name"], "namespace": meta.get("namespace", "")}
    if info.labels:
        metadata["labels"] = dict(info.labels)
    if info.annotations:
        metadata["annotations"] = dict(info.annotations)
    metadata["ownerReferences"] = [{
        "apiVersion": f"{constants.GROUP}/{constants.VERSION}", "kind": constants.KIND,
        "name": meta["name"], "uid": meta.get("uid", ""), "controller": True,
        "blockOwnerDeletion": True}]
    return {"apiVersion": f"{constants.JOBSET_GROUP}/{constants.JOBSET_VERSION}",
            "kind": constants.JOBSET_KIND, "metadata": metadata, "spec": spec}
