"""The validating webhooks of TrainJob, TrainingRuntime and ClusterTrainingRuntime, as Trainer
v2.3.0's ``pkg/webhooks`` (``trainjob_webhook.go``, ``trainingruntime_webhook.go``,
``clustertrainingruntime_webhook.go``) and the plugins' ``Validate``
(``pkg/runtime/framework/plugins/{jobset,torch,mpi,xgboost,volcano,flux}``) answer; the
TrainJob's reads its runtime, JobSet and PriorityClasses from the in-memory API, and is served
over HTTP by the webhook server."""

from __future__ import annotations

import copy
from typing import Any

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.testing import FakeApi
from mpi_controller.trainjob.kind import CLUSTER_RUNTIMES, JOBSETS, RUNTIMES
from mpi_controller.trainjob.plugin import ADMISSIONS, PRIORITY_CLASSES, judge_trainjob
from mpi_controller.trainjob.validation import (
    judge_cluster_training_runtime,
    judge_training_runtime,
)
from mpi_controller.webhook.registry import default_registry
from mpi_controller.webhook.server import webhook_routes
from tests.unit.runtime.test_https import session

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
URL = "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html" \
      "#runtime-deprecation-policy"


def rjob(name: str, step: str | None, *containers: dict[str, Any], replicas: int = 1,
         **pod: Any) -> dict[str, Any]:
    meta = {"labels": {ANCESTOR: step}} if step else {}
    return {"name": name, "replicas": replicas, "template": {"metadata": meta, "spec": {
        "template": {"spec": {"containers": list(containers), **pod}}}}}


def runtime(kind: str, name: str, *rjobs: dict[str, Any], labels: dict[str, str] | None = None,
            **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **({"labels": labels} if labels else {})}
    if kind == "TrainingRuntime":
        meta["namespace"] = "ns"
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": meta,
            "spec": {"template": {"spec": {"replicatedJobs": list(rjobs)}}, **spec}}


NODE = {"name": "node", "image": "pytorch"}
INIT_MOUNT = {"name": "initializer", "mountPath": "/workspace"}
TORCH = runtime("ClusterTrainingRuntime", "torch-distributed",
                rjob("dataset-initializer", "dataset-initializer",
                     {"name": "dataset-initializer", "image": "d", "volumeMounts": [INIT_MOUNT]}),
                rjob("node", "trainer", NODE),
                mlPolicy={"numNodes": 1, "torch": {}})


def trainjob(ref: str = "torch-distributed", kind: str = "ClusterTrainingRuntime",
             **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "pi", "namespace": "ns"},
            "spec": {"runtimeRef": {"name": ref, "apiGroup": "trainer.kubeflow.org",
                                    "kind": kind}, "suspend": False, **spec}}


def api(*objects: tuple[Resource, dict[str, Any]]) -> FakeApi:
    fake = FakeApi()
    for resource in (RUNTIMES, CLUSTER_RUNTIMES, JOBSETS):
        fake.register(resource)
    fake.add(CLUSTER_RUNTIMES, TORCH)
    for resource, obj in objects:
        fake.add(resource, obj)
    return fake


async def judge(fake: FakeApi, job: dict[str, Any], old: dict[str, Any] | None = None
                ) -> tuple[list[str], list[str]]:
    async def lookup(resource: Resource, name: str, namespace: str | None) -> Obj:
        return await fake.get(resource, name, namespace=namespace)
    errors, warnings = await judge_trainjob(lookup, job, old)
    return list(errors), list(warnings)


# -- the runtimes ---------------------------------------------------------------------------

def test_a_step_of_a_runtime_needs_one_replica_and_its_container() -> None:
    """``validateReplicatedJobs``: replicas of a labelled step must be 1 and the step's
    container (node for trainer) must be there; an unlabelled Job is not checked."""
    bad = runtime("TrainingRuntime", "r",
                  rjob("model-initializer", "model-initializer", {"name": "x", "image": "i"},
                       replicas=2),
                  rjob("other", None, {"name": "x", "image": "i"}, replicas=3))
    assert judge_training_runtime(bad, None) == ([
        "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1",
        'spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid '
        'value: [{"name":"x","image":"i","resources":{}}]: must contain the required '
        "container for the ancestor: model-initializer",
    ], [])
    assert judge_training_runtime(bad, bad) == ([], []), "a TrainingRuntime update is admitted"
    assert judge_training_runtime(TORCH, None) == ([], [])


