"""Every manifest under ``examples/``, created unchanged with ``kubectl create -f``, runs to
``Succeeded`` under the controller installed as docs/install.md says (``deployed_controller``:
the single-file manifest with the image built here).

The examples name upstream's images, which this machine cannot pull, so their pods go to the
local cluster's KWOK nodes (the real node is tainted) where KWOK plays them: each container
"runs" and exits 0 (``hack/kwok``). What is real is everything the controller does: it runs in
its pod on the real node as its ServiceAccount, through its webhooks (the conversion of MPIJob
``v1`` and ``v1alpha2``, the validation of every kind), and makes each job's children, status
and Events. Where a manifest needs what its guide has the user make first, the test makes it:
the namespace it names, the PersistentVolumeClaims the local XGBoost examples mount, and the
fields upstream's examples carry that their CRD prunes (``kubectl --validate=warn``, as the e2e
example tests do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from e2e.test_training_kinds import bound_claim, claims
from mpi_controller.kinds import plugin, plugins
from tests.support import REPO, Cluster, wait_for
from tests.tfjobs import kubeflow_namespace
from tests.trainingjobs import UNKNOWN_FIELDS, example

pytestmark = pytest.mark.cluster

EXAMPLES = sorted({path for described in plugins() for path in described.examples})


def test_every_example_is_run_here() -> None:
    """The list below is every manifest under examples/ (so none is left out)."""
    on_disk = sorted(str(p.relative_to(REPO)) for p in (REPO / "examples").rglob("*.yaml"))
    assert on_disk == EXAMPLES


def _conditions(job: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (job.get("status") or {}).get("conditions", [])}


@pytest.mark.parametrize("path", EXAMPLES)
def test_example_succeeds_under_the_installed_controller(
        cluster: Cluster, kube_api: Any, namespace: str, deployed_controller: dict[str, Any],
        cleanup: list[Callable[[], None]], path: str) -> None:
    doc = example(path)
    group, version = doc["apiVersion"].split("/")
    described = plugin(doc["kind"])
    name = doc["metadata"]["name"]
    ns = doc["metadata"].get("namespace") or namespace
    custom = client.CustomObjectsApi(kube_api)
    if ns != namespace:  # the manifest's own namespace (kubeflow): its job removed afterwards
        kubeflow_namespace(kube_api)
        cleanup.append(lambda: cluster.kubectl(
            "-n", ns, "delete", f"{described.plural}.{version}.{group}", name,
            "--ignore-not-found", "--wait=true", "--timeout=60s", check=False))
    if described.kind != "MPIJob":
        for claim in sorted(claims(doc, described)):
            cleanup.append(bound_claim(kube_api, ns, claim))
    create = ["create", "-f", str(REPO / path), *(() if ns != namespace else ("-n", ns))]
    if path in UNKNOWN_FIELDS:
        create.append("--validate=warn")
    cluster.kubectl(*create)

    def finished() -> dict[str, Any] | None:
        job: dict[str, Any] = custom.get_namespaced_custom_object(
            group, version, ns, described.plural, name)
        return job if {"Succeeded", "Failed"} & {
            t for t, s in _conditions(job).items() if s == "True"} else None

    job = wait_for(finished, timeout=180, what=f"{path} ({doc['kind']} {name}) to finish")
    assert _conditions(job).get("Succeeded") == "True", (path, job.get("status"))
    assert _conditions(job).get("Created") == "True", (path, job.get("status"))
    pods = client.CoreV1Api(kube_api).list_namespaced_pod(ns).items
    mine = [p for p in pods if any(o.name == name and o.kind == doc["kind"]
                                   for o in p.metadata.owner_references or [])]
    nodes = {p.spec.node_name for p in mine}
    assert all(n and n.startswith("kwok-") for n in nodes), nodes
    wait_for(lambda: f"{doc['kind']}Succeeded" in {
        e.reason for e in client.CoreV1Api(kube_api).list_namespaced_event(
            ns, field_selector=f"involvedObject.name={name}").items},
        timeout=30, what=f"the {doc['kind']}Succeeded Event of {name}")
