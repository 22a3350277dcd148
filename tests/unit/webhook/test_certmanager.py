"""The webhook certificate manager on the in-memory API (:mod:`mpi_controller.testing`), manual
clock:
the first replica creates the Secret and injects the CA, a second replica reuses it, two
starting together share one CA, renewal before expiry (a new CA published beside the old),
caBundle drift repaired, the local URL mode, and certificate files (cert-manager)."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import structlog
import structlog.testing
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from mpi_controller.kube.resources import SECRETS
from mpi_controller.runtime.clock import ManualClock
from mpi_controller.testing import FakeApi, status_error
from mpi_controller.webhook.certmanager import (
    CRDS,
    MUTATING_WEBHOOK_CONFIGURATIONS,
    VALIDATING_WEBHOOK_CONFIGURATIONS,
    CertConfig,
    CertificateFiles,
    CertificateManager,
)
from mpi_controller.webhook.certs import Bundle, Identity, issue
from mpi_controller.webhook.registry import default_registry

NS = "mpi-operator"
SECRET = "mpi-operator-webhook-cert"
CRD = "mpijobs.kubeflow.org"
VWC = "mpi-operator"
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
IDENTITY = Identity(("mpi-operator-webhook.mpi-operator.svc",))
REGISTRY = default_registry()
SERVICE_REF = {"name": "mpi-operator-webhook", "namespace": NS, "port": 443}


class Sink:
    """Records what the server was told to serve; like the server, refuses a key that does not
    belong to the certificate."""

    def __init__(self) -> None:
        self.loaded: list[tuple[bytes, bytes]] = []

    def set_certificate(self, cert_pem: bytes, key_pem: bytes) -> None:
        cert = x509.load_pem_x509_certificate(cert_pem)
        key = serialization.load_pem_private_key(key_pem, password=None)
        spki = serialization.PublicFormat.SubjectPublicKeyInfo
        if cert.public_key().public_bytes(serialization.Encoding.DER, spki) != \
                key.public_key().public_bytes(serialization.Encoding.DER, spki):
            raise ValueError("key does not match")
        self.loaded.append((cert_pem, key_pem))


class World:
    """FakeApi with the CRD and the webhook configuration, a manual clock and a wall clock."""

    def __init__(self) -> None:
        self.clock = ManualClock()
        self.api = FakeApi(clock=self.clock)
        self.api.register(CRDS, custom=False, generation=True)
        self.api.register(VALIDATING_WEBHOOK_CONFIGURATIONS, custom=False, generation=True)
        self.api.register(MUTATING_WEBHOOK_CONFIGURATIONS, custom=False, generation=True)
        self.wall_offset = dt.timedelta(0)
        self.api.add(CRDS, {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": CRD}, "spec": {"group": "kubeflow.org", "conversion": {
                "strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                                                   "clientConfig": {"service": {
                                                       **SERVICE_REF, "path": "/convert"}}}}}})
        self.api.add(VALIDATING_WEBHOOK_CONFIGURATIONS, REGISTRY.validating_configuration(
            VWC, lambda path: {"service": {**SERVICE_REF, "path": path}}))

    def wall(self) -> dt.datetime:
        return START + self.wall_offset

    def manager(self, sink: Sink, *, validity: dt.timedelta = dt.timedelta(hours=4),
                identity: Identity = IDENTITY, url: str = "",
                mutating: str = "") -> CertificateManager:
        config = CertConfig(namespace=NS, secret_name=SECRET, identity=identity,
                            validity=validity, crds=(CRD,), webhook_configuration=VWC, url=url,
                            mutating_configuration=mutating)
        return CertificateManager(self.api, config, sink, registry=REGISTRY, clock=self.clock,
                                  wall=self.wall)

    async def run_for(self, seconds: float, step: float = 0.1) -> None:
        """Let time pass on the manual clock, letting every task run at each step."""
        for _ in range(round(seconds / step)):
            for _ in range(40):
                await asyncio.sleep(0)
            self.clock.advance(step)
        for _ in range(40):
            await asyncio.sleep(0)

    def bundle(self) -> Bundle:
        secret = self.api.stored(SECRETS, SECRET, namespace=NS)
        assert secret is not None
        return Bundle.from_secret_data(secret["data"])

    def crd_client_config(self) -> dict[str, Any]:
        crd = self.api.stored(CRDS, CRD)
        assert crd is not None
        return dict(crd["spec"]["conversion"]["webhook"]["clientConfig"])

    def vwc_client_configs(self) -> list[dict[str, Any]]:
        vwc = self.api.stored(VALIDATING_WEBHOOK_CONFIGURATIONS, VWC)
        assert vwc is not None
        return [w["clientConfig"] for w in vwc["webhooks"]]

    def writes(self, resource_plural: str) -> list[str]:
        return [r.verb for r in self.api.writes() if r.resource.plural == resource_plural]


@asynccontextmanager
async def running(*managers: CertificateManager) -> AsyncIterator[None]:
    tasks = [asyncio.create_task(m.run()) for m in managers]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def b64(pem: bytes) -> str:
    return base64.b64encode(pem).decode()


async def test_the_first_replica_creates_the_secret_injects_the_ca_and_serves() -> None:
    world = World()
    sink = Sink()
    manager = world.manager(sink)
    async with running(manager):
        await world.run_for(1.0)
        assert world.writes("secrets") == ["create"]
        bundle = world.bundle()
        assert world.crd_client_config() == {"service": {**SERVICE_REF, "path": "/convert"},
                                             "caBundle": b64(bundle.ca_cert)}
        assert [c["caBundle"] for c in world.vwc_client_configs()] == [b64(bundle.ca_cert)] * len(
            REGISTRY.validating)
        assert sink.loaded == []  # a caBundle changed: wait before serving a new CA's cert
        assert not manager.ready()
        await world.run_for(2.0)
        assert sink.loaded == [(bundle.cert, bundle.key)]
        assert manager.ready()
        secret = world.api.stored(SECRETS, SECRET, namespace=NS)
        assert secret is not None
        assert secret["type"] == "Opaque"
        [cert] = x509.load_pem_x509_certificates(bundle.cert)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert san.get_values_for_type(x509.DNSName) == list(IDENTITY.dns_names)


async def test_a_second_replica_uses_the_secret_it_finds() -> None:
    world = World()
    first, second = Sink(), Sink()
    async with running(world.manager(first)):
        await world.run_for(3.0)
        bundle = world.bundle()
        writes_before = len(world.api.writes())
        async with running(world.manager(second)):
            await world.run_for(1.0)
            assert second.loaded == [(bundle.cert, bundle.key)]
            assert len(world.api.writes()) == writes_before  # no Secret, no patch
    assert world.bundle() == bundle


async def test_two_replicas_starting_together_share_one_ca() -> None:
    world = World()
    sinks = [Sink(), Sink()]
    async with running(*(world.manager(s) for s in sinks)):
        await world.run_for(5.0)
        bundle = world.bundle()
        # Both tried to create it; the second got 409 AlreadyExists and took the first's.
        assert world.writes("secrets") == ["create", "create"]
        assert sinks[0].loaded == sinks[1].loaded == [(bundle.cert, bundle.key)]
        assert world.crd_client_config()["caBundle"] == b64(bundle.ca_cert)


async def test_renewal_before_expiry_publishes_the_new_ca_beside_the_old() -> None:
    world = World()
    sinks = [Sink(), Sink()]
    async with running(*(world.manager(s) for s in sinks)):
        await world.run_for(5.0)
        first = world.bundle()
        world.wall_offset = dt.timedelta(hours=3)  # 4 h validity: renewed 1 h before the end
        world.clock.advance(3 * 3600.0)
        await world.run_for(5.0)
        second = world.bundle()
        assert second.ca_cert != first.ca_cert
        chain = x509.load_pem_x509_certificates(second.ca_cert)
        assert chain[1] == x509.load_pem_x509_certificates(first.ca_cert)[0]
        assert world.crd_client_config()["caBundle"] == b64(second.ca_cert)
        assert {c["caBundle"] for c in world.vwc_client_configs()} == {b64(second.ca_cert)}
        for sink in sinks:
            assert sink.loaded == [(first.cert, first.key), (second.cert, second.key)]
        # Both replicas renewed at the same moment; one update won (409 for the other), and
        # both serve the winner's certificate (above).
        assert world.writes("secrets") == ["create", "create", "update", "update"]


async def test_a_wiped_ca_bundle_is_put_back() -> None:
    world = World()
    async with running(world.manager(Sink())):
        await world.run_for(3.0)
        ca = b64(world.bundle().ca_cert)

        def wipe(crd: dict[str, Any]) -> None:
            del crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"]

        world.api.modify(CRDS, CRD, wipe)
        await world.run_for(1.0)
        assert world.crd_client_config()["caBundle"] == ca


async def test_a_secret_someone_broke_is_replaced() -> None:
    world = World()
    world.api.add(SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": SECRET, "namespace": NS}, "data": {"tls.crt": "eA=="}})
    sink = Sink()
    async with running(world.manager(sink)):
        await world.run_for(3.0)
        bundle = world.bundle()
        assert world.writes("secrets") == ["update"]
        assert sink.loaded == [(bundle.cert, bundle.key)]


async def test_a_deleted_secret_is_restored_from_what_the_replicas_serve() -> None:
    # Deleted while two replicas serve bundle A: A is written back (no new CA), so the caBundle
    # and the certificates served never disagree. A new CA here left both replicas serving a
    # certificate the API server no longer trusted ("x509: certificate signed by unknown
    # authority" for up to 2 s; found by make chaos's secret-deleted run).
    world = World()
    first, second = Sink(), Sink()
    async with running(world.manager(first), world.manager(second)):
        await world.run_for(3.0)
        before = world.bundle()
        world.api.remove(SECRETS, SECRET, namespace=NS)
        await world.run_for(3.0)
        after = world.bundle()
        assert after == before
        assert set(world.writes("secrets")) == {"create"}  # written back, nothing reissued
        assert world.crd_client_config()["caBundle"] == b64(before.ca_cert)
        assert first.loaded == second.loaded == [(before.cert, before.key)]


async def test_a_certificate_for_other_names_gets_a_new_one_from_the_same_ca() -> None:
    world = World()
    existing = issue(Identity(("old.name.svc",)), now=START, validity=dt.timedelta(hours=4),
                     ca_name="c", organization="o")
    world.api.add(SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": SECRET, "namespace": NS}, "data": existing.secret_data()})
    async with running(world.manager(Sink())):
        await world.run_for(3.0)
        bundle = world.bundle()
        assert bundle.ca_cert == existing.ca_cert
        assert bundle.cert != existing.cert


async def test_forbidden_injection_still_serves() -> None:
    world = World()
    world.api.fail(status_error(403, "Forbidden", "customresourcedefinitions is forbidden"),
                   verb="patch", resource=CRDS, times=None)
    sink = Sink()
    manager = world.manager(sink)
    async with running(manager):
        await world.run_for(3.0)
        assert manager.ready()
        assert "caBundle" not in world.crd_client_config()


async def test_url_mode_points_the_crd_at_the_process_and_creates_the_configuration() -> None:
    world = World()
    world.api.remove(VALIDATING_WEBHOOK_CONFIGURATIONS, VWC)
    identity = Identity(IDENTITY.dns_names, ("127.0.0.1",))
    async with running(world.manager(Sink(), url="https://127.0.0.1:9443", identity=identity)):
        await world.run_for(3.0)
        ca = b64(world.bundle().ca_cert)
        assert world.crd_client_config() == {"url": "https://127.0.0.1:9443/convert",
                                             "caBundle": ca}
        assert world.vwc_client_configs() == [
            {"url": f"https://127.0.0.1:9443{w.path}", "caBundle": ca}
            for w in REGISTRY.validating]


async def test_url_mode_repoints_an_existing_configuration() -> None:
    world = World()
    identity = Identity(IDENTITY.dns_names, ("127.0.0.1",))
    async with running(world.manager(Sink(), url="https://127.0.0.1:8443/", identity=identity)):
        await world.run_for(3.0)
        ca = b64(world.bundle().ca_cert)
        assert world.vwc_client_configs() == [
            {"url": f"https://127.0.0.1:8443{w.path}", "caBundle": ca}
            for w in REGISTRY.validating]


async def test_two_local_replicas_with_their_own_urls_do_not_take_the_crd_back_and_forth(
) -> None:
    # Two processes run with --webhook-url on one cluster (two local replicas can't share a
    # port): the later one to point the CRD and the configuration at itself keeps them; the
    # first warns once and leaves them (each CRD write would restart every MPIJob watch).
    world = World()
    identity = Identity(IDENTITY.dns_names, ("127.0.0.1",))
    first = world.manager(Sink(), url="https://127.0.0.1:19443", identity=identity)
    with structlog.testing.capture_logs() as logs:
        async with running(first):
            await world.run_for(3.0)
            assert world.crd_client_config()["url"] == "https://127.0.0.1:19443/convert"
            second = world.manager(Sink(), url="https://127.0.0.1:19444", identity=identity)
            async with running(second):
                await world.run_for(30.0)
    ca = b64(world.bundle().ca_cert)
    assert world.crd_client_config() == {"url": "https://127.0.0.1:19444/convert",
                                         "caBundle": ca}
    assert world.vwc_client_configs() == [
        {"url": f"https://127.0.0.1:19444{w.path}", "caBundle": ca} for w in REGISTRY.validating]
    # The first pointed each at itself once, the second once: no more writes in 30 s.
    assert world.writes("customresourcedefinitions") == ["patch", "patch"]
    assert world.writes("validatingwebhookconfigurations") == ["patch", "patch"]
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert sorted(e["object"] for e in warnings) == sorted(
        [f"crd/{CRD}", *(f"{VWC}/{w.name}" for w in REGISTRY.validating)])
    assert {(e["url"], e["ours"]) for e in warnings if e["object"] == f"crd/{CRD}"} == {
        ("https://127.0.0.1:19444/convert", "https://127.0.0.1:19443/convert")}


async def test_the_mutating_configuration_is_kept_too_when_a_defaulting_kind_runs() -> None:
    """The TrainJob defaulter's MutatingWebhookConfiguration: its caBundle injected like the
    validating one's (deploy/overlays/trainjob), or, in URL mode, created pointing here."""
    world = World()
    world.api.add(MUTATING_WEBHOOK_CONFIGURATIONS, REGISTRY.mutating_configuration(
        VWC, lambda path: {"service": {**SERVICE_REF, "path": path}}))
    async with running(world.manager(Sink(), mutating=VWC)):
        await world.run_for(3.0)
        ca = b64(world.bundle().ca_cert)
        stored = world.api.stored(MUTATING_WEBHOOK_CONFIGURATIONS, VWC)
        assert stored is not None
        assert [(w["name"], w["clientConfig"]) for w in stored["webhooks"]] == [(
            "defaulter.trainjob.trainer.kubeflow.org",
            {"service": {**SERVICE_REF, "path": "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"},
             "caBundle": ca})]
    local = World()
    identity = Identity(IDENTITY.dns_names, ("127.0.0.1",))
    async with running(local.manager(Sink(), url="https://127.0.0.1:9443", identity=identity,
                                     mutating=VWC)):
        await local.run_for(3.0)
        ca = b64(local.bundle().ca_cert)
        stored = local.api.stored(MUTATING_WEBHOOK_CONFIGURATIONS, VWC)
        assert stored is not None
        assert stored["webhooks"] == [{
            "name": "defaulter.trainjob.trainer.kubeflow.org", "admissionReviewVersions": ["v1"],
            "clientConfig": {
                "url": "https://127.0.0.1:9443/mutate-trainer-kubeflow-org-v1alpha1-trainjob",
                "caBundle": ca},
            "failurePolicy": "Fail", "matchPolicy": "Exact",
            "rules": [{"apiGroups": ["trainer.kubeflow.org"], "apiVersions": ["v1alpha1"],
                       "operations": ["CREATE", "UPDATE"], "resources": ["trainjobs"],
                       "scope": "Namespaced"}],
            "sideEffects": "None", "timeoutSeconds": 10, "reinvocationPolicy": "Never"}]
    # Without a defaulting kind, no MutatingWebhookConfiguration is read or written.
    plain = World()
    async with running(plain.manager(Sink())):
        await plain.run_for(3.0)
        assert plain.writes("mutatingwebhookconfigurations") == []
        assert [r for r in plain.api.requests
                if r.resource == MUTATING_WEBHOOK_CONFIGURATIONS] == []