def test_a_cluster_runtime_is_checked_on_update_and_warned_about_when_deprecated() -> None:
    deprecated = runtime("ClusterTrainingRuntime", "old", rjob("node", "trainer", NODE,
                                                               replicas=2),
                         labels={"trainer.kubeflow.org/support": "deprecated"})
    error = "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1"
    assert judge_cluster_training_runtime(deprecated, None) == ([error], [
        'ClusterTrainingRuntime "old" is deprecated and will be removed in a future release of '
        f"Kubeflow Trainer. See runtime deprecation policy: {URL}"])
    assert judge_cluster_training_runtime(deprecated, deprecated) == ([error], [])


# -- the TrainJob ---------------------------------------------------------------------------

async def test_an_unsupported_runtime_and_a_missing_one() -> None:
    fake = api()
    assert await judge(fake, trainjob(kind="Other")) == (
        ["unsupported runtime: Other.trainer.kubeflow.org"], [])
    assert await judge(fake, trainjob("nope")) == ([
        'spec.RuntimeRef: Invalid value: {"name":"nope","apiGroup":"trainer.kubeflow.org",'
        '"kind":"ClusterTrainingRuntime"}: clustertrainingruntimes.trainer.kubeflow.org "nope" '
        "not found: specified clusterTrainingRuntime must be created before the TrainJob is "
        "created"], [])
    assert await judge(fake, trainjob("nope", "TrainingRuntime")) == ([
        'spec.runtimeRef: Invalid value: {"name":"nope","apiGroup":"trainer.kubeflow.org",'
        '"kind":"TrainingRuntime"}: trainingruntimes.trainer.kubeflow.org "nope" not found: '
        "specified trainingRuntime must be created before the TrainJob is created"], [])
    assert await judge(fake, trainjob()) == ([], [])


async def test_a_deprecated_cluster_runtime_is_a_warning() -> None:
    old = copy.deepcopy(TORCH)
    old["metadata"] = {"name": "old", "labels": {"trainer.kubeflow.org/support": "deprecated"}}
    assert await judge(api((CLUSTER_RUNTIMES, old)), trainjob("old")) == ([], [
        'Referenced ClusterTrainingRuntime "old" is deprecated and will be removed in a future '
        f"release of Kubeflow Trainer. See runtime deprecation policy: {URL}"])


async def test_initializers_need_their_job_container_and_volume_mount() -> None:
    no_mount = runtime("TrainingRuntime", "r",
                       rjob("dataset-initializer", "dataset-initializer",
                            {"name": "dataset-initializer", "image": "d"}),
                       rjob("node", "trainer", NODE), mlPolicy={"torch": {}})
    job = trainjob("r", "TrainingRuntime", initializer={"dataset": {}, "model": {}})
    ref = ('{"name":"r","apiGroup":"trainer.kubeflow.org","kind":"TrainingRuntime"}')
    assert await judge(api((RUNTIMES, no_mount)), job) == ([
        f"spec.runtimeRef: Invalid value: {ref}: must have volumeMount with name - initializer "
        "in container dataset-initializer of the dataset-initializer job",
        f"spec.runtimeRef: Invalid value: {ref}: must have model-initializer job when trainJob "
        "is configured with input modelConfig"], [])


