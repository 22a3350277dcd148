"""RestClient's lean HTTP/1.1 pool against the real API server (TLS, client certificates):
error answers keep their connection, a large LIST arrives chunked and whole, and connections
the server side ends are handled as client-go and urllib3 do: an idle one it closed is not
reused, and a request dropped on a reused connection is sent again only when that cannot
process it twice (a GET), never a create. The server side's closes are made by a TCP forwarder
in front of the API server (TLS passes through it end to end)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from mpi_controller.kube.resources import CONFIGMAPS
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.http1 import Http1Pool, Response
from mpi_controller.runtime.rest import RestClient
from tests.integration.runtime_helpers import kube_client
from tests.support import Cluster

pytestmark = pytest.mark.cluster


class Forwarder:
    """Pipes TCP connections to ``target``. ``expire()`` closes every open connection (an
    idle keep-alive timing out on the server); after ``drop_next()`` each open connection
    closes, unforwarded, on the next bytes the client sends on it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.accepted = 0
        self.dropped = 0
        self._live: list[tuple[asyncio.StreamWriter, asyncio.StreamWriter, list[bool]]] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        drop = [False]
        entry = (writer, up_writer, drop)
        self._live.append(entry)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter,
                       from_client: bool) -> None:
            try:
                while data := await src.read(65536):
                    if from_client and drop[0]:
                        self.dropped += 1
                        break
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                writer.close()
                up_writer.close()

        try:
            await asyncio.gather(pump(reader, up_writer, True), pump(up_reader, writer, False))
        finally:
            self._live.remove(entry)

    def expire(self) -> None:
        for writer, up_writer, _ in self._live:
            writer.close()
            up_writer.close()

    def drop_next(self) -> None:
        for _, _, drop in self._live:
            drop[0] = True


@pytest_asyncio.fixture(loop_scope="function")
async def kube(cluster: Cluster) -> AsyncIterator[RestClient]:
    async with kube_client(cluster) as k:
        yield k


@pytest_asyncio.fixture(loop_scope="function")
async def forwarded(kube: RestClient) -> AsyncIterator[tuple[RestClient, Forwarder]]:
    """The client, pointed at a forwarder in front of the API server."""
    from urllib.parse import urlsplit

    url = urlsplit(kube.host)
    forwarder = Forwarder(url.hostname or "", url.port or 443)
    server = await asyncio.start_server(forwarder.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    kube.api_client.configuration.host = f"{url.scheme}://127.0.0.1:{port}"
    async with server:
        yield kube, forwarder
        forwarder.expire()


def pool_of(kube: RestClient) -> Http1Pool:
    lean = kube._lean.pool(kube.api_client)
    assert lean is not None, "the API server's requests should go through the lean pool"
    return lean[0]


async def until(check: Any, what: str, timeout: float = 10.0) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not check():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"waited {timeout} s for {what}") from None


def cm(name: str, payload: str = "v") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"k": payload}}


async def test_error_answers_keep_their_connection(kube: RestClient, namespace: str) -> None:
    await kube.create(CONFIGMAPS, cm("a"), namespace=namespace)
    with pytest.raises(ApiError) as err:
        await kube.create(CONFIGMAPS, cm("a"), namespace=namespace)
    assert (err.value.status, err.value.is_already_exists()) == (409, True)
    with pytest.raises(ApiError) as err:
        await kube.get(CONFIGMAPS, "missing", namespace=namespace)
    assert err.value.is_not_found()
    assert (await kube.get(CONFIGMAPS, "a", namespace=namespace))["data"] == {"k": "v"}
    pool = pool_of(kube)
    assert (pool.open_connections, pool.idle_connections) == (1, 1)


async def test_a_large_list_arrives_chunked_and_whole(kube: RestClient, namespace: str) -> None:
    payload = "x" * 60_000
    for i in range(20):
        await kube.create(CONFIGMAPS, cm(f"big-{i}", payload), namespace=namespace, result=False)
    pool = pool_of(kube)
    answers: list[Response] = []
    send = pool.request

    async def recording(*args: Any) -> Response:
        answers.append(await send(*args))
        return answers[-1]

    pool.request = recording  # type: ignore[method-assign]
    listed = await kube.list(CONFIGMAPS, namespace=namespace, label_selector="")
    names = sorted(item["metadata"]["name"] for item in listed["items"]
                   if item["metadata"]["name"].startswith("big-"))
    assert names == sorted(f"big-{i}" for i in range(20))
    assert all(item["data"] == {"k": payload} for item in listed["items"]
               if item["metadata"]["name"].startswith("big-"))
    assert answers[0].headers.get("transfer-encoding") == "chunked"
    assert len(answers[0].body) > 20 * 60_000


async def test_an_expired_keep_alive_connection_is_not_reused(
    forwarded: tuple[RestClient, Forwarder], namespace: str,
) -> None:
    kube, forwarder = forwarded
    await kube.create(CONFIGMAPS, cm("a"), namespace=namespace)
    pool = pool_of(kube)
    forwarder.expire()
    await until(lambda: pool.idle_connections == 0, "the client to see the close")
    await kube.create(CONFIGMAPS, cm("b"), namespace=namespace)  # a POST: not retriable
    assert (forwarder.accepted, forwarder.dropped) == (2, 0)
    assert (await kube.get(CONFIGMAPS, "b", namespace=namespace))["metadata"]["name"] == "b"


async def test_a_dropped_request_on_a_reused_connection_is_sent_again_only_if_idempotent(
    forwarded: tuple[RestClient, Forwarder], namespace: str,
) -> None:
    kube, forwarder = forwarded
    await kube.create(CONFIGMAPS, cm("a"), namespace=namespace)
    forwarder.drop_next()
    assert (await kube.get(CONFIGMAPS, "a", namespace=namespace))["metadata"]["name"] == "a"
    assert (forwarder.accepted, forwarder.dropped) == (2, 1)

    forwarder.drop_next()
    with pytest.raises(ApiError) as err:
        await kube.create(CONFIGMAPS, cm("b"), namespace=namespace)
    assert (err.value.status, err.value.reason, err.value.is_retriable()) == (
        0, "ConnectionError", True)
    assert (forwarder.accepted, forwarder.dropped) == (2, 2)
    with pytest.raises(ApiError) as missing:  # the create never reached the server
        await kube.get(CONFIGMAPS, "b", namespace=namespace)
    assert missing.value.is_not_found()