def _write(directory: Path, bundle: Bundle) -> None:
    (directory / "tls.crt").write_bytes(bundle.cert)
    (directory / "tls.key").write_bytes(bundle.key)


async def test_certificate_files_are_served_and_reloaded(tmp_path: Path) -> None:
    clock = ManualClock()
    sink = Sink()
    files = CertificateFiles(str(tmp_path), sink, interval=10.0, clock=clock)
    task = asyncio.create_task(files.run())
    make: Callable[[], Bundle] = lambda: issue(  # noqa: E731
        IDENTITY, now=START, validity=dt.timedelta(hours=4), ca_name="c", organization="o")
    try:
        await asyncio.sleep(0)
        assert not files.ready()
        first = make()
        _write(tmp_path, first)
        clock.advance(10.0)
        await asyncio.sleep(0)
        assert files.ready()
        assert sink.loaded == [(first.cert, first.key)]
        (tmp_path / "tls.key").write_bytes(b"junk")
        clock.advance(10.0)
        await asyncio.sleep(0)
        assert sink.loaded == [(first.cert, first.key)]
        second = make()
        _write(tmp_path, second)
        clock.advance(10.0)
        await asyncio.sleep(0)
        assert sink.loaded == [(first.cert, first.key), (second.cert, second.key)]
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_an_unexpected_error_is_retried_not_fatal() -> None:
    world = World()

    class Flaky(Sink):
        def __init__(self) -> None:
            super().__init__()
            self.failures = 1

        def set_certificate(self, cert_pem: bytes, key_pem: bytes) -> None:
            if self.failures:
                self.failures -= 1
                raise RuntimeError("boom")
            super().set_certificate(cert_pem, key_pem)

    sink = Flaky()
    manager = world.manager(sink)
    async with running(manager):
        await world.run_for(5.0)
        assert sink.failures == 0  # it failed once, then was tried again after 0.5 s
        assert manager.ready()
        assert sink.loaded == [(world.bundle().cert, world.bundle().key)]
