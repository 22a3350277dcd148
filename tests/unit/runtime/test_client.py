"""RestClient against a local aiohttp server (no cluster): wire format, errors, watch streams.

Error classification follows apimachinery ``pkg/api/errors`` (IsNotFound, IsAlreadyExists,
IsConflict, IsResourceExpired/IsGone, IsTooManyRequests); patch content types follow the API
server's accepted media types (merge, JSON, strategic merge, apply-patch+yaml); the token
bucket follows client-go ``flowcontrol.NewTokenBucketRateLimiter`` (burst, then 1/qps).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer

from mpi_controller.kube.resources import JOBS, LEASES, NAMESPACES, PODS, Resource
from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.rest import RestClient
from mpi_controller.runtime.throttle import RequestThrottle
from tests.unit.runtime.fakes import settle

Obj = dict[str, Any]


def status(code: int, reason: str, message: str = "") -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
            "reason": reason, "message": message}


# -- pure parts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "args", "path"),
    [
        (PODS, ("ns", "p", None), "/api/v1/namespaces/ns/pods/p"),
        (PODS, (None, None, None), "/api/v1/pods"),
        (JOBS, ("ns", "j", "status"), "/apis/batch/v1/namespaces/ns/jobs/j/status"),
        (NAMESPACES, ("ignored", "n", None), "/api/v1/namespaces/n"),
        (LEASES, ("kube-system", None, None),
         "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"),
        (Resource("kubeflow.org", "v2beta1", "mpijobs", kind="MPIJob"), ("ns", "x", None),
         "/apis/kubeflow.org/v2beta1/namespaces/ns/mpijobs/x"),
    ],
)
def test_resource_paths(resource: Resource, args: tuple[Any, ...], path: str) -> None:
    assert resource.path(*args) == path


@pytest.mark.parametrize(
    ("error", "true"),
    [
        (ApiError.from_status(status(404, "NotFound")), {"is_not_found"}),
        (ApiError.from_status(status(409, "AlreadyExists")), {"is_already_exists"}),
        (ApiError.from_status(status(409, "Conflict")), {"is_conflict"}),
        (ApiError.from_status(status(410, "Expired")), {"is_gone"}),
        (ApiError.from_status({"reason": "Expired", "message": "x"}, 500),
         {"is_gone", "is_retriable"}),
        (ApiError.from_status(status(403, "Forbidden")), {"is_forbidden"}),
        (ApiError.from_status(status(429, "TooManyRequests")),
         {"is_too_many_requests", "is_retriable"}),
        (ApiError.from_status(status(500, "InternalError")), {"is_retriable"}),
        (ApiError.from_status(status(503, "ServiceUnavailable")), {"is_retriable"}),
        (ApiError(0, "Timeout", "read timed out"), {"is_retriable", "is_timeout"}),
        (ApiError(0, "ConnectionError", "refused"), {"is_retriable"}),
        (ApiError.from_status(status(422, "Invalid")), set()),
    ],
)
def test_error_classification(error: ApiError, true: set[str]) -> None:
    predicates = ["is_not_found", "is_already_exists", "is_conflict", "is_gone", "is_forbidden",
                  "is_too_many_requests", "is_retriable", "is_timeout"]
    assert {p for p in predicates if getattr(error, p)()} == true


def test_error_from_non_status_body() -> None:
    err = ApiError.from_response(502, b"<html>bad gateway</html>")
    assert (err.status, err.reason, err.body) == (502, "Unknown", None)
    assert err.is_retriable()


async def test_token_bucket_allows_burst_then_qps() -> None:
    clock = ManualClock()
    bucket = RequestThrottle(qps=2.0, burst=3, clock=clock)
    done: list[float] = []

    async def take() -> None:
        await bucket.acquire()
        done.append(clock.now())

    tasks = [asyncio.create_task(take()) for _ in range(5)]
    await settle()
    assert done == [0.0, 0.0, 0.0]
    clock.advance(0.5)
    await settle()
    clock.advance(0.5)
    await settle()
    assert done == [0.0, 0.0, 0.0, 0.5, 1.0]
    await asyncio.gather(*tasks)


async def test_client_groups_have_token_buckets_of_their_own() -> None:
    """As the Go operator's clientsets (Kubernetes, MPIJob, leader election; client-go's
    NewForConfig makes one token bucket per clientset): MPIJob status writes and Lease renewals
    do not wait behind child-object writes, while core and batch share the default bucket."""
    from kubernetes_asyncio import client

    clock = ManualClock()
    kube = RestClient(client.ApiClient(configuration=client.Configuration(host="http://x")),
                      qps=1.0, burst=1, clock=clock,
                      client_groups={"kubeflow.org": "mpijobs", "coordination.k8s.io": "le"})
    done: list[str] = []

    async def take(path: str) -> None:
        await kube._bucket(path).acquire()
        done.append(path)

    paths = ["/api/v1/namespaces/n/pods", "/apis/batch/v1/namespaces/n/jobs",
             "/apis/kubeflow.org/v2beta1/namespaces/n/mpijobs/j/status",
             "/apis/coordination.k8s.io/v1/namespaces/n/leases/l",
             "/apis/kubeflow.org/v2beta1/namespaces/n/mpijobs/k/status"]
    tasks = [asyncio.create_task(take(p)) for p in paths]
    await settle()
    assert done == [paths[0], paths[2], paths[3]]  # one token each: pods, MPIJobs, Leases
    clock.advance(1.0)
    await settle()
    assert sorted(done[3:]) == sorted([paths[1], paths[4]])  # batch waited behind core
    await asyncio.gather(*tasks)
    await kube.close()


async def test_a_client_with_a_bucket_of_its_own_shares_all_else() -> None:
    """``with_own_bucket``: another clientset from the same configuration (controller-runtime's
    event recorder provider makes one: recorder.NewProvider builds its own corev1 client, so
    client-go gives it a token bucket of its own): its requests do not take the original's
    tokens, and the original's do not take its."""
    from kubernetes_asyncio import client

    clock = ManualClock()
    kube = RestClient(client.ApiClient(configuration=client.Configuration(host="http://x")),
                      qps=1.0, burst=1, clock=clock, client_groups={"kubeflow.org": "jobs"})
    events = kube.with_own_bucket()
    assert events.api_client is kube.api_client
    assert events.terminating is kube.terminating
    done: list[str] = []

    async def take(who: RestClient, name: str, path: str) -> None:
        await who._bucket(path).acquire()
        done.append(name)

    core, group = "/api/v1/namespaces/n/events", "/apis/kubeflow.org/v1/namespaces/n/tfjobs"
    tasks = [asyncio.create_task(take(*a)) for a in (
        (kube, "pod", "/api/v1/namespaces/n/pods"), (events, "event", core),
        (events, "event-2", core), (events, "job-via-events", group))]
    await settle()
    assert done == ["pod", "event"]  # one token each; the view has one bucket for all
    clock.advance(1.0)
    await settle()
    assert done == ["pod", "event", "event-2"]
    clock.advance(1.0)
    await settle()
    assert done[-1] == "job-via-events"
    await asyncio.gather(*tasks)
    await kube.close()


