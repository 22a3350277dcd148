"""The webhook HTTP endpoints: bodies that are not JSON, conversion and admission over HTTP, the
controller-runtime metrics; and build_webhook's runnables serving HTTPS with a certificate the
manager issued (trusted through the CA it injected)."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.kube.timefmt import utcnow
from mpi_controller.testing import FakeApi
from mpi_controller.webhook import WebhookOptions, build_webhook, webhook_identity
from mpi_controller.webhook.certmanager import CertificateManager
from mpi_controller.webhook.registry import default_registry
from mpi_controller.webhook.server import REQUESTS, webhook_routes
from tests.unit.runtime.test_https import session
from tests.unit.webhook.test_certmanager import World

REPO = Path(__file__).resolve().parents[3]
V1_JOB = yaml.safe_load((REPO / "examples/v1/tensorflow-mnist-elastic.yaml").read_text())


@asynccontextmanager
async def client() -> AsyncIterator[aiohttp.ClientSession]:
    """A session posting to the webhook routes of every kind, served over HTTPS."""
    fake = FakeApi()

    async def lookup(resource: Resource, name: str, namespace: str | None) -> Obj:
        return await fake.get(resource, name, namespace=namespace)

    async with session(webhook_routes(default_registry(), lookup)) as http:
        yield http


def count(path: str, code: str) -> float:
    return float(REQUESTS.labels(path, code)._value.get())


async def test_a_body_that_is_not_json_gets_400_naming_the_problem() -> None:
    async with client() as http:
        before = count("/convert", "400")
        resp = await http.post("/convert", data=b"{not json")
        assert resp.status == 400
        body = await resp.json()
        assert body["kind"] == "ConversionReview"
        assert body["response"]["result"]["status"] == "Failure"
        assert body["response"]["result"]["message"].startswith("the body is not JSON")
        assert count("/convert", "400") == before + 1
        resp = await http.post("/validate-kubeflow-org-v1-mpijob", data=b"\xff")
        assert resp.status == 400
        review = await resp.json()
        assert review["response"]["allowed"] is False
        assert review["response"]["status"]["code"] == 400


async def test_conversion_and_admission_over_http() -> None:
    async with client() as http:
        resp = await http.post("/convert", json={
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "1", "desiredAPIVersion": "kubeflow.org/v2beta1",
                        "objects": [V1_JOB]}})
        assert resp.status == 200
        converted = (await resp.json())["response"]["convertedObjects"]
        assert converted[0]["apiVersion"] == "kubeflow.org/v2beta1"
        resp = await http.post("/validate-kubeflow-org-v1-mpijob", json={
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "2", "operation": "CREATE", "object": V1_JOB,
                        "kind": {"group": "kubeflow.org", "version": "v1", "kind": "MPIJob"}}})
        assert (await resp.json())["response"] == {"uid": "2", "allowed": True}
        assert (await http.post("/validate-nothing", json={})).status == 404


def test_the_identity_names_the_service_and_the_url_host() -> None:
    opts = WebhookOptions(url="https://127.0.0.1:9443", service_name="svc")
    identity = webhook_identity(opts, "ns")
    assert (identity.dns_names, identity.ip_addresses) == (("svc.ns.svc",), ("127.0.0.1",))
    named = webhook_identity(WebhookOptions(url="https://webhook.local:8443"), "ns")
    assert named.dns_names == ("mpi-operator-webhook.ns.svc", "webhook.local")


def test_when_the_webhooks_are_enabled() -> None:
    assert WebhookOptions().enabled(in_pod=True)
    assert not WebhookOptions().enabled(in_pod=False)
    assert WebhookOptions(url="https://127.0.0.1:1").enabled(in_pod=False)
    assert WebhookOptions(cert_dir="/x").enabled(in_pod=False)
    assert WebhookOptions(mode="on").enabled(in_pod=False)
    assert not WebhookOptions(mode="off").enabled(in_pod=True)


async def test_the_runnables_serve_https_with_the_managed_certificate() -> None:
    world = World()
    world.wall_offset = utcnow() - world.wall()  # the TLS client checks validity on the real clock
    opts = WebhookOptions(url="https://127.0.0.1:9443", port=0,
                          cert_validity=dt.timedelta(hours=4))
    manager, server = build_webhook(world.api, opts, namespace="mpi-operator", clock=world.clock,
                                    wall=world.wall)
    assert isinstance(manager, CertificateManager)
    tasks = [asyncio.create_task(r.run()) for r in (manager, server)]
    try:
        await world.run_for(3.0)
        for _ in range(100):  # the server binds on the real event loop
            if server.ready():
                break
            await asyncio.sleep(0.01)
        assert manager.ready()
        assert server.ready()
        ca = base64.b64decode(world.crd_client_config()["caBundle"])
        context = ssl.create_default_context(cadata=ca.decode())
        port: Any = getattr(server, "bound_port")  # noqa: B009 - a Runnable does not declare it
        async with aiohttp.ClientSession() as http, http.post(
                f"https://127.0.0.1:{port}/convert", ssl=context, json={
                    "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                    "request": {"uid": "9", "desiredAPIVersion": "kubeflow.org/v1alpha2",
                                "objects": [V1_JOB]}}) as resp:
            review = await resp.json()
        assert review["response"]["result"] == {"status": "Success"}
        assert world.crd_client_config()["url"] == "https://127.0.0.1:9443/convert"
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def test_the_configuration_name_follows_the_mode() -> None:
    assert WebhookOptions().configuration == "mpi-operator"
    assert WebhookOptions(url="https://127.0.0.1:1").configuration == "mpi-operator-local"
    assert WebhookOptions(url="https://127.0.0.1:1", configuration_name="x").configuration == "x"
