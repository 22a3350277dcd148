"""RestClient honours ``Retry-After`` on 429 and 5xx answers (client-go's rest client: up to
10 retries, each after the header's seconds); without the header, the error is raised at once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer

from mpi_controller.kube.resources import PODS
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.rest import MAX_RETRY_AFTER, RestClient
from tests.unit.runtime.fakes import SleepRecorder


class Throttling:
    """Answers ``answers`` (status, Retry-After or None) in turn, then 200."""

    def __init__(self, *answers: tuple[int, str | None]) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        if self.answers:
            code, retry_after = self.answers.pop(0)
            headers = {"Retry-After": retry_after} if retry_after is not None else {}
            return web.json_response({"kind": "Status", "code": code, "reason": "TooManyRequests"},
                                     status=code, headers=headers)
        return web.json_response({"kind": "Pod", "metadata": {"name": "p"}})


@pytest_asyncio.fixture(loop_scope="function")
async def server() -> AsyncIterator[tuple[Throttling, RestClient]]:
    from kubernetes_asyncio import client

    fake = Throttling()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    srv = TestServer(app)
    await srv.start_server()
    cfg = client.Configuration(host=str(srv.make_url("")).rstrip("/"))
    kube = RestClient(client.ApiClient(configuration=cfg), qps=0, request_timeout=5.0,
                      clock=SleepRecorder())
    try:
        yield fake, kube
    finally:
        await kube.close()
        await srv.close()


async def test_429_and_503_with_retry_after_are_retried(
        server: tuple[Throttling, RestClient]) -> None:
    fake, kube = server
    fake.answers = [(429, "0"), (503, "0"), (429, "0")]
    got: Any = await kube.get(PODS, "p", namespace="ns")
    assert got["metadata"]["name"] == "p"
    assert fake.calls == 4


async def test_the_wait_is_the_header_capped_at_ten_seconds(
        server: tuple[Throttling, RestClient]) -> None:
    fake, kube = server
    fake.answers = [(429, "3"), (503, "7"), (429, "60"), (500, "-2")]
    await kube.get(PODS, "p", namespace="ns")
    assert kube._clock.slept == [3.0, 7.0, 10.0, 0.0]  # type: ignore[attr-defined]
    assert fake.calls == 5


async def test_without_retry_after_the_error_is_raised_at_once(
        server: tuple[Throttling, RestClient]) -> None:
    fake, kube = server
    fake.answers = [(429, None)]
    with pytest.raises(ApiError) as err:
        await kube.get(PODS, "p", namespace="ns")
    assert err.value.is_too_many_requests()
    assert fake.calls == 1


async def test_retries_are_bounded(server: tuple[Throttling, RestClient]) -> None:
    fake, kube = server
    fake.answers = [(429, "0")] * (MAX_RETRY_AFTER + 5)
    with pytest.raises(ApiError) as err:
        await kube.get(PODS, "p", namespace="ns")
    assert err.value.status == 429
    assert fake.calls == MAX_RETRY_AFTER + 1