async def test_token_bucket_disabled_when_qps_not_positive() -> None:
    clock = ManualClock()
    bucket = RequestThrottle(qps=0, burst=1, clock=clock)
    for _ in range(100):
        # Each acquire completes without a timer: a throttled one would wait on the manual
        # clock, which never advances here, and the wait_for would time out.
        await asyncio.wait_for(bucket.acquire(), timeout=1.0)
    assert clock.pending() == 0
    assert clock.now() == 0.0


# -- against a local HTTP server -------------------------------------------------------------------


class FakeApi:
    """Records requests; handlers are set per test."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply: Any = {"kind": "Pod", "metadata": {"name": "p"}}
        self.reply_status = 200
        self.delay = 0.0
        self.chunks: list[bytes] = []
        self.watch_closed = asyncio.Event()
        self.watch_started = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append({
            "method": request.method, "path": request.path, "query": dict(request.query),
            "headers": request.headers.copy(), "body": json.loads(body) if body else None,
        })
        if request.query.get("watch") == "true" and self.reply_status < 400:
            return await self._watch(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        return web.json_response(self.reply, status=self.reply_status)

    async def _watch(self, request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        self.watch_started.set()
        try:
            for chunk in self.chunks:
                await resp.write(chunk)
                await asyncio.sleep(0.01)
            await asyncio.sleep(3600)
        finally:
            self.watch_closed.set()
        return resp


@pytest_asyncio.fixture(loop_scope="function")
async def api() -> AsyncIterator[tuple[FakeApi, RestClient]]:
    from kubernetes_asyncio import client

    fake = FakeApi()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    server = TestServer(app)
    await server.start_server()
    cfg = client.Configuration(host=str(server.make_url("")).rstrip("/"))
    cfg.api_key = {"BearerToken": "secret"}
    cfg.api_key_prefix = {"BearerToken": "Bearer"}
    kube = RestClient(client.ApiClient(configuration=cfg), qps=0, request_timeout=1.0,
                      user_agent="mpi-controller/test")
    try:
        yield fake, kube
    finally:
        await kube.close()
        await server.close()


async def test_crud_requests_carry_json_auth_and_user_agent(
    api: tuple[FakeApi, RestClient],
) -> None:
    fake, kube = api
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
    assert await kube.create(PODS, body, field_manager="me") == fake.reply
    await kube.get(PODS, "p", namespace="ns")
    await kube.update(PODS, {**body, "metadata": {**body["metadata"], "resourceVersion": "5"}})
    await kube.update_status(PODS, body)
    got = [(r["method"], r["path"], r["query"]) for r in fake.requests]
    assert got == [
        ("POST", "/api/v1/namespaces/ns/pods", {"fieldManager": "me"}),
        ("GET", "/api/v1/namespaces/ns/pods/p", {}),
        ("PUT", "/api/v1/namespaces/ns/pods/p", {}),
        ("PUT", "/api/v1/namespaces/ns/pods/p/status", {}),
    ]
    first = fake.requests[0]
    assert first["body"] == body
    assert first["headers"]["Content-Type"] == "application/json"
    assert first["headers"]["authorization"] == "Bearer secret"
    assert first["headers"]["User-Agent"] == "mpi-controller/test"


async def test_list_query_parameters(api: tuple[FakeApi, RestClient]) -> None:
    fake, kube = api
    await kube.list(PODS, namespace="ns", label_selector="a=b", field_selector="spec.nodeName=n",
                    limit=500, continue_="tok", resource_version="0",
                    resource_version_match="NotOlderThan")
    await kube.list(PODS, resource_version="")
    assert fake.requests[0]["query"] == {
        "labelSelector": "a=b", "fieldSelector": "spec.nodeName=n", "limit": "500",
        "continue": "tok", "resourceVersion": "0", "resourceVersionMatch": "NotOlderThan",
    }
    assert fake.requests[1]["path"] == "/api/v1/pods"
    assert fake.requests[1]["query"] == {"resourceVersion": ""}


@pytest.mark.parametrize(
    ("patch_type", "content_type", "query"),
    [
        ("merge", "application/merge-patch+json", {}),
        ("json", "application/json-patch+json", {}),
        ("strategic", "application/strategic-merge-patch+json", {}),
        ("apply", "application/apply-patch+yaml", {"fieldManager": "mgr", "force": "true"}),
    ],
)
async def test_patch_content_types(
    api: tuple[FakeApi, RestClient], patch_type: Any, content_type: str, query: dict[str, str]
) -> None:
    fake, kube = api
    field_manager = "mgr" if patch_type == "apply" else None
    await kube.patch(JOBS, "j", {"spec": {}}, namespace="ns", patch_type=patch_type,
                     field_manager=field_manager, force=True)
    req = fake.requests[0]
    assert (req["method"], req["path"]) == ("PATCH", "/apis/batch/v1/namespaces/ns/jobs/j")
    assert req["headers"]["Content-Type"] == content_type
    assert req["query"] == query
    assert req["body"] == {"spec": {}}


async def test_apply_needs_a_field_manager(api: tuple[FakeApi, RestClient]) -> None:
    _, kube = api
    with pytest.raises(ValueError, match="field_manager"):
        await kube.patch(PODS, "p", {}, namespace="ns", patch_type="apply")


async def test_delete_sends_options(api: tuple[FakeApi, RestClient]) -> None:
    fake, kube = api
    await kube.delete(PODS, "p", namespace="ns", propagation_policy="Foreground",
                      preconditions={"uid": "u1"}, grace_period_seconds=0)
    assert fake.requests[0]["body"] == {
        "kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground",
        "preconditions": {"uid": "u1"}, "gracePeriodSeconds": 0,
    }


async def test_http_errors_become_classified_api_errors(api: tuple[FakeApi, RestClient]) -> None:
    fake, kube = api
    fake.reply, fake.reply_status = status(409, "AlreadyExists", 'pods "p" already exists'), 409
    with pytest.raises(ApiError) as err:
        await kube.create(PODS, {"metadata": {"name": "p", "namespace": "ns"}})
    assert err.value.is_already_exists()
    assert err.value.message == 'pods "p" already exists'


async def test_request_timeout_is_a_retriable_api_error(api: tuple[FakeApi, RestClient]) -> None:
    fake, kube = api
    fake.delay = 5.0
    with pytest.raises(ApiError) as err:
        await kube.get(PODS, "p", namespace="ns")
    assert err.value.status == 0
    assert err.value.is_timeout()
    assert err.value.is_retriable()


async def test_connection_refused_is_a_retriable_api_error() -> None:
    from kubernetes_asyncio import client

    cfg = client.Configuration(host="http://127.0.0.1:9")
    async with RestClient(client.ApiClient(configuration=cfg), qps=0) as kube:
        with pytest.raises(ApiError) as err:
            await kube.get(PODS, "p", namespace="ns")
    assert err.value.status == 0
    assert err.value.reason == "ConnectionError"
    assert err.value.is_retriable()


@pytest_asyncio.fixture(loop_scope="function", params=[4, 0], ids=["lean", "aiohttp"])
async def each_transport(request: pytest.FixtureRequest, api: tuple[FakeApi, RestClient],
                         ) -> tuple[FakeApi, RestClient]:
    """The client through the lean client (a pool of 4) and through aiohttp (none)."""
    api[1]._lean.max_connections = request.param
    return api


async def test_watch_splits_lines_across_chunks_and_closes(
    each_transport: tuple[FakeApi, RestClient],
) -> None:
    """Events split across chunks, several per chunk, and one larger than aiohttp's
    default 64 KiB buffer all decode; closing the stream closes the connection. Through the
    lean client (no Accept-Encoding) and through aiohttp alike."""
    fake, kube = each_transport
    big = {"type": "ADDED", "object": {"metadata": {"name": "big"}, "data": "x" * 3_000_000}}
    lines = [json.dumps({"type": "ADDED", "object": {"metadata": {"name": f"p{i}"}}}).encode()
             for i in range(3)]
    stream = b"\n".join([*lines, json.dumps(big).encode()]) + b"\n"
    fake.chunks = [stream[:10], stream[10:150], stream[150:]]
    names = []
    async with kube.watch(PODS, namespace="ns", resource_version="7", timeout_seconds=300) as w:
        async for event in w:
            names.append(event["object"]["metadata"]["name"])
            if len(names) == 4:
                break
    assert names == ["p0", "p1", "p2", "big"]
    await asyncio.wait_for(fake.watch_closed.wait(), 5)
    assert fake.requests[0]["query"] == {
        "watch": "true", "resourceVersion": "7", "allowWatchBookmarks": "true",
        "timeoutSeconds": "300",
    }
    assert fake.requests[0]["headers"].get("Accept-Encoding") == (
        None if kube._lean.max_connections else "gzip, deflate")


async def test_a_watch_refused_is_an_api_error_with_the_servers_status(
    each_transport: tuple[FakeApi, RestClient],
) -> None:
    fake, kube = each_transport
    fake.reply_status = 403
    fake.reply = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
                  "reason": "Forbidden", "message": "pods is forbidden"}
    with pytest.raises(ApiError) as err:
        async for _ in kube.watch(PODS, namespace="ns"):
            pass
    assert (err.value.status, err.value.reason, err.value.message) == (
        403, "Forbidden", "pods is forbidden")


async def test_cancelling_a_watch_closes_its_response(
    each_transport: tuple[FakeApi, RestClient],
) -> None:
    fake, kube = each_transport
    w = kube.watch(PODS, namespace="ns")

    async def consume() -> None:
        async for _ in w:
            pass

    task = asyncio.create_task(consume())
    await asyncio.wait_for(fake.watch_started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(fake.watch_closed.wait(), 5)
    with pytest.raises(StopAsyncIteration):
        await w.__anext__()


async def test_aclose_from_another_task_ends_iteration_cleanly(
    each_transport: tuple[FakeApi, RestClient],
) -> None:
    fake, kube = each_transport
    w = kube.watch(PODS, namespace="ns")

    async def consume() -> int:
        return len([e async for e in w])

    task = asyncio.create_task(consume())
    await asyncio.wait_for(fake.watch_started.wait(), 5)
    await asyncio.sleep(0.05)
    await w.aclose()
    assert await asyncio.wait_for(task, 5) == 0
    await asyncio.wait_for(fake.watch_closed.wait(), 5)


async def test_without_a_token_requests_carry_no_authorization_and_skip_auth_settings(
    api: tuple[FakeApi, RestClient], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Client certificates (no bearer token): no Authorization header, and the per-request
    auth_settings() coroutine is not run (it could only return nothing)."""
    fake, kube = api
    configuration = kube.api_client.configuration
    configuration.api_key = {}

    async def never() -> dict[str, Any]:
        raise AssertionError("auth_settings() called without a token")

    monkeypatch.setattr(configuration, "auth_settings", never)
    await kube.get(PODS, "p", namespace="ns")
    await kube.get(PODS, "p", namespace="ns")
    assert [r["headers"].get("authorization") for r in fake.requests] == [None, None]
    assert fake.requests[0]["headers"]["User-Agent"] == "mpi-controller/test"


