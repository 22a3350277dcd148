"""``mpi-controller run`` startup: the CRD check waits out an API server outage (bounded)
instead of crash-looping, and still fails fast on a missing CRD or a non-retriable error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mpi_controller import app
from mpi_controller.runtime.errors import ApiError
from tests.unit.runtime.fakes import SleepRecorder


class _Client:
    def __init__(self, *errors: ApiError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def list(self, *_: Any, **__: Any) -> dict[str, Any]:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return {"items": []}


def _run(client: _Client, retry_for: float = 60.0, clock: SleepRecorder | None = None) -> bool:
    return asyncio.run(app._crd_installed(client, "", retry_for=retry_for,  # type: ignore[arg-type]
                                          clock=clock or SleepRecorder()))


def test_connection_refused_then_served_is_installed() -> None:
    client = _Client(ApiError(0, "ConnectionError"), ApiError(503, "ServiceUnavailable"),
                     ApiError(429, "TooManyRequests"))
    clock = SleepRecorder()
    assert _run(client, clock=clock) is True
    assert client.calls == 4
    assert clock.slept == [0.5, 1.0, 2.0]


def test_backoff_is_capped_at_five_seconds_and_bounded_by_the_deadline() -> None:
    client = _Client(*[ApiError(0, "ConnectionError")] * 100)
    clock = SleepRecorder()
    with pytest.raises(ApiError):
        _run(client, retry_for=20.0, clock=clock)
    assert clock.slept == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert client.calls == 7


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


async def test_the_training_kinds_and_trainjob_record_events_through_a_bucket_of_their_own(
) -> None:
    """training-operator and Kubeflow Trainer record Events through controller-runtime's
    recorder provider, whose corev1 client has a token bucket of its own; mpi-operator v0.8.2
    records through its shared Kubernetes clientset (cmd/mpi-operator/app/server.go:
    EventSinkImpl over kubeClient). So a burst of Events does not hold back a training job's
    pod creates, as it did (three TFJobs of 30 got their children 3 s late, the Events of
    jobs seen earlier taking the tokens)."""
    from kubernetes_asyncio import client as k8s

    from mpi_controller.options import ServerOptions
    from mpi_controller.runtime.rest import RestClient

    kube = RestClient(k8s.ApiClient(configuration=k8s.Configuration(host="http://x")))
    built = app.build_controllers(kube, ServerOptions(), schemes=[
        "mpijob", "tfjob", "pytorchjob", "xgboostjob", "paddlejob", "jaxjob", "trainjob"])
    by_component = {r.component: r.client for r in built.recorders}
    shared = [c for name, c in by_component.items() if name == "mpi-job-controller"]
    own = [c for name, c in by_component.items() if name != "mpi-job-controller"]
    assert shared == [kube]
    assert len(own) == 6
    assert all(c is own[0] for c in own)  # one more clientset for all of them
    assert own[0] is not kube
    assert own[0].api_client is kube.api_client
    assert own[0]._bucket("/api/v1/namespaces/n/events") is not kube._bucket(
        "/api/v1/namespaces/n/pods")
    await kube.close()
