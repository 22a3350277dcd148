"""From the v1 kinds to Trainer v2: the ``TrainJob`` (and, where needed, the ``TrainingRuntime``)
equivalent to a ``PyTorchJob``, ``XGBoostJob`` or ``JAXJob`` (``kubeflow.org/v1``) or an
``MPIJob`` (``kubeflow.org/v2beta1``, ``v1``, ``v1alpha2``), and what of the v1 job has no
equivalent, field by field.

:func:`to_trainer` is pure (plain dicts in and out, no I/O). Its contract:

* the result's ``objects`` are, in apply order, the runtime (when one is needed) and the
  TrainJob, both ``trainer.kubeflow.org/v1alpha1``, in the job's namespace (when it names
  one) and with the job's name; the TrainJob keeps the job's labels and annotations (a Kueue
  ``kueue.x-k8s.io/queue-name`` label works the same on a TrainJob);
* ``losses`` lists each field of the input that the output does not carry, with the field's
  path in the input and why; an empty list means the output does what the input did, as far
  as the API says (the environment a v1 operator adds to the pods is not a field: ``notes``
  say how it differs, e.g. :data:`TORCH_ENV_NOTE`);
* a PyTorchJob (XGBoostJob, JAXJob) whose pod template is one container with only a name,
  image, command, args, env and resources, restarted ``OnFailure``, and whose run policy needs
  nothing of the runtime, becomes a TrainJob on the shipped ``ClusterTrainingRuntime``
  ``torch-distributed`` (``xgboost-distributed``, ``jax-distributed``; the container's fields
  in ``spec.trainer``); any other becomes a ``TrainingRuntime`` named after the job holding
  its pod template (the container renamed ``node``, as Trainer's plugins find it) with the
  torch (XGBoost, JAX) policy, and a TrainJob naming it. Every node runs the Master's
  template (the Worker's when there is no Master); ``numNodes`` is the Master and Worker
  replicas; a PyTorchJob's ``nprocPerNode`` is ``numProcPerNode``;
* an MPIJob becomes a ``TrainingRuntime`` shaped like the shipped ``deepspeed-distributed``
  (the replicated Jobs ``node``, the workers (``parallelism`` the Worker replicas), and
  ``launcher``, the trainer step, whose success ends the JobSet; ``publishNotReadyAddresses``)
  with the MPI policy (``numNodes`` 1, the launcher's pods; ``slotsPerWorker`` as
  ``numProcPerNode``, ``sshAuthMountPath``, ``runLauncherAsWorker`` as
  ``runLauncherAsNode``); ``launcherCreationPolicy: WaitForWorkersReady`` becomes the
  launcher's ``dependsOn`` the nodes ``Ready``. ``v1`` and ``v1alpha2`` MPIJobs go through the
  conversion webhook's conversion to ``v2beta1`` first; what it keeps only in annotations is
  reported lost;
* ``runPolicy``: ``suspend`` and ``activeDeadlineSeconds`` go to the TrainJob,
  ``ttlSecondsAfterFinished`` to the JobSet template, ``backoffLimit`` to the trainer step's
  Job; ``managedBy`` ``kueue.x-k8s.io/multikueue`` is kept, the v1 operators' own values
  dropped; ``cleanPodPolicy`` and ``schedulingPolicy`` are lost;
* a replica's ``restartPolicy`` (the kind's default when unset) ``OnFailure`` or ``Never``
  becomes its pod template's; ``ExitCode`` becomes ``Never`` (as the v1 pods had it) and its
  retry of exit codes 128-255 is lost; ``Always`` is lost (``OnFailure`` is used).

Any other kind raises :class:`NotConvertible`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.trainjob import constants

__all__ = ["CONVERTIBLE_KINDS", "DISCOVER_HOSTS", "FRAMEWORK_LABEL", "JAX_ENV_NOTE",
           "TORCH_ENV_NOTE", "TORCH_RUNTIME", "XGBOOST_ENV_NOTE", "Converted", "Loss",
           "NotConvertible", "to_trainer"]

Obj = dict[str, Any]
API_VERSION = f"{constants.GROUP}/{constants.VERSION}"
TORCH_RUNTIME = "torch-distributed"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
CONVERTIBLE_KINDS = ("PyTorchJob", "XGBoostJob", "JAXJob", "MPIJob")
TORCH_ENV_NOTE = ("the v1 operator also set MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK; "
                  "Trainer's torch policy sets the PET_* variables torchrun reads")
XGBOOST_ENV_NOTE = ("the v1 operator set MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, "
                    "WORKER_ADDRS and WORKER_PORT; Trainer's XGBoost policy sets DMLC_TRACKER_URI, "
                    "DMLC_TRACKER_PORT, DMLC_TASK_ID and DMLC_NUM_WORKER (the Rabit tracker's)")
JAX_ENV_NOTE = ("the v1 operator set COORDINATOR_ADDRESS, COORDINATOR_PORT, NUM_PROCESSES and "
                "PROCESS_ID; Trainer's JAX policy sets JAX_COORDINATOR_ADDRESS, "
                "JAX_NUM_PROCESSES and JAX_PROCESS_ID")
_TRAINER_FIELDS = ("image", "command", "args", "env")
_JOB_RESTART_POLICIES = ("OnFailure", "Never")
DISCOVER_HOSTS = "/etc/mpi/discover_hosts.sh"
_OWN_MANAGERS = ("kubeflow.org/training-operator", "kubeflow.org/mpi-operator")
_CONVERSION_PREFIX = "conversion.mpi-controller.io/"
_CONVERSION_ORIGIN = "mpi-controller.io/conversion"


@dataclass(frozen=True)
class _Framework:
    """A v1 kind whose replicas all become the Job ``node`` of one ML policy: its replica
    specs' key and types (the first one's template runs every node), the policy (also the
    ``trainer.kubeflow.org/framework`` label), the shipped runtime, the kind's default
    ``restartPolicy``, the spec fields it reads beyond the replicas and run policy, and the
    note on the environment."""

    replicas: str
    roles: tuple[str, ...]
    policy: str
    runtime: str
    restart: str
    fields: tuple[str, ...]
    note: str


_FRAMEWORKS = {
    "PyTorchJob": _Framework("pytorchReplicaSpecs", ("Master", "Worker"), "torch",
                             TORCH_RUNTIME, "OnFailure", ("nprocPerNode", "elasticPolicy"),
                             TORCH_ENV_NOTE),
    "XGBoostJob": _Framework("xgbReplicaSpecs", ("Master", "Worker"), "xgboost",
                             "xgboost-distributed", "Never", (), XGBOOST_ENV_NOTE),
    "JAXJob": _Framework("jaxReplicaSpecs", ("Worker",), "jax", "jax-distributed", "Never", (),
                         JAX_ENV_NOTE),
}


class NotConvertible(ValueError):
    """The manifest is not a job this conversion knows (its message says why)."""


@dataclass(frozen=True)
class Loss:
    """A field of the v1 job (``field``: its path, e.g. ``spec.runPolicy.cleanPodPolicy``)
    that the Trainer objects do not carry, and why."""

    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


@dataclass(frozen=True)
class Converted:
    """The Trainer objects in apply order (runtime first, when there is one), the losses, and
    notes on behaviour that is no field (what a v1 operator did beyond the API)."""

    objects: list[Obj]
    losses: list[Loss]
    notes: tuple[str, ...] = ()


def to_trainer(job: Mapping[str, Any],
               to_v2beta1: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None) \
        -> Converted:
    """The Trainer equivalent of ``job`` (module doc). ``to_v2beta1`` converts an MPIJob of
    ``v1`` or ``v1alpha2`` to ``v2beta1`` (the conversion webhook's conversion); without it
    such an MPIJob is :class:`NotConvertible`."""
    kind, api_version = job.get("kind"), job.get("apiVersion")
    if kind in _FRAMEWORKS and api_version == "kubeflow.org/v1":
        return _Conversion(job).single_policy(_FRAMEWORKS[str(kind)])
    if kind == "MPIJob" and api_version == "kubeflow.org/v2beta1":
        return _Conversion(job).mpi(origin=None)
    if kind == "MPIJob" and api_version in ("kubeflow.org/v1", "kubeflow.org/v1alpha2"):
        if to_v2beta1 is None:
            raise NotConvertible(f"MPIJob {api_version} needs its conversion to v2beta1")
        return _Conversion(to_v2beta1(job)).mpi(origin=str(api_version))
    raise NotConvertible(
        f"kind {kind!r} (apiVersion {api_version!r}) has no conversion to {API_VERSION} "
        "(PyTorchJob, XGBoostJob, JAXJob and MPIJob have)")


class _Conversion:
    """One conversion: the job (a deep copy) and the losses found so far."""

    def __init__(self, job: Mapping[str, Any]) -> None:
        self.job: Obj = copy.deepcopy(dict(job))
        self.spec: Obj = self.job.get("spec") or {}
        self.losses: list[Loss] = []

    def lose(self, field: str, reason: str) -> None:
        self.losses.append(Loss(field, reason))

    # -- shared parts -----------------------------------------------------------------------

    def metadata(self, *, namespaced_name: bool = True) -> Obj:
        meta = self.job.get("metadata") or {}
        out: Obj = {"name": meta.get("name", "")}
        if namespaced_name and meta.get("namespace"):
            out["namespace"] = meta["namespace"]
        return out

    def trainjob_metadata(self) -> Obj:
        out = self.metadata()
        meta = self.job.get("metadata") or {}
        if meta.get("labels"):
            out["labels"] = dict(meta["labels"])
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                       if not k.startswith(_CONVERSION_PREFIX) and k != _CONVERSION_ORIGIN}
        if annotations:
            out["annotations"] = annotations
        return out

    def run_policy(self, path: str, policy: Mapping[str, Any], trainjob_spec: Obj,
                   jobset_spec: Obj, trainer_job: Obj) -> None:
        """``runPolicy`` (module doc) into the TrainJob's spec, the JobSet template's spec and
        the trainer step's Job spec."""
        for key, value in policy.items():
            field = f"{path}.{key}"
            if key in ("suspend", "activeDeadlineSeconds"):
                if value is not None:
                    trainjob_spec[key] = value
            elif key == "ttlSecondsAfterFinished":
                jobset_spec["ttlSecondsAfterFinished"] = value
            elif key == "backoffLimit":
                trainer_job["backoffLimit"] = value
            elif key == "managedBy":
                if value == constants.MANAGED_BY_MULTIKUEUE:
                    trainjob_spec["managedBy"] = value
                elif value not in _OWN_MANAGERS:
                    self.lose(field, f"{value!r}: a TrainJob is managed by "
                              f"{constants.MANAGED_BY_TRAINER} or "
                              f"{constants.MANAGED_BY_MULTIKUEUE}")
            elif key == "cleanPodPolicy":
                self.lose(field, f"{value!r}: no equivalent (a finished JobSet's pods are "
                          "left to its Jobs)")
            elif key == "schedulingPolicy":
                self.lose(field, "no equivalent in the TrainJob (gang scheduling is the "
                          "runtime's podGroupPolicy)")
            else:
                self.lose(field, "no equivalent")

    def pod_template(self, path: str, replica: Mapping[str, Any], default_restart: str) -> Obj:
        """The replica's pod template with its first container named ``node`` and the
        replica's restart policy (when a Job allows it)."""
        template: Obj = copy.deepcopy(replica.get("template") or {})
        pod = template.setdefault("spec", {})
        containers = pod.get("containers") or []
        if containers:
            containers[0]["name"] = constants.NODE
        restart = replica.get("restartPolicy") or default_restart
        if restart in _JOB_RESTART_POLICIES:
            pod["restartPolicy"] = restart
        elif restart == "ExitCode":
            self.lose(f"{path}.restartPolicy", "'ExitCode': no retry of exit codes 128-255 "
                      "(the pods restart Never, as the v1 pods did)")
            pod["restartPolicy"] = "Never"
        else:
            self.lose(f"{path}.restartPolicy", f"{restart!r}: a Job's pods restart "
                      "OnFailure or Never (OnFailure is used)")
            pod["restartPolicy"] = "OnFailure"
        return template

    @staticmethod
    def runtime(metadata: Obj, framework: str, spec: Obj) -> Obj:
        return {"apiVersion": API_VERSION, "kind": constants.RUNTIME_KIND,
                "metadata": {**metadata, "labels": {FRAMEWORK_LABEL: framework}},
                "spec": spec}

    def trainjob(self, runtime_name: str, runtime_kind: str, spec: Obj) -> Obj:
        return {"apiVersion": API_VERSION, "kind": constants.KIND,
                "metadata": self.trainjob_metadata(),
                "spec": {"runtimeRef": {"name": runtime_name, "kind": runtime_kind}, **spec}}

    def unknown_fields(self, known: tuple[str, ...]) -> None:
        for key in self.spec:
            if key not in known:
                self.lose(f"spec.{key}", "no equivalent")

    # -- PyTorchJob, XGBoostJob, JAXJob -----------------------------------------------------

    def single_policy(self, fw: _Framework) -> Converted:
        kind = self.job.get("kind")
        replicas: Obj = self.spec.get(fw.replicas) or {}
        present = [r for r in fw.roles if replicas.get(r)]
        if not present:
            raise NotConvertible(f"{kind} has no {' or '.join(fw.roles)} replica")
        first = present[0]
        nodes = sum(int(replicas[r].get("replicas", 1)) for r in present)
        template = self.pod_template(f"spec.{fw.replicas}.{first}", replicas[first], fw.restart)
        for role in present[1:]:
            path = f"spec.{fw.replicas}.{role}"
            if self.pod_template(path, replicas[role], fw.restart) != template:
                self.lose(f"{path}.template", f"differs from the {first}'s: every node runs "
                          f"the {first}'s template")
        for name in replicas:
            if name not in fw.roles:
                self.lose(f"spec.{fw.replicas}.{name}", f"no equivalent ({' and '.join(fw.roles)} "
                          "only)")
        trainer: Obj = {"numNodes": nodes}
        if fw.policy == "torch":
            self._torch_fields(trainer)
        self.unknown_fields((fw.replicas, "runPolicy", *fw.fields))
        trainjob_spec: Obj = {}
        jobset_spec: Obj = {}
        node_job: Obj = {}
        self.run_policy("spec.runPolicy", self.spec.get("runPolicy") or {}, trainjob_spec,
                        jobset_spec, node_job)
        if self._fits_shipped_runtime(template) and not jobset_spec and not node_job:
            container = template["spec"]["containers"][0]
            trainer.update({k: container[k] for k in _TRAINER_FIELDS if k in container})
            if "resources" in container:
                trainer["resourcesPerNode"] = container["resources"]
            return Converted([self.trainjob(fw.runtime, constants.CLUSTER_RUNTIME_KIND,
                                            {"trainer": trainer, **trainjob_spec})],
                             self.losses, (fw.note,))
        name = self.metadata()["name"]
        job_template: Obj = {"metadata": {"labels": {
            constants.LABEL_TRAINJOB_ANCESTOR: constants.ANCESTOR_TRAINER}},
            "spec": {**node_job, "template": template}}
        runtime = self.runtime(self.metadata(), fw.policy, {
            "mlPolicy": {"numNodes": nodes, fw.policy: {}},
            "template": {"spec": {**jobset_spec, "replicatedJobs": [
                {"name": constants.NODE, "template": job_template}]}}})
        return Converted([runtime, self.trainjob(name, constants.RUNTIME_KIND,
                                                 {"trainer": trainer, **trainjob_spec})],
                         self.losses, (fw.note,))

    def _torch_fields(self, trainer: Obj) -> None:
        nproc = self.spec.get("nprocPerNode")
        if nproc is not None:
            if str(nproc).isdigit():
                trainer["numProcPerNode"] = int(nproc)
            else:
                self.lose("spec.nprocPerNode", f"{nproc!r}: numProcPerNode is a number here")
        if self.spec.get("elasticPolicy") is not None:
            self.lose("spec.elasticPolicy", "no equivalent (Trainer v2.3.0 has no elastic "
                      "training)")

    @staticmethod
    def _fits_shipped_runtime(template: Obj) -> bool:
        pod = template.get("spec") or {}
        containers = pod.get("containers") or []
        if template.keys() - {"spec"} or pod.keys() - {"containers", "restartPolicy"}:
            return False
        if pod.get("restartPolicy") != "OnFailure" or len(containers) != 1:
            return False
        return not containers[0].keys() - {"name", "resources", *_TRAINER_FIELDS}

    # -- MPIJob -------------------------------------------------------------------------------

    def mpi(self, *, origin: str | None) -> Converted:
        replicas: Obj = self.spec.get("mpiReplicaSpecs") or {}
        launcher, worker = replicas.get("Launcher"), replicas.get("Worker")
        if not launcher:
            raise NotConvertible("MPIJob has no Launcher replica")
        self._conversion_losses(origin)
        for name in replicas:
            if name not in ("Launcher", "Worker"):
                self.lose(f"spec.mpiReplicaSpecs.{name}", "no equivalent (Launcher and Worker "
                          "only)")
        launcher_as_node = bool(self.spec.get("runLauncherAsWorker"))
        workers = int(worker.get("replicas", 1)) if worker else 0
        if workers < 1:
            self.lose("spec.mpiReplicaSpecs.Worker", "none: Trainer's MPI policy runs at least "
                      "one node")
            workers = 1
        policy: Obj = {"numProcPerNode": int(self.spec.get("slotsPerWorker", 1)),
                       "mpiImplementation": "OpenMPI",
                       "sshAuthMountPath": self.spec.get("sshAuthMountPath", "/root/.ssh"),
                       "runLauncherAsNode": launcher_as_node}
        implementation = self.spec.get("mpiImplementation", "OpenMPI")
        if implementation != "OpenMPI":
            self.lose("spec.mpiImplementation", f"{implementation!r}: Trainer v2.3.0's MPI "
                      "policy has OpenMPI only (OpenMPI is used)")
        self.unknown_fields(("mpiReplicaSpecs", "runPolicy", "slotsPerWorker",
                             "sshAuthMountPath", "runLauncherAsWorker", "mpiImplementation",
                             "launcherCreationPolicy"))
        trainjob_spec: Obj = {}
        jobset_spec: Obj = {"network": {"publishNotReadyAddresses": True},
                            "successPolicy": {"operator": "All",
                                              "targetReplicatedJobs": ["launcher"]}}
        launcher_job: Obj = {}
        self.run_policy("spec.runPolicy", self.spec.get("runPolicy") or {}, trainjob_spec,
                        jobset_spec, launcher_job)
        launcher_rjob: Obj = {"name": "launcher", "template": {
            "metadata": {"labels": {constants.LABEL_TRAINJOB_ANCESTOR: constants.ANCESTOR_TRAINER}},
            "spec": {**launcher_job, "template": self.pod_template(
                "spec.mpiReplicaSpecs.Launcher", launcher, "OnFailure")}}}
        self._discover_hosts(launcher)
        if self.spec.get("launcherCreationPolicy") == "WaitForWorkersReady":
            launcher_rjob["dependsOn"] = [{"name": constants.NODE, "status": "Ready"}]
        node_template = (self.pod_template("spec.mpiReplicaSpecs.Worker", worker, "Never")
                         if worker else copy.deepcopy(launcher_rjob["template"]["spec"]
                                                      ["template"]))
        nodes = workers + 1 if launcher_as_node else workers
        # As in the shipped MPI runtimes, the policy's numNodes (1) counts the launcher's
        # pods (the trainer step's); the TrainJob's numNodes sizes the Job "node".
        runtime = self.runtime(self.metadata(), "mpi", {
            "mlPolicy": {"numNodes": 1, "mpi": policy},
            "template": {"spec": {**jobset_spec, "replicatedJobs": [
                {"name": constants.NODE, "template": {"spec": {
                    "parallelism": workers, "completions": workers,
                    "template": node_template}}},
                launcher_rjob]}}})
        name = self.metadata()["name"]
        return Converted([runtime, self.trainjob(name, constants.RUNTIME_KIND,
                                                 {"trainer": {"numNodes": nodes},
                                                  **trainjob_spec})],
                         self.losses)

    def _discover_hosts(self, launcher: Mapping[str, Any]) -> None:
        """Elastic Horovod's ``discover_hosts.sh``, which mpi-operator writes and Trainer's MPI
        policy does not: a launcher container naming it loses it."""
        containers = ((launcher.get("template") or {}).get("spec") or {}).get("containers") or []
        for i, container in enumerate(containers):
            for key in ("command", "args"):
                if any(DISCOVER_HOSTS in str(word) for word in container.get(key) or []):
                    self.lose(f"spec.mpiReplicaSpecs.Launcher.template.spec.containers[{i}]."
                              f"{key}", f"names {DISCOVER_HOSTS}, which mpi-operator writes "
                              "for elastic Horovod and Trainer's MPI policy does not")

    def _conversion_losses(self, origin: str | None) -> None:
        """What the conversion to ``v2beta1`` kept only in annotations, and the older
        generation's launch mode."""
        annotations = (self.job.get("metadata") or {}).get("annotations") or {}
        for key in sorted(annotations):
            if key.startswith(_CONVERSION_PREFIX):
                self.lose(key[len(_CONVERSION_PREFIX):],
                          f"{annotations[key]}: no equivalent")
        if origin == "kubeflow.org/v1":
            self.lose("apiVersion", "kubeflow.org/v1 launches with kubectl exec; Trainer's MPI "
                      "launcher reaches the nodes over SSH (the workers must run sshd)")
        elif origin == "kubeflow.org/v1alpha2":
            self.lose("apiVersion", "kubeflow.org/v1alpha2 launches with kubectl exec into a "
                      "StatefulSet; Trainer's MPI launcher reaches the nodes over SSH (the "
                      "workers must run sshd)")
