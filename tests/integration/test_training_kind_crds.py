"""Every training kind's CRD (``deploy/crd/kubeflow.org_<plural>.yaml``) on a real API server,
one module parametrized over the registry (:func:`tests.trainingjobs.training_plugins`: TFJob,
PyTorchJob, XGBoostJob, PaddleJob, JAXJob and any kind added later), as training-operator
v1.9.2's CRDs behave:

* every example of the kind (``KindPlugin.examples``) is accepted as written and stored as
  written, but for the fields no pod template has, which the schema prunes
  (:data:`tests.trainingjobs.UNKNOWN_FIELDS`; kubectl's strict validation refuses those), and
  the schema's defaults: a container port's ``protocol: TCP``, ``runPolicy.suspend: false``
  where a runPolicy is given;
* the replica specs are required, ``replicas`` is an integer, the scheduling queue is
  immutable (the CEL rule of the shared RunPolicy);
* ``kubeflow.org/v1`` only, the status subresource, the printer columns State and Age
  (``kubectl get`` shows them), and the scale subresource exactly where upstream has one
  (PyTorchJob, PaddleJob, JAXJob: the Worker replicas; ``kubectl scale`` writes them).

No controller runs here: the CRDs alone decide.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from mpi_controller.engine.plugin import KindPlugin
from tests.support import REPO, Cluster
from tests.tfjobs import dry_run_create, rejection
from tests.trainingjobs import (
    UNKNOWN_FIELDS,
    TrainingJobs,
    example,
    example_params,
    kind_params,
    pruned,
    scale_subresource,
    small_job,
)

pytestmark = pytest.mark.cluster

WORKER_SCALE = {"specReplicasPath": ".spec.{specs}.Worker.replicas",
                "statusReplicasPath": ".status.replicaStatuses.Worker.active",
                "labelSelectorPath": ".status.replicaStatuses.Worker.selector"}
UPSTREAM_SCALE = {"TFJob": False, "PyTorchJob": True, "XGBoostJob": False, "PaddleJob": True,
                  "JAXJob": True}
"""Which of training-operator v1.9.2's CRDs have the scale subresource (on the Worker)."""


@pytest.mark.parametrize(("plugin", "path"), example_params())
def test_accepts_every_example_as_written(cluster: Cluster, kube_api: Any, namespace: str,
                                          job_crds: dict[str, str], plugin: KindPlugin,
                                          path: str) -> None:
    """The example, in the test's namespace, is accepted and its spec stored as written (its
    pruned fields aside); with an empty ``runPolicy`` the CRD's default ``suspend: false``
    fills it. ``kubectl create --dry-run=server`` (strict field validation) accepts it too,
    or names the fields no pod template has."""
    doc = example(path)
    doc["metadata"]["namespace"] = namespace
    stored = pruned(path)
    for spec in stored["spec"][plugin.replica_specs].values():  # the schema's default, as
        for container in spec["template"]["spec"]["containers"]:  # controller-gen writes it
            for port in container.get("ports") or []:  # from ContainerPort's +default="TCP"
                port.setdefault("protocol", "TCP")
    created = dry_run_create(kube_api, namespace, plugin.plural, doc)
    assert created["spec"] == stored["spec"]
    assert (created["apiVersion"], created["kind"]) == ("kubeflow.org/v1", plugin.kind)
    doc["spec"]["runPolicy"] = {}
    assert dry_run_create(kube_api, namespace, plugin.plural, doc)["spec"]["runPolicy"] == {
        "suspend": False}
    written = example(path)["metadata"].get("namespace")
    if written:
        cluster.kubectl("create", "namespace", written, check=False)
    command = ("create", "--dry-run=server", "-n", written or namespace, "-f", str(REPO / path),
               "-o", "name")
    if path in UNKNOWN_FIELDS:
        with pytest.raises(RuntimeError) as refused:
            cluster.kubectl(*command)
        assert "strict decoding error: " + ", ".join(
            f'unknown field "{f}"' for f in UNKNOWN_FIELDS[path]) in str(refused.value)
    else:
        name = doc["metadata"]["name"]
        assert cluster.kubectl(*command).split() == [f"{plugin.scheme}.kubeflow.org/{name}"]