async def test_the_request_timeout_follows_its_attribute(api: tuple[FakeApi, RestClient]) -> None:
    fake, kube = api
    fake.delay = 0.3
    kube.request_timeout = 0.05
    with pytest.raises(ApiError) as err:
        await kube.get(PODS, "p", namespace="ns")
    assert err.value.status == 0
    kube.request_timeout = 5.0
    assert await kube.get(PODS, "p", namespace="ns") == fake.reply


async def test_writes_whose_answer_is_not_read_return_an_empty_object(
    api: tuple[FakeApi, RestClient],
) -> None:
    """``result=False``: the request is the same, the answer is not decoded."""
    fake, kube = api
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
    assert await kube.create(PODS, body, result=False) == {}
    assert await kube.update_status(PODS, body, result=False) == {}
    assert await kube.delete(PODS, "p", namespace="ns", result=False) == {}
    assert await kube.create(PODS, body) == fake.reply
    got = [(r["method"], r["path"], r["body"]) for r in fake.requests]
    assert got == [
        ("POST", "/api/v1/namespaces/ns/pods", body),
        ("PUT", "/api/v1/namespaces/ns/pods/p/status", body),
        ("DELETE", "/api/v1/namespaces/ns/pods/p", {"kind": "DeleteOptions", "apiVersion": "v1"}),
        ("POST", "/api/v1/namespaces/ns/pods", body),
    ]


