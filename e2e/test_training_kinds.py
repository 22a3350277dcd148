"""The training-operator kinds through the whole system, one module for all of them: the
session controller (a process serving every kind whose CRD is installed), KWOK running the
pods, each test parametrized over the registry (:func:`tests.trainingjobs.training_plugins`),
so that a kind added to ``mpi_controller/kinds.py`` is run here too.

* every example of a kind (``KindPlugin.examples``, upstream's v1.9.2 manifests as written),
  created with ``kubectl create -f`` unchanged, runs to Succeeded: its pods and headless
  Services are exactly what the kind's pure builders make (``mpi-controller render``), and
  for the kinds below as training-operator v1.9.2 writes them (names, labels with
  ``job-role: master`` where upstream puts it, owner references, the environment spelled
  out), with upstream's conditions and events;
* an invalid job beside a valid one: one Warning ``<Kind>FailedValidation`` naming the field
  (upstream's webhook message), nothing created; the valid one succeeds;
* suspend and resume: pods and Services deleted, ``Suspended`` with ``<Kind>Suspended``, then
  recreated with ``<Kind>Resumed``, and the job still succeeds;
* scale: ``kubectl scale`` where the CRD has the scale subresource (PaddleJob, JAXJob), a
  patch of the Worker replicas otherwise (XGBoostJob): pods and Services by index, the new
  pods' environment for the new size, the subresource's status.

TFJob and PyTorchJob are left out here (:data:`DEDICATED`): e2e/test_tfjob.py,
e2e/test_pytorchjob.py and their tests/integration modules cover the same behaviours. KWOK
ends the pods of every kind by itself, as their training programs would exit (0, three seconds
after they run); the suspend and scale tests give theirs
:data:`tests.trainingjobs.LONG_RUN` so that they run through the test's steps.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from mpi_controller.engine.plugin import KindPlugin, RenderOptions
from tests.processes import ControllerProcess
from tests.support import REPO, Cluster, wait_for, wait_pods_succeeded
from tests.tfjobs import kubeflow_namespace
from tests.trainingjobs import (
    LONG_RUN,
    UNKNOWN_FIELDS,
    TrainingJobs,
    default_container,
    delete_all,
    end_pods,
    example,
    example_params,
    kind_params,
    live_names,
    pruned,
    rendered,
    scale_subresource,
    small_job,
    wait_running,
    wait_started,
)

pytestmark = pytest.mark.cluster

DEDICATED = ("TFJob", "PyTorchJob")
"""Kinds whose examples and lifecycle have modules of their own (see the module doc)."""

COLLECTIVE = "{kind} {ns}/{name}"
NAMED = "{kind} {name}"
MESSAGES: dict[str, tuple[str, str]] = {
    # training-operator v1.9.2 UpdateJobStatus: (Running, Succeeded) messages. XGBoostJob's
    # Master decides and names the job alone; PaddleJob (collective: workers only, as the
    # examples) and JAXJob let every worker decide and name it with its namespace.
    "XGBoostJob": (NAMED + " is running.", NAMED + " is successfully completed."),
    "PaddleJob": (COLLECTIVE + " is running.", COLLECTIVE + " successfully completed."),
    "JAXJob": (COLLECTIVE + " is running.", COLLECTIVE + " successfully completed."),
}


def messages(plugin: KindPlugin, ns: str, name: str) -> tuple[str, str]:
    running, succeeded = MESSAGES[plugin.kind]
    return (running.format(kind=plugin.kind, ns=ns, name=name),
            succeeded.format(kind=plugin.kind, ns=ns, name=name))


def master_role(kind: str, rtype: str, index: int) -> bool:
    """Where upstream puts ``training.kubeflow.org/job-role: master`` (``IsMasterRole``):
    XGBoostJob and PaddleJob on their Master pods (a collective PaddleJob has none), JAXJob on
    the pod of index 0 (worker 0, the coordinator)."""
    return index == 0 if kind == "JAXJob" else rtype == "master"


def _var(name: str, value: object) -> dict[str, Any]:
    return {"name": name, "value": str(value)}


def expected_env(kind: str, job: str, rtype: str, index: int, *, workers: int) -> list[Any]:
    """The environment training-operator v1.9.2 gives the container of pod
    ``<job>-<rtype>-<index>`` of the examples (XGBoostJob: a Master and ``workers`` workers on
    port 9991; PaddleJob: ``workers`` collective workers, master port 37777; JAXJob:
    ``workers`` workers, the defaulted coordinator port 6666), spelled out."""
    if kind == "XGBoostJob":  # xgboost/envvars.go SetPodEnv
        world = workers + 1
        env = [_var("MASTER_PORT", 9991), _var("MASTER_ADDR", f"{job}-master-0"),
               _var("WORLD_SIZE", world), _var("RANK", index + (rtype == "worker")),
               _var("PYTHONUNBUFFERED", 1)]
        if world > 1:
            env += [_var("WORKER_PORT", 9991), _var("WORKER_ADDRS", ",".join(
                f"{job}-worker-{i}" for i in range(world - 1)))]
        return env
    if kind == "PaddleJob":  # paddlepaddle/envvar.go setPodEnv, collective mode
        env = [_var("PYTHONUNBUFFERED", 1), _var("PADDLE_JOB_ID", job),
               _var("PADDLE_NNODES", workers)]
        if index == 0:
            return [*env, {"name": "POD_IP_DUMMY", "valueFrom": {"fieldRef": {
                "apiVersion": "v1", "fieldPath": "status.podIP"}}},
                _var("PADDLE_MASTER", "$(POD_IP_DUMMY):37777")]
        return [*env, _var("PADDLE_MASTER", f"{job}-worker-0:37777")]
    assert kind == "JAXJob"  # jax/envvar.go
    return [_var("PYTHONUNBUFFERED", 1), _var("COORDINATOR_PORT", 6666),
            _var("COORDINATOR_ADDRESS", f"{job}-worker-0"), _var("NUM_PROCESSES", workers),
            _var("PROCESS_ID", index)]


SELECTORS = ("PaddleJob", "JAXJob")
"""The kinds whose status gives each replica type its pods' selector (their CRDs' scale
subresource reads the Worker's; upstream's GenLabelSelector override)."""

EXPECTED_PORTS = {"XGBoostJob": ("xgboostjob-port", 9991), "PaddleJob": ("master", 37777),
                  "JAXJob": ("jaxjob-port", 6666)}
"""The one port of every example's container (JAXJob's defaulted: its examples have none)."""


def subset_mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` differs from ``expected``: every key of an expected mapping must be
    there with a matching value (the API server adds defaults beside them), lists match
    element by element and in length, anything else by equality."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: {actual!r} is not a mapping"]
        return [m for k, v in expected.items()
                for m in ([f"{path}.{k}: missing"] if k not in actual
                          else subset_mismatches(v, actual[k], f"{path}.{k}"))]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: {actual!r} != {expected!r}"]
        return [m for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for m in subset_mismatches(e, a, f"{path}[{i}]")]
    if ".resources." in path:  # quantities come back as strings: 2 -> "2"
        expected, actual = str(expected), str(actual)
    return [] if expected == actual else [f"{path}: {actual!r} != {expected!r}"]


def without_token(obj: dict[str, Any]) -> dict[str, Any]:
    """A pod without the ServiceAccount token volume and mounts the API server adds
    (``kube-api-access-*``); anything else as it is."""
    if obj.get("kind", "Pod") != "Pod" or "containers" not in obj.get("spec", {}):
        return obj
    out = copy.deepcopy(obj)
    spec = out["spec"]

    def ours(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [i for i in items if not i["name"].startswith("kube-api-access-")]

    spec["volumes"] = ours(spec.get("volumes") or [])
    for container in spec["containers"]:
        container["volumeMounts"] = ours(container.get("volumeMounts") or [])
    return out


def assert_built_as_rendered(plugin: KindPlugin, job: dict[str, Any],
                             pods: list[dict[str, Any]], services: list[dict[str, Any]]) -> None:
    """The live pods and Services are the ones the kind's pure builders make of the job (the
    API server's defaults aside)."""
    built = rendered(plugin, job)
    assert [p["metadata"]["name"] for p in pods] == [p["metadata"]["name"] for p in built["Pod"]]
    assert [s["metadata"]["name"] for s in services] == [
        s["metadata"]["name"] for s in built["Service"]]
    for want, got in [*zip(built["Pod"], pods, strict=True),
                      *zip(built["Service"], services, strict=True)]:
        assert got["metadata"]["labels"] == want["metadata"]["labels"]
        body = {k: v for k, v in want.items() if k not in ("apiVersion", "kind")}  # list items
        assert subset_mismatches(body, without_token(got)) == [], want["metadata"]["name"]