@pytest.mark.parametrize("plugin", kind_params())
def test_schema_checks(kube_api: Any, namespace: str, job_crds: dict[str, str],
                       plugin: KindPlugin) -> None:
    """The replica specs are required, ``replicas`` must be an integer, and
    ``runPolicy.schedulingPolicy.queue`` cannot change (upstream's CEL rule)."""
    kind, specs = plugin.kind, plugin.replica_specs
    empty = {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "e"},
             "spec": {}}
    assert f"spec.{specs}: Required value" in rejection(kube_api, namespace, plugin.plural,
                                                         empty)
    bad = small_job(plugin, "b")
    rtype = next(iter(bad["spec"][specs]))
    bad["spec"][specs][rtype]["replicas"] = "two"
    assert (f"spec.{specs}.{rtype}.replicas in body must be of type integer"
            in rejection(kube_api, namespace, plugin.plural, bad))
    jobs = TrainingJobs(kube_api, namespace, plugin)
    queued = small_job(plugin, "q")
    queued["spec"]["runPolicy"] = {"schedulingPolicy": {"queue": "a"}}
    jobs.create(queued)
    with pytest.raises(client.ApiException) as exc:
        jobs.patch("q", {"spec": {"runPolicy": {"schedulingPolicy": {"queue": "b"}}}})
    assert exc.value.status == 422
    assert "spec.runPolicy.schedulingPolicy.queue is immutable" in exc.value.body


@pytest.mark.parametrize("plugin", kind_params())
def test_version_subresources_and_columns(cluster: Cluster, kube_api: Any, namespace: str,
                                          job_crds: dict[str, str], plugin: KindPlugin) -> None:
    """One served and stored version, ``v1``; the status subresource; the scale subresource
    (the Worker replicas, its active count and selector from the status) exactly where the
    kind's description and upstream's CRD have it, and ``kubectl scale`` writing the Worker
    replicas through it (the other replica types unchanged; no status yet, no controller);
    the printer columns State (the last condition's type) and Age."""
    crd = client.ApiextensionsV1Api(kube_api).read_custom_resource_definition(plugin.crd_name)
    assert (crd.spec.group, crd.spec.names.kind, crd.spec.names.plural, crd.spec.scope) == (
        "kubeflow.org", plugin.kind, plugin.plural, "Namespaced")
    version, = crd.spec.versions
    assert (version.name, version.served, version.storage) == ("v1", True, True)
    assert version.subresources.status == {}
    assert [(c.name, c.type, c.json_path) for c in version.additional_printer_columns] == [
        ("State", "string", ".status.conditions[-1:].type"),
        ("Age", "date", ".metadata.creationTimestamp")]
    declared = scale_subresource(plugin)
    if plugin.kind in UPSTREAM_SCALE:
        assert (declared is not None) == UPSTREAM_SCALE[plugin.kind]
    scale = version.subresources.scale
    if declared is None:
        assert scale is None
    else:
        want = {k: v.format(specs=plugin.replica_specs) for k, v in WORKER_SCALE.items()}
        assert declared == want
        assert (scale.spec_replicas_path, scale.status_replicas_path,
                scale.label_selector_path) == (want["specReplicasPath"],
                                               want["statusReplicasPath"],
                                               want["labelSelectorPath"])
    jobs = TrainingJobs(kube_api, namespace, plugin)
    jobs.create(small_job(plugin, "s"))
    table = cluster.kubectl("-n", namespace, "get", plugin.plural, "s")
    header, row = table.strip().splitlines()
    assert (header.split(), row.split()[:1], len(row.split())) == (
        ["NAME", "STATE", "AGE"], ["s"], 2)  # no condition yet: an empty State
    if declared is None:
        with pytest.raises(RuntimeError) as refused:
            cluster.kubectl("-n", namespace, "scale", f"{plugin.plural}/s", "--replicas=5")
        # no scale subresource: a 404 naming the job, which exists
        assert f'Error from server (NotFound): {plugin.crd_name} "s" not found' in str(
            refused.value)
        assert jobs.get("s")["metadata"]["name"] == "s"
        return
    others = {t: s["replicas"] for t, s in jobs.specs("s").items() if t != "Worker"}
    cluster.kubectl("-n", namespace, "scale", f"{plugin.plural}/s", "--replicas=5")
    specs = jobs.specs("s")
    assert specs["Worker"]["replicas"] == 5
    assert {t: s["replicas"] for t, s in specs.items() if t != "Worker"} == others
    got = jobs.scale("s")
    assert (got["spec"]["replicas"], got["status"]["replicas"]) == (5, 0)