# -- which transport carries a request ------------------------------------------------------------


async def test_plain_requests_go_through_the_lean_pool_and_close_ends_it(
    api: tuple[FakeApi, RestClient],
) -> None:
    """The lean HTTP/1.1 pool sends no Accept-Encoding (aiohttp's session sends gzip,
    deflate): that tells the two apart on the server. One keep-alive connection carries
    sequential requests; close() ends it."""
    fake, kube = api
    await kube.get(PODS, "p", namespace="ns")
    await kube.create(PODS, {"metadata": {"name": "p", "namespace": "ns"}})
    assert [r["headers"].get("Accept-Encoding") for r in fake.requests] == [None, None]
    lean = kube._lean.pool(kube.api_client)
    assert lean is not None
    assert (lean[0].open_connections, lean[0].idle_connections) == (1, 1)
    await kube.close()
    assert lean[0].open_connections == 0


async def test_with_a_proxy_or_no_pool_every_request_goes_through_aiohttp(
    api: tuple[FakeApi, RestClient],
) -> None:
    fake, kube = api
    kube._lean.max_connections = 0
    await kube.get(PODS, "p", namespace="ns")
    kube._lean.max_connections = 4
    kube.api_client.rest_client.proxy = kube.host  # the fake answers as a forward proxy too
    await kube.get(PODS, "p", namespace="ns")
    assert [(r["path"], r["headers"].get("Accept-Encoding")) for r in fake.requests] == [
        ("/api/v1/namespaces/ns/pods/p", "gzip, deflate")] * 2
    assert kube._lean.pool(kube.api_client) is None


