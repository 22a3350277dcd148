"""Creates in a namespace being deleted: the API server's ``NamespaceTerminating`` refusal is
recognised (apimachinery's ``HasStatusCause(err, NamespaceTerminatingCause)``) and, for a second
after it, a create in that namespace fails with the same error without a request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer

from mpi_controller.kube.resources import EVENTS, PODS
from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.rest import RestClient
from mpi_controller.runtime.terminating import TerminatingNamespaces


def terminating_status(namespace: str) -> dict[str, Any]:
    """The body kube-apiserver's NamespaceLifecycle plugin answers a create with."""
    message = (f'pods "p" is forbidden: unable to create new content in namespace {namespace} '
               "because it is being terminated")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "Forbidden", "code": 403,
            "details": {"name": "p", "kind": "pods", "causes": [
                {"reason": "NamespaceTerminating", "field": "metadata.namespace",
                 "message": f"namespace {namespace} is being terminated"}]}}


def rbac_status() -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
            "reason": "Forbidden", "message": 'pods is forbidden: User "x" cannot create',
            "details": {"kind": "pods"}}


def test_only_the_namespace_terminating_cause_is_recognised() -> None:
    assert ApiError.from_status(terminating_status("gone")).is_namespace_terminating()
    assert not ApiError.from_status(rbac_status()).is_namespace_terminating()
    other_cause = terminating_status("gone")
    other_cause["details"]["causes"][0]["reason"] = "FieldValueInvalid"
    assert not ApiError.from_status(other_cause).is_namespace_terminating()
    as_conflict = {**terminating_status("gone"), "code": 409}
    assert not ApiError.from_status(as_conflict).is_namespace_terminating()
    assert not ApiError(403, "Forbidden", "no body").is_namespace_terminating()


def test_a_refusal_is_held_for_one_second_per_namespace() -> None:
    clock = ManualClock()
    memo = TerminatingNamespaces(clock)
    refused = ApiError.from_status(terminating_status("gone"))
    memo.note("gone", refused)
    memo.note("other", ApiError.from_status(rbac_status()))  # not a namespace deletion
    held = memo.refusal("gone")
    assert held is not None
    assert held is not refused
    assert (held.status, held.reason, held.message, held.body) == (
        refused.status, refused.reason, refused.message, refused.body)
    assert held.is_namespace_terminating()
    assert memo.refusal("other") is None
    assert memo.refusal(None) is None
    clock.advance(0.999)
    assert memo.refusal("gone") is not None
    clock.advance(0.001)
    assert memo.refusal("gone") is None
    memo.note(None, refused)
    assert memo.refusal(None) is None


class Namespaces:
    """Answers creates in ``terminating`` with the NamespaceLifecycle refusal; counts requests."""

    def __init__(self) -> None:
        self.terminating: set[str] = set()
        self.creates: list[str] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        namespace = request.match_info["ns"]
        self.creates.append(namespace)
        if namespace in self.terminating:
            return web.json_response(terminating_status(namespace), status=403)
        if namespace == "rbac":
            return web.json_response(rbac_status(), status=403)
        body = await request.json()
        return web.json_response(body, status=201)


@pytest_asyncio.fixture(loop_scope="function")
async def server() -> AsyncIterator[tuple[Namespaces, RestClient, ManualClock]]:
    from kubernetes_asyncio import client

    fake = Namespaces()
    app = web.Application()
    app.router.add_route("POST", "/api/v1/namespaces/{ns}/{plural}", fake.handle)
    srv = TestServer(app)
    await srv.start_server()
    clock = ManualClock()
    cfg = client.Configuration(host=str(srv.make_url("")).rstrip("/"))
    kube = RestClient(client.ApiClient(configuration=cfg), qps=0, request_timeout=5.0,
                      clock=clock)
    try:
        yield fake, kube, clock
    finally:
        await kube.close()
        await srv.close()


def pod(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": namespace}}


async def test_creates_in_a_namespace_being_deleted_wait_a_second_between_requests(
        server: tuple[Namespaces, RestClient, ManualClock]) -> None:
    fake, kube, clock = server
    fake.terminating.add("gone")
    for resource in (PODS, EVENTS, PODS):
        with pytest.raises(ApiError) as err:
            await kube.create(resource, pod("gone"))
        assert err.value.is_namespace_terminating()
        assert err.value.message.endswith("namespace gone because it is being terminated")
    assert fake.creates == ["gone"]  # the second and third never left the process
    created = await kube.create(PODS, pod("live"))  # other namespaces are not held
    assert created["metadata"]["namespace"] == "live"
    clock.advance(1.0)
    with pytest.raises(ApiError):
        await kube.create(PODS, pod("gone"))
    assert fake.creates == ["gone", "live", "gone"]
    # Created again under the same name once the deletion ended: served after the hold.
    fake.terminating.clear()
    clock.advance(1.0)
    created = await kube.create(PODS, pod("gone"))
    assert created["metadata"] == {"name": "p", "namespace": "gone"}
    assert fake.creates == ["gone", "live", "gone", "gone"]


async def test_other_refusals_are_not_held(
        server: tuple[Namespaces, RestClient, ManualClock]) -> None:
    fake, kube, _ = server
    for _ in range(2):
        with pytest.raises(ApiError) as err:
            await kube.create(PODS, pod("rbac"))
        assert err.value.is_forbidden()
        assert not err.value.is_namespace_terminating()
    assert fake.creates == ["rbac", "rbac"]
