"""``mpi-controller run`` startup: the CRD check waits out an API server outage (bounded)
instead of crash-looping, and still fails fast on a missing CRD or a non-retriable error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mpi_controller import app
from mpi_controller.runtime.client import ApiError


class _Client:
    def __init__(self, *errors: ApiError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def list(self, *_: Any, **__: Any) -> dict[str, Any]:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return {"items": []}


@pytest.fixture(autouse=True)
def _no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    async def sleep(_: float) -> None:
        return None
    monkeypatch.setattr(app.asyncio, "sleep", sleep)


def _run(client: _Client, retry_for: float = 60.0) -> bool:
    return asyncio.run(app._crd_installed(client, "", retry_for=retry_for))  # type: ignore[arg-type]


def test_connection_refused_then_served_is_installed() -> None:
    client = _Client(ApiError(0, "ConnectionError"), ApiError(503, "ServiceUnavailable"),
                     ApiError(429, "TooManyRequests"))
    assert _run(client) is True
    assert client.calls == 4


def test_missing_crd_is_not_retried() -> None:
    client = _Client(ApiError(404, "NotFound"))
    assert _run(client) is False
    assert client.calls == 1


def test_forbidden_is_raised_at_once() -> None:
    client = _Client(ApiError(403, "Forbidden"))
    with pytest.raises(ApiError):
        _run(client)
    assert client.calls == 1


def test_outage_longer_than_the_deadline_is_raised() -> None:
    client = _Client(*[ApiError(0, "ConnectionError")] * 100)
    with pytest.raises(ApiError):
        _run(client, retry_for=0.0)