def replicas_of(plugin: KindPlugin, job: dict[str, Any]) -> dict[str, int]:
    """``{lower replica type: replicas}`` as written (1 when unset)."""
    return {rtype.lower(): spec.get("replicas", 1)
            for rtype, spec in job["spec"][plugin.replica_specs].items()}


def claims(job: dict[str, Any], plugin: KindPlugin) -> set[str]:
    """The PersistentVolumeClaims the job's pod templates mount."""
    return {v["persistentVolumeClaim"]["claimName"]
            for spec in job["spec"][plugin.replica_specs].values()
            for v in spec["template"]["spec"].get("volumes") or []
            if "persistentVolumeClaim" in v}


def bound_claim(kube_api: Any, namespace: str, claim: str) -> Callable[[], None]:
    """The claim ``claim`` the local XGBoost examples mount (upstream's docs have the user
    create it), bound to a hostPath PersistentVolume of its own: the local cluster runs no
    PersistentVolume controller, so both are created already bound (``volumeName``, the
    ``claimRef`` and ``pv.kubernetes.io/bind-completed``, what the scheduler checks). Returns
    what deletes both: nor does it run the protection controllers, so the deletion drops the
    ``kubernetes.io/pvc-protection`` and ``pv-protection`` finalizers the API server adds
    (else the claim, and with it the namespace, would never go)."""
    core = client.CoreV1Api(kube_api)
    volume = f"{namespace}-{claim}"
    core.create_persistent_volume({
        "metadata": {"name": volume},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"],
                 "hostPath": {"path": f"/tmp/{volume}"},
                 "claimRef": {"namespace": namespace, "name": claim}}})
    core.create_namespaced_persistent_volume_claim(namespace, {
        "metadata": {"name": claim, "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                 "resources": {"requests": {"storage": "1Gi"}}, "volumeName": volume}})
    unprotected = {"metadata": {"finalizers": None}}

    def delete() -> None:
        core.patch_namespaced_persistent_volume_claim(claim, namespace, unprotected)
        core.delete_namespaced_persistent_volume_claim(claim, namespace)
        core.patch_persistent_volume(volume, unprotected)
        core.delete_persistent_volume(volume)
        wait_for(lambda: not core.list_persistent_volume(
            field_selector=f"metadata.name={volume}").items, timeout=30,
            what=f"the PersistentVolume {volume} deleted")

    return delete


def events_including(jobs: TrainingJobs, name: str,
                     wanted: set[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The job's events once every one of ``wanted`` is written (asynchronously)."""
    def probe() -> list[tuple[str, str, str]] | None:
        events = jobs.events(name)
        return events if wanted <= set(events) else None

    return wait_for(probe, timeout=30, what=f"the events {sorted(wanted)} of {name}")


@pytest.mark.parametrize(("plugin", "path"), example_params(exclude=DEDICATED))
def test_upstreams_example_runs_to_succeeded(cluster: Cluster, kube_api: Any, namespace: str,
                                             controller: ControllerProcess,
                                             cleanup: list[Callable[[], None]],
                                             plugin: KindPlugin, path: str) -> None:
    """``kubectl create -f <example>``, the manifest unchanged (in its own namespace,
    ``kubeflow``, when it names one, else the test's). One pod and one headless Service per
    replica, as the kind's builders make them and as training-operator v1.9.2 does:
    ``<job>-<type>-<index>``, the controller reference, labels with ``job-role: master`` on
    XGBoostJob's master and JAXJob's worker 0 (none on a collective PaddleJob), the kind's
    environment, the container's port on the Service; ``Created``, then ``Running`` once the
    pods run; when the programs exit 0, ``Succeeded`` (the Master decides an XGBoostJob, every
    worker a PaddleJob or JAXJob) with upstream's reasons and messages, every replica
    counted as succeeded, and the events ``SuccessfulCreatePod``/``SuccessfulCreateService``
    per child, ``ExitedWithCode`` for the deciding pods and ``<Kind>Succeeded``."""
    doc = pruned(path)
    name = doc["metadata"]["name"]
    ns = doc["metadata"].get("namespace") or namespace
    if ns != namespace:
        if ns == "kubeflow":
            kubeflow_namespace(kube_api)
        else:
            cluster.kubectl("create", "namespace", ns, check=False)
        delete_all(kube_api, plugin, ns, name)
        cleanup.append(lambda: delete_all(kube_api, plugin, ns, name))
    for claim in sorted(claims(doc, plugin)):
        cleanup.append(bound_claim(kube_api, ns, claim))
    create = ("create", "-f", str(REPO / path),
              *(() if "namespace" in doc["metadata"] else ("-n", ns)))
    if path in UNKNOWN_FIELDS:  # refused by kubectl's strict validation, as upstream's CRD does
        with pytest.raises(RuntimeError) as refused:
            cluster.kubectl(*create)
        assert f'{plugin.kind} in version "v1" cannot be handled as a {plugin.kind}: strict ' \
               "decoding error: " + ", ".join(
                   f'unknown field "{f}"' for f in UNKNOWN_FIELDS[path]) in str(refused.value)
        create = (*create, "--validate=warn")  # kubectl then warns and the CRD prunes them
    cluster.kubectl(*create)
    jobs = TrainingJobs(kube_api, ns, plugin)
    counts = replicas_of(plugin, doc)
    running = jobs.wait_condition(name, "Running", timeout=60)
    job = jobs.wait_condition(name, "Succeeded", timeout=60)  # KWOK ends the pods

    status, kind = job["status"], plugin.kind
    spelled = kind in MESSAGES  # a kind added later: what every kind shares, and its builders
    running_message, succeeded_message = messages(plugin, ns, name) if spelled else ("", "")

    def conditions(job: dict[str, Any]) -> list[tuple[str, ...]]:
        return [(c["type"], c["status"], c["reason"], c["message"] if spelled else "")
                for c in job["status"]["conditions"]]

    created = ("Created", "True", f"{kind}Created", f"{kind} {name} is created.")
    assert conditions(running) == [created if spelled else (*created[:3], ""),
                                   ("Running", "True", f"{kind}Running", running_message)]
    assert conditions(job) == [created if spelled else (*created[:3], ""),
                               ("Running", "False", f"{kind}Running", running_message),
                               ("Succeeded", "True", f"{kind}Succeeded", succeeded_message)]
    assert status["startTime"] <= status["completionTime"]
    selector = {rtype: (f"group-name=kubeflow.org,job-name={name},"
                        f"training.kubeflow.org/job-name={name},"
                        f"training.kubeflow.org/operator-name={plugin.component},"
                        f"training.kubeflow.org/replica-type={rtype.lower()}")
                for rtype in doc["spec"][plugin.replica_specs]}
    final = {rtype: {"succeeded": counts[rtype.lower()],
                     **({"selector": selector[rtype]} if kind in SELECTORS else {})}
             for rtype in doc["spec"][plugin.replica_specs]}

    def replica_statuses() -> dict[str, Any]:
        got: dict[str, Any] = jobs.get(name)["status"]["replicaStatuses"]
        return got if spelled else {t: {"succeeded": s.get("succeeded")} for t, s in got.items()}

    if not spelled:
        final = {t: {"succeeded": s["succeeded"]} for t, s in final.items()}
    wait_for(lambda: replica_statuses() == final, timeout=30,
             what=f"the replica statuses {final}")

    names = [f"{name}-{rtype}-{i}" for rtype, n in sorted(counts.items()) for i in range(n)]
    pods = wait_pods_succeeded(lambda: jobs.pods(name), f"{name} (KWOK)")
    services = jobs.services(name)
    assert [p["metadata"]["name"] for p in pods] == names
    assert [s["metadata"]["name"] for s in services] == names
    assert_built_as_rendered(plugin, job, pods, services)
    uid = job["metadata"]["uid"]
    for pod, service in zip(pods, services, strict=True):
        rtype, index = pod["metadata"]["name"].rsplit("-", 2)[1:]
        labels = {"group-name": "kubeflow.org", "job-name": name,
                  "training.kubeflow.org/job-name": name,
                  "training.kubeflow.org/operator-name": plugin.component,
                  "training.kubeflow.org/replica-index": index,
                  "training.kubeflow.org/replica-type": rtype}
        role = {"training.kubeflow.org/job-role": "master"} if spelled and master_role(
            kind, rtype, int(index)) else {}
        assert {k: v for k, v in pod["metadata"]["labels"].items()
                if spelled or not k.endswith("/job-role")} == {**labels, **role}
        assert "annotations" not in pod["metadata"]  # neither the manifest nor the builders
        owner = [{"apiVersion": "kubeflow.org/v1", "kind": plugin.kind, "name": name,
                  "uid": uid, "controller": True, "blockOwnerDeletion": True}]
        assert pod["metadata"]["ownerReferences"] == owner
        assert service["metadata"]["ownerReferences"] == owner
        container, = pod["spec"]["containers"]
        template, = (spec for t, spec in doc["spec"][plugin.replica_specs].items()
                     if t.lower() == rtype)
        written, = template["template"]["spec"]["containers"]
        assert (container["name"], container["image"]) == (written["name"], written["image"])
        restart = template.get("restartPolicy")
        if restart:
            assert pod["spec"]["restartPolicy"] == ("Never" if restart == "ExitCode"
                                                    else restart)
        assert pod["status"]["phase"] == "Succeeded"
        assert service["metadata"]["labels"] == labels
        assert service["spec"]["selector"] == labels
        assert service["spec"]["clusterIP"] == "None"
        if not spelled:
            continue
        assert container["env"] == expected_env(kind, name, rtype, int(index),
                                                workers=counts["worker"])
        port_name, port = EXPECTED_PORTS[kind]
        assert container["ports"] == [{"containerPort": port, "name": port_name,
                                       "protocol": "TCP"}]
        assert service["spec"]["ports"] == [
            {"name": port_name, "port": port, "protocol": "TCP", "targetPort": port}]

    deciding = ([f"{name}-master-0"] if kind == "XGBoostJob" else names) if spelled else []
    wanted = {("Normal", f"{kind}Succeeded", succeeded_message)} if spelled else set()
    wanted |= {("Normal", "ExitedWithCode", f"Pod: {ns}.{pod} exited with code 0")
               for pod in deciding}
    for child in names:
        wanted |= {("Normal", "SuccessfulCreatePod", f"Created pod: {child}"),
                   ("Normal", "SuccessfulCreateService", f"Created service: {child}")}
    events = events_including(jobs, name, wanted)
    assert {(t, r) for t, r, _ in events} <= {
        ("Normal", "SuccessfulCreatePod"), ("Normal", "SuccessfulCreateService"),
        ("Normal", "ExitedWithCode"), ("Normal", f"{plugin.kind}Succeeded")}, events
    assert set(jobs.event_counts(name).values()) == {1}, jobs.event_counts(name)  # each once
    table = cluster.kubectl("-n", ns, "get", plugin.plural, name)
    assert [row.split()[:2] for row in table.strip().splitlines()] == [
        ["NAME", "STATE"], [name, "Succeeded"]]
    selected = cluster.kubectl("-n", ns, "get", "pods", "-l", f"job-name={name}", "-o", "name")
    assert selected.split() == [f"pod/{n}" for n in names]


def _rename_containers(job: dict[str, Any], plugin: KindPlugin, to: str) -> None:
    for spec in job["spec"][plugin.replica_specs].values():
        for container in spec["template"]["spec"]["containers"]:
            container["name"] = to


VALIDATION = {
    # training-operator v1.9.2's webhooks (validateReplicaSpecs of each kind): the default
    # container must be there; several errors are reported as Go's aggregate, "[a, b]".
    "XGBoostJob": "[spec.xgbReplicaSpecs[Master].template.spec.containers: Required value: "
                  "must have at least one container with name xgboost, "
                  "spec.xgbReplicaSpecs[Worker].template.spec.containers: Required value: "
                  "must have at least one container with name xgboost]",
    "PaddleJob": "spec.paddleReplicaSpecs[Worker].template.spec.containers: Required value: "
                 "must have at least one container with name \"paddle\"",
    "JAXJob": "spec.jaxReplicaSpecs[Worker].template.spec.containers: Required value: "
              "must have at least one container with name jax",
}


def validation_errors(plugin: KindPlugin, job: dict[str, Any]) -> str:
    """The errors of ``job`` as upstream's webhook words them: :data:`VALIDATION` for the
    kinds spelled out there, else what the kind's own checks say of the defaulted job."""
    if plugin.kind in VALIDATION:
        return VALIDATION[plugin.kind]
    assert plugin.renderer is not None
    options = RenderOptions(namespace="default")
    errors = [str(e) for e in plugin.renderer.check(plugin.renderer.prepare(job, options),
                                                    options)[0]]
    return errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"


@pytest.mark.parametrize("plugin", kind_params(exclude=DEDICATED))
def test_an_invalid_job_beside_a_valid_one(kube_api: Any, namespace: str,
                                           controller: ControllerProcess,
                                           plugin: KindPlugin) -> None:
    """A job without the kind's default container (``xgboost``, ``paddle``, ``jax``) gets one
    Warning ``<Kind>FailedValidation`` naming the fields, with the message of upstream's
    validating webhook, and nothing else: no status, no pod, no Service. The valid job beside
    it succeeds; the controller stays up."""
    jobs = TrainingJobs(kube_api, namespace, plugin)
    bad = small_job(plugin, "bad")
    _rename_containers(bad, plugin, "trainer")
    jobs.create(bad)
    jobs.create(small_job(plugin, "good"))
    jobs.wait_condition("good", "Succeeded", timeout=90)
    message = f"{plugin.kind} failed validation because {validation_errors(plugin, bad)}"
    wait_for(lambda: jobs.events("bad") == [
        ("Warning", f"{plugin.kind}FailedValidation", message)], timeout=30,
        what=f"the validation event of {plugin.kind} bad")
    assert "status" not in jobs.get("bad")
    assert jobs.pods("bad") == []
    assert jobs.services("bad") == []
    assert controller.alive()
    assert default_container(plugin) in message


@pytest.mark.parametrize("plugin", kind_params(exclude=DEDICATED))
def test_suspend_then_resume(kube_api: Any, namespace: str, controller: ControllerProcess,
                             plugin: KindPlugin) -> None:
    """``runPolicy.suspend: true`` on a running job: its pods and Services are deleted,
    ``Running=False`` and ``Suspended=True`` (reason ``<Kind>Suspended``, one event); back to
    false: the pods and Services come again, ``Suspended=False`` (``<Kind>Resumed``, an
    event), a new ``startTime``, ``Running``; the resumed job then succeeds (training-operator
    v1.9.2's common ReconcileJobs)."""
    jobs = TrainingJobs(kube_api, namespace, plugin)
    job = small_job(plugin, "sus", annotations=LONG_RUN)  # running until suspended
    total = sum(replicas_of(plugin, job).values())
    jobs.create(job)
    started = jobs.wait_condition("sus", "Running", timeout=60)["status"]["startTime"]
    children = wait_running(jobs, "sus", total)
    time.sleep(1.1)  # startTime has one-second precision: the resume must show a new one
    jobs.patch("sus", {"spec": {"runPolicy": {"suspend": True}}})
    jobs.wait_condition("sus", "Suspended", timeout=60)
    wait_for(lambda: not jobs.pods("sus") and not jobs.services("sus"), timeout=60,
             what="the pods and Services deleted")
    kind = plugin.kind
    assert jobs.conditions("sus") == [("Created", "True", f"{kind}Created"),
                                      ("Running", "False", f"{kind}Suspended"),
                                      ("Suspended", "True", f"{kind}Suspended")]
    assert all(entry.get("active", 0) == 0
               for entry in jobs.get("sus")["status"]["replicaStatuses"].values())
    jobs.patch("sus", {"spec": {"runPolicy": {"suspend": False}}})
    jobs.wait_condition("sus", "Running", timeout=60)
    assert jobs.conditions("sus") == [("Created", "True", f"{kind}Created"),
                                      ("Suspended", "False", f"{kind}Resumed"),
                                      ("Running", "True", f"{kind}Running")]
    assert sorted(wait_started(jobs, "sus", total)) == children
    assert live_names(jobs.services("sus")) == children
    status = jobs.get("sus")["status"]
    assert status["startTime"] > started
    assert sorted(end_pods(jobs, "sus", total)) == children
    job = jobs.wait_condition("sus", "Succeeded", timeout=60)
    # upstream's setCondition moves a condition whose status changes to the end
    assert [(c["type"], c["status"], c["reason"]) for c in job["status"]["conditions"]] == [
        ("Created", "True", f"{kind}Created"), ("Suspended", "False", f"{kind}Resumed"),
        ("Running", "False", f"{kind}Running"), ("Succeeded", "True", f"{kind}Succeeded")]
    wanted = {("Normal", f"{kind}Suspended", f"{kind} sus is suspended."): 1,
              ("Normal", f"{kind}Resumed", f"{kind} sus is resumed."): 1}
    for child in children:  # created, deleted on suspend, created again (one Event, count 2)
        wanted |= {("Normal", "SuccessfulCreatePod", f"Created pod: {child}"): 2,
                   ("Normal", "SuccessfulCreateService", f"Created service: {child}"): 2,
                   ("Normal", "SuccessfulDeletePod", f"Deleted pod: {child}"): 1,
                   ("Normal", "SuccessfulDeleteService", f"Deleted service: {child}"): 1}
    wait_for(lambda: {k: v for k, v in jobs.event_counts("sus").items() if k in wanted}
             == wanted, timeout=30, what=f"the events {wanted}")


def _scale(cluster: Cluster, plugin: KindPlugin, ns: str, name: str, workers: int) -> None:
    if scale_subresource(plugin):
        cluster.kubectl("-n", ns, "scale", f"{plugin.plural}/{name}", f"--replicas={workers}")
    else:
        cluster.kubectl("-n", ns, "patch", plugin.plural, name, "--type", "merge", "-p",
                        f'{{"spec":{{"{plugin.replica_specs}":{{"Worker":'
                        f'{{"replicas":{workers}}}}}}}}}')


@pytest.mark.parametrize("plugin", kind_params(exclude=DEDICATED))
def test_scale_workers_up_and_down(cluster: Cluster, kube_api: Any, namespace: str,
                                   controller: ControllerProcess, plugin: KindPlugin) -> None:
    """The Worker replicas of a running job 2 -> 3 -> 1: with ``kubectl scale`` where the CRD
    has the scale subresource (PaddleJob, JAXJob: ``.spec.<specs>.Worker.replicas``, status
    from ``replicaStatuses.Worker``), else with a patch (XGBoostJob). Pods and Services are
    created and deleted by index (upstream's ReconcilePods: indices beyond the replicas
    go); a new pod's environment is the one for the new size (what the builders make of the
    scaled job); the job then still succeeds."""
    jobs = TrainingJobs(kube_api, namespace, plugin)
    job = small_job(plugin, "sc", replicas=2, annotations=LONG_RUN)  # running while scaled
    others = [f"sc-{rtype}-0" for rtype in replicas_of(plugin, job) if rtype != "worker"]
    jobs.create(job)
    jobs.wait_condition("sc", "Running", timeout=60)
    subresource = scale_subresource(plugin)
    selector = (f"group-name=kubeflow.org,job-name=sc,training.kubeflow.org/job-name=sc,"
                f"training.kubeflow.org/operator-name={plugin.component},"
                "training.kubeflow.org/replica-type=worker")
    for workers in (3, 1):
        _scale(cluster, plugin, namespace, "sc", workers)
        assert jobs.specs("sc")["Worker"]["replicas"] == workers
        wanted = sorted(others + [f"sc-worker-{i}" for i in range(workers)])
        wait_for(lambda wanted=wanted: live_names(jobs.pods("sc")) == wanted
                 and live_names(jobs.services("sc")) == wanted, timeout=60,
                 what=f"the pods and Services {wanted}")
        if subresource:
            scale = wait_for(lambda workers=workers: (s := jobs.scale("sc"))["status"].get(
                "replicas") == workers and s, timeout=30, what=f"{workers} active workers")
            assert (scale["spec"]["replicas"], scale["status"]["selector"]) == (
                workers, selector)
        if workers == 3:
            built = rendered(plugin, jobs.get("sc"))
            new = next(p for p in jobs.pods("sc") if p["metadata"]["name"] == "sc-worker-2")
            want = next(p for p in built["Pod"] if p["metadata"]["name"] == "sc-worker-2")
            assert new["spec"]["containers"][0]["env"] == want["spec"]["containers"][0]["env"]
    events = events_including(jobs, "sc", {
        ("Normal", "SuccessfulCreatePod", "Created pod: sc-worker-2"),
        ("Normal", "SuccessfulCreateService", "Created service: sc-worker-2"),
        ("Normal", "SuccessfulDeletePod", "Deleted pod: sc-worker-1"),
        ("Normal", "SuccessfulDeletePod", "Deleted pod: sc-worker-2"),
        ("Normal", "SuccessfulDeleteService", "Deleted service: sc-worker-1"),
        ("Normal", "SuccessfulDeleteService", "Deleted service: sc-worker-2")})
    assert {c[0] for c in jobs.conditions("sc")} <= {"Created", "Running", "Restarting"}, events
    assert sorted(end_pods(jobs, "sc", len(others) + 1)) == sorted([*others, "sc-worker-0"])
    jobs.wait_condition("sc", "Succeeded", timeout=60)


def test_every_example_is_listed_by_its_kind() -> None:
    """Each kind's ``KindPlugin.examples`` are the repository's manifests of that kind, every
    one of them (so the tests above run them all)."""
    from tests.trainingjobs import training_plugins
    for plugin in training_plugins():
        folder = {Path(p).parent for p in plugin.examples}
        for directory in folder - {Path("examples")}:
            on_disk = sorted(str(p.relative_to(REPO)) for p in (REPO / directory).glob("*.yaml"))
            assert sorted(p for p in plugin.examples if Path(p).parent == directory) == on_disk
        for path in plugin.examples:
            assert example(path)["kind"] == plugin.kind