async def test_reserved_envs_of_torch_mpi_and_xgboost() -> None:
    env = [{"name": "PET_NNODES", "value": "2"}, {"name": "PET_MASTER_PORT", "value": "1"}]
    assert await judge(api(), trainjob(trainer={"env": env})) == ([
        'spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"2"},{"name":'
        '"PET_MASTER_PORT","value":"1"}]: must not have reserved envs, invalid envs '
        "configured: [PET_MASTER_PORT PET_NNODES]"], [])
    mpi = runtime("TrainingRuntime", "mpi", rjob("launcher", "trainer", NODE),
                  mlPolicy={"mpi": {"runLauncherAsNode": True}})
    job = trainjob("mpi", "TrainingRuntime",
                   trainer={"numNodes": 2, "env": [{"name": "OMPI_MCA_plm_rsh_args",
                                                    "value": "x"}]})
    assert await judge(api((RUNTIMES, mpi)), job) == ([
        "spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI trainingRuntime with "
        "enabled runLauncherAsNode does not have either launcher and node",
        'spec.trainer.env: Invalid value: [{"name":"OMPI_MCA_plm_rsh_args","value":"x"}]: must '
        "not have reserved envs, invalid envs configured: [OMPI_MCA_plm_rsh_args]"], [])
    xgb = runtime("TrainingRuntime", "xgb", rjob("node", "trainer", NODE),
                  mlPolicy={"xgboost": {}})
    job = trainjob("xgb", "TrainingRuntime",
                   trainer={"env": [{"name": "A"}, {"name": "DMLC_TASK_ID"}]})
    assert await judge(api((RUNTIMES, xgb)), job) == ([
        "spec.trainer.env[1]: Forbidden: DMLC_TASK_ID is reserved for the XGBoost runtime"], [])


async def test_an_env_injection_target_must_exist() -> None:
    torch = copy.deepcopy(TORCH)
    torch["metadata"]["name"] = "t"
    torch["spec"]["mlPolicy"]["torch"] = {"envInjection": {"targets": [
        {"jobName": "node", "containerNames": ["sidecar"]}]}}
    assert await judge(api((CLUSTER_RUNTIMES, torch)), trainjob("t")) == ([
        'spec.runtimeRef: Invalid value: {"jobName":"node","containerNames":["sidecar"]}: '
        'envInjection target podSet "node" container "sidecar" not found in runtime template'],
        [])


def patch(manager: str, **pod: Any) -> dict[str, Any]:
    return {"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
            "spec": pod}}}}]}}}}


async def test_runtime_patches_manager_and_envs() -> None:
    """The manager must be a domain-prefixed path; a patch must not give env to the node
    container. A container the runtime lacks is merged in by the patch first (upstream checks
    the patched template), so it is admitted."""
    job = trainjob(runtimePatches=[
        patch("Kueue", containers=[{"name": "node", "env": [{"name": "A", "value": "1"}]}]),
        patch("example.com/x", containers=[{"name": "sidecar"}])])
    errors, _ = await judge(api(), job)
    assert errors == [
        'spec.runtimePatches.manager: Invalid value: "Kueue": must be a domain-prefixed path '
        '(such as "acme.io/foo")',
        'spec.runtimePatches: Invalid value: [{"manager":"Kueue","trainingRuntimeSpec":'
        '{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":'
        '{"spec":{"containers":[{"name":"node","env":[{"name":"A","value":"1"}]}]}}}}}]}}}},'
        '{"manager":"example.com/x","trainingRuntimeSpec":{"template":{"spec":{"replicatedJobs":'
        '[{"name":"node","template":{"spec":{"template":{"spec":{"containers":[{"name":'
        '"sidecar"}]}}}}}]}}}}]: must not have envs for the dataset-initializer, '
        "model-initializer, node containers"]


async def test_runtime_patches_change_only_while_suspended_and_inactive() -> None:
    old = trainjob(runtimePatches=[patch("kueue.x-k8s.io/manager", nodeSelector={"a": "1"})])
    new = trainjob(runtimePatches=[patch("kueue.x-k8s.io/manager", nodeSelector={"a": "2"})])
    assert await judge(api(), new, old) == ([
        "spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the TrainJob "
        "is suspended before or after the update"], [])
    new["spec"]["suspend"] = True
    assert await judge(api(), new, old) == ([], []), "no JobSet yet"
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": "pi", "namespace": "ns"}, "spec": {},
              "status": {"replicatedJobsStatus": [{"name": "node", "active": 1},
                                                  {"name": "dataset-initializer",
                                                   "active": 0}]}}
    assert await judge(api((JOBSETS, jobset)), new, old) == ([
        "spec.runtimePatches: Forbidden: RuntimePatches cannot be modified when the JobSet's "
        "ReplicatedJob node is still active"], [])
    assert await judge(api((JOBSETS, jobset)), old, old) == ([], []), "unchanged patches"