@pytest.mark.parametrize("max_connections", [0, 4])
async def test_a_host_with_a_path_prefixes_every_request(
    api: tuple[FakeApi, RestClient], max_connections: int,
) -> None:
    """Both transports keep the server URL's path (an API server behind a path-routing
    proxy) and send query values percent-encoded alike."""
    fake, kube = api
    kube._lean.max_connections = max_connections
    kube.api_client.configuration.host = kube.host + "/k8s/clusters/c-1"
    await kube.list(PODS, namespace="ns", label_selector="a in (x,y),b!=z")
    assert [(r["path"], r["query"]) for r in fake.requests] == [
        ("/k8s/clusters/c-1/api/v1/namespaces/ns/pods", {"labelSelector": "a in (x,y),b!=z"})]


async def test_a_watch_takes_no_token(each_transport: tuple[FakeApi, RestClient]) -> None:
    """client-go's ``Request.Watch`` does not rate-limit watches (an informer's streaming list
    is one): with the bucket empty, a watch still connects at once; a GET waits for a token."""
    fake, kube = each_transport
    kube._buckets = {"": RequestThrottle(qps=0.001, burst=1, clock=ManualClock())}
    await kube.get(PODS, "p", namespace="ns")  # the one token
    fake.chunks = [json.dumps({"type": "ADDED", "object": {"metadata": {"name": "p"}}}).encode()
                   + b"\n"]
    async with asyncio.timeout(5):
        async with kube.watch(PODS, namespace="ns") as w:
            async for event in w:
                assert event["object"]["metadata"]["name"] == "p"
                break
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await kube.get(PODS, "p", namespace="ns")