async def test_volcano_queue_and_priority_class() -> None:
    volcano = runtime("TrainingRuntime", "v", rjob("node", "trainer", NODE,
                                                   priorityClassName="high"),
                      mlPolicy={"torch": {}}, podGroupPolicy={"volcano": {}})
    volcano["spec"]["template"]["metadata"] = {
        "annotations": {"scheduling.volcano.sh/queue-name": ""}}
    job = trainjob("v", "TrainingRuntime")
    assert await judge(api((RUNTIMES, volcano)), job) == ([
        'spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "": Volcano queue '
        "name must not be empty",
        'spec.templateSpec.priorityClassName: Invalid value: "high": PriorityClass "high" '
        'doesn\'t exist: priorityclasses.scheduling.k8s.io "high" not found'], [])
    volcano["spec"]["template"]["metadata"] = {}
    assert await judge(api((RUNTIMES, volcano), (PRIORITY_CLASSES, {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 10})), job) == ([], [])


async def test_flux_procs_and_its_reserved_init_container() -> None:
    flux = runtime("TrainingRuntime", "f", rjob("node", "trainer", NODE,
                                                initContainers=[{"name": "flux-installer"}]),
                   mlPolicy={"flux": {"numProcPerNode": 1}})
    job = trainjob("f", "TrainingRuntime", trainer={"numProcPerNode": 0})
    assert await judge(api((RUNTIMES, flux)), job) == ([
        "spec.trainer.numProcPerNode: Invalid value: 0: must be greater than or equal to 1 for "
        "Flux TrainJob",
        'spec.trainer.initContainers: Invalid value: "flux-installer": InitContainer '
        "'flux-installer' is reserved"], [])


# -- served ---------------------------------------------------------------------------------

def test_the_three_webhooks_are_upstreams() -> None:
    """Names and paths of Trainer's ``manifests/base/webhook/manifests.yaml``."""
    hooks = {w.name: (w.path, w.resource, w.scope) for w in default_registry().validating
             if w.group == "trainer.kubeflow.org"}
    assert hooks == {
        "validator.clustertrainingruntime.trainer.kubeflow.org": (
            "/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime",
            "clustertrainingruntimes", "Cluster"),
        "validator.trainingruntime.trainer.kubeflow.org": (
            "/validate-trainer-kubeflow-org-v1alpha1-trainingruntime", "trainingruntimes",
            "Namespaced"),
        "validator.trainjob.trainer.kubeflow.org": (
            "/validate-trainer-kubeflow-org-v1alpha1-trainjob", "trainjobs", "Namespaced"),
    }
    assert [a.name for a in ADMISSIONS][2] == "validator.trainjob.trainer.kubeflow.org"


async def test_the_server_answers_a_trainjob_review_through_its_lookup() -> None:
    fake = api()

    async def lookup(resource: Resource, name: str, namespace: str | None) -> Obj:
        return await fake.get(resource, name, namespace=namespace)

    async with session(webhook_routes(default_registry(), lookup)) as http:
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u1", "operation": "CREATE", "object": trainjob("missing"),
            "kind": {"group": "trainer.kubeflow.org", "version": "v1alpha1",
                     "kind": "TrainJob"}}}
        resp = await http.post("/validate-trainer-kubeflow-org-v1alpha1-trainjob", json=review)
        body = await resp.json()
        assert body["response"]["allowed"] is False
        assert body["response"]["status"]["code"] == 403
        assert body["response"]["status"]["message"].startswith(
            'spec.RuntimeRef: Invalid value: {"name":"missing"')
        review["request"]["object"] = trainjob()
        resp = await http.post("/validate-trainer-kubeflow-org-v1alpha1-trainjob", json=review)
        assert (await resp.json())["response"] == {"uid": "u1", "allowed": True}
