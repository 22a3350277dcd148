"""Certificate upkeep for the webhook server, on every replica: the controller's own CA (the
default), or certificate files provided from outside (cert-manager).

:class:`CertificateManager` (a Manager :class:`~mpi_controller.runtime.manager.Runnable`) does
what open-policy-agent's cert-controller does for training-operator v1.8+:

* **One Secret, shared.** The CA and the serving certificate live in one Secret in the
  controller's namespace (``ca.crt``, ``ca.key``, ``tls.crt``, ``tls.key``; see :mod:`.certs`).
  A replica that finds a valid Secret uses it. When it is missing, unreadable, names the wrong
  hosts or nears expiry, a replica issues a new bundle and writes it with the Secret's
  ``resourceVersion``; a replica that loses that race (409) takes the winner's bundle. So all
  replicas serve certificates of one CA, and none overwrites another's ``caBundle``.
* **Injection.** The CA (``ca.crt``) is kept in the ``caBundle`` of each CRD's conversion
  webhook and of every webhook in the ValidatingWebhookConfiguration (and in the
  MutatingWebhookConfiguration, when ``mutating_configuration`` names one: an enabled kind
  has a defaulter); a change made by someone else (a re-applied manifest) is put right as
  soon as the informer sees it. With ``url`` (the API server reaches this process directly,
  e.g. the local cluster on 127.0.0.1) the ``clientConfig`` is also pointed at
  ``<url><path>`` instead of the Service, and a missing configuration is created from the
  registry.
* **Renewal** before expiry (:func:`.certs.lookahead`). A new CA is published next to the old
  one (``ca.crt`` lists both while the old one is valid); a replica waits ``settle`` seconds
  after a ``caBundle`` change before it serves a certificate of a new CA, so the API server
  trusts it before it sees it.
* **Readiness**: :meth:`ready` once a certificate is being served.

Writes: create/update of the Secret; merge patches of the CRDs' ``spec.conversion.webhook.
clientConfig``; JSON patches of the configuration's ``webhooks[*].clientConfig``, with a
``resourceVersion`` test, so a concurrent change is never overwritten. An error that is not a
conflict (forbidden, API server away) is logged and retried with backoff; the server keeps
serving the certificate it has.

:class:`CertificateFiles` instead serves ``tls.crt``/``tls.key`` from a directory (a mounted
cert-manager Secret), reloading them when they change; cert-manager's CA injector keeps the
``caBundle`` fields.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import structlog

from mpi_controller.kube.jsonvalue import as_dict, as_list, as_record
from mpi_controller.kube.resources import SECRETS, Resource
from mpi_controller.kube.timefmt import utcnow
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.informer import SharedIndexInformer
from mpi_controller.runtime.kubeclient import KubeClient, PatchType
from mpi_controller.runtime.reflector import ResourceListerWatcher
from mpi_controller.webhook.certs import Bundle, CertificateError, Identity, assess, issue
from mpi_controller.webhook.registry import CONVERT_PATH, WebhookRegistry

__all__ = [
    "CRDS",
    "MUTATING_WEBHOOK_CONFIGURATIONS",
    "VALIDATING_WEBHOOK_CONFIGURATIONS",
    "CertConfig",
    "CertificateFiles",
    "CertificateManager",
    "CertificateSink",
]

_log = structlog.get_logger(__name__)

CRDS: Final = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                       namespaced=False, kind="CustomResourceDefinition")
VALIDATING_WEBHOOK_CONFIGURATIONS: Final = Resource(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", namespaced=False,
    kind="ValidatingWebhookConfiguration")
MUTATING_WEBHOOK_CONFIGURATIONS: Final = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", namespaced=False,
    kind="MutatingWebhookConfiguration")
FIELD_MANAGER: Final = "mpi-controller-certs"
_BACKOFF = (0.5, 30.0)


class CertificateSink(Protocol):
    """Where certificates go: :class:`~mpi_controller.runtime.https.HttpsServer`."""

    def set_certificate(self, cert_pem: bytes, key_pem: bytes) -> None: ...


@dataclass(frozen=True)
class CertConfig:
    namespace: str
    secret_name: str
    identity: Identity
    validity: dt.timedelta
    crds: tuple[str, ...] = ()
    webhook_configuration: str = ""
    mutating_configuration: str = ""
    url: str = ""
    ca_name: str = "mpi-operator-ca"
    organization: str = "mpi-operator"
    settle: float = 2.0
    recheck: float = 600.0


def _slim_crd(obj: dict[str, Any]) -> dict[str, Any]:
    """What the cache keeps of a CRD: its name, resourceVersion and conversion stanza."""
    meta = as_dict(obj.get("metadata"))
    return {"metadata": {"name": meta.get("name"), "resourceVersion": meta.get("resourceVersion")},
            "spec": {"conversion": as_record(obj.get("spec")).get("conversion")}}


def _without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


def _path_of(client_config: Mapping[str, Any], default: str) -> str:
    service = as_dict(client_config.get("service"))
    if isinstance(service.get("path"), str):
        return str(service["path"])
    url = client_config.get("url")
    if isinstance(url, str):
        return urllib.parse.urlsplit(url).path or default
    return default


class CertificateManager:
    """Keeps the webhook certificates and their CA bundles (module docstring)."""

    def __init__(self, client: KubeClient, config: CertConfig, sink: CertificateSink, *,
                 registry: WebhookRegistry | None = None, clock: Clock | None = None,
                 wall: Callable[[], dt.datetime] = utcnow) -> None:
        self.client = client
        self.config = config
        self.sink = sink
        self.registry = registry
        self._clock: Clock = clock or LoopClock()
        self._wall = wall
        self._changed = asyncio.Event()
        self._bundle: Bundle | None = None  # the bundle this replica serves
        self._warned: set[str] = set()
        self._pointed: set[str] = set()  # targets this process has pointed at its --webhook-url
        self.secret = self._informer(SECRETS, config.secret_name, config.namespace)
        self.crds = [self._informer(CRDS, name, transform=_slim_crd) for name in config.crds]
        self.configuration = (self._informer(VALIDATING_WEBHOOK_CONFIGURATIONS,
                                             config.webhook_configuration)
                              if config.webhook_configuration else None)
        self.mutating = (self._informer(MUTATING_WEBHOOK_CONFIGURATIONS,
                                        config.mutating_configuration)
                         if config.mutating_configuration else None)

    def _informer(self, resource: Resource, name: str, namespace: str | None = None,
                  transform: Callable[[dict[str, Any]], dict[str, Any]] = _without_managed_fields,
                  ) -> SharedIndexInformer:
        lw = ResourceListerWatcher(self.client, resource, namespace=namespace,
                                   field_selector=f"metadata.name={name}")
        informer = SharedIndexInformer(lw, transform=transform, clock=self._clock,
                                       resource=resource)
        wake = self._changed.set
        informer.add_event_handler(lambda _: wake(), lambda _o, _n: wake(), lambda _: wake())
        return informer

    @property
    def informers(self) -> list[SharedIndexInformer]:
        extra = [i for i in (self.configuration, self.mutating) if i is not None]
        return [self.secret, *self.crds, *extra]

    def ready(self) -> bool:
        return self._bundle is not None

    # -- running ---------------------------------------------------------------------------

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            for informer in self.informers:
                group.create_task(informer.run())
            while not all(i.has_synced() for i in self.informers):
                await self._clock.sleep(0.1)
            await self._loop()

    async def _loop(self) -> None:
        delay = _BACKOFF[0]
        while True:
            self._changed.clear()
            try:
                wait = await self.reconcile()
                delay = _BACKOFF[0]
            except ApiError as err:
                _log.warning("webhook certificates: API error; retrying", error=str(err),
                             delay=delay)
                wait, delay = delay, min(delay * 2, _BACKOFF[1])
            except Exception:  # a bug must not take the webhook (and the controller) down
                _log.exception("webhook certificates: unexpected error; retrying", delay=delay)
                wait, delay = delay, min(delay * 2, _BACKOFF[1])
            await self._wait(wait)

    async def _wait(self, seconds: float) -> None:
        handle = self._clock.call_at(self._clock.now() + seconds, self._changed.set)
        try:
            await self._changed.wait()
        finally:
            handle.cancel()

    # -- one pass --------------------------------------------------------------------------

    def _cached(self, informer: SharedIndexInformer) -> dict[str, Any] | None:
        items = informer.indexer.list()
        return items[0] if items else None

    async def reconcile(self) -> float:
        """Bring the Secret, the CA bundles and the served certificate in line; returns the
        seconds until the next check (renewal time, capped by ``recheck``)."""
        cfg = self.config
        secret = self._cached(self.secret)
        bundle: Bundle | None
        try:
            bundle = Bundle.from_secret_data(secret.get("data")) if secret else None
        except CertificateError as err:
            _log.warning("webhook certificates: the Secret cannot be used", reason=str(err))
            bundle = None
        now = self._wall()
        # The Secret deleted (or made unusable) while this replica serves a bundle: that bundle
        # stands in for it, so the replicas and the API server keep trusting the same CA. A new
        # CA issued instead would leave every replica serving a certificate the caBundle no
        # longer lists until each reloads.
        restoring = bundle is None and self._bundle is not None
        if restoring:
            bundle = self._bundle
        verdict = assess(bundle, cfg.identity, now=now, validity=cfg.validity)
        if verdict.action != "keep" or restoring:
            fresh = bundle if verdict.action == "keep" and bundle is not None else issue(
                cfg.identity, now=now, validity=cfg.validity, ca_name=cfg.ca_name,
                organization=cfg.organization, previous=bundle,
                reuse_ca=bundle if verdict.action == "renew-serving" else None)
            if not await self._write_secret(secret, fresh):
                return 1.0  # another replica wrote it first: its Secret is on the way
            _log.info("webhook certificates restored" if fresh is bundle else
                      "webhook certificates issued", action=verdict.action,
                      reason=verdict.reason, secret=f"{cfg.namespace}/{cfg.secret_name}")
            bundle = fresh
            verdict = assess(bundle, cfg.identity, now=now, validity=cfg.validity)
        assert bundle is not None
        injected = await self._inject(bundle.ca_cert)
        served = self._bundle
        if served is None or (served.cert, served.key) != (bundle.cert, bundle.key):
            if injected or (served is not None and served.ca_cert != bundle.ca_cert):
                await self._clock.sleep(cfg.settle)
            self.sink.set_certificate(bundle.cert, bundle.key)
            self._bundle = bundle
            _log.info("webhook serving certificate loaded")
        renew_at = verdict.renew_at or now
        return max(0.0, min(cfg.recheck, (renew_at - now).total_seconds()))

    async def _write_secret(self, secret: dict[str, Any] | None, bundle: Bundle) -> bool:
        """Create or update the Secret; False when another writer got there first."""
        cfg = self.config
        try:
            if secret is None:
                await self.client.create(SECRETS, {
                    "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                    "metadata": {"name": cfg.secret_name, "namespace": cfg.namespace,
                                 "labels": {"app.kubernetes.io/name": "mpi-operator",
                                            "app.kubernetes.io/component": "webhook"}},
                    "data": bundle.secret_data()}, namespace=cfg.namespace,
                    field_manager=FIELD_MANAGER)
            else:
                await self.client.update(SECRETS, {**secret, "data": bundle.secret_data()},
                                         namespace=cfg.namespace, field_manager=FIELD_MANAGER)
        except ApiError as err:
            if err.is_conflict() or err.is_already_exists():
                _log.info("webhook certificates: another replica wrote the Secret first")
                return False
            raise
        return True

    # -- CA bundles ------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return self.config.url.rstrip("/") + path

    def _desired_client_config(self, target: str, current: Mapping[str, Any], ca: str,
                               path: str) -> dict[str, Any] | None:
        """The changes ``current`` (of ``target``, a CRD or one webhook of a configuration)
        needs (``None``: none). With ``--webhook-url`` the target is pointed at this process,
        unless another process has pointed it elsewhere since this one did: two local replicas
        with their own URLs would otherwise take it back and forth without end (each write of
        a CRD restarts its watches), so the later one keeps it and this one warns, once."""
        change: dict[str, Any] = {}
        if current.get("caBundle") != ca:
            change["caBundle"] = ca
        if self.config.url:
            mine, there = self._url(path), current.get("url")
            if there and there != mine and target in self._pointed:
                self._warn_once(f"displaced {target}", "webhook: another process points this "
                                "at its own --webhook-url; left to it (run one of the two with "
                                "--webhooks off)", object=target, url=there, ours=mine)
                return change or None
            self._pointed.add(target)
            if there != mine:
                change["url"] = mine
            if "service" in current:
                change["service"] = None
        return change or None

    def _warn_once(self, key: str, message: str, **kw: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            _log.warning(message, **kw)

    async def _patch(self, resource: Resource, name: str, body: Any,
                     patch_type: PatchType) -> bool:
        try:
            await self.client.patch(resource, name, body, patch_type=patch_type,
                                    field_manager=FIELD_MANAGER)
        except ApiError as err:
            if err.is_conflict() or err.is_not_found() or err.status == 422:
                return False  # changed meanwhile (a failed test op is 422): the informer tells
            if err.is_forbidden():
                self._warn_once(f"forbidden {name}", "webhook certificates: cannot inject the "
                                "CA (forbidden)", object=name, error=err.message)
                return False
            raise
        _log.info("webhook CA bundle injected", object=name)
        return True

    async def _inject(self, ca_pem: bytes) -> bool:
        """Keep ``ca_pem`` in every target's caBundle; True if a patch was made."""
        ca = base64.b64encode(ca_pem).decode()
        changed = False
        for name, informer in zip(self.config.crds, self.crds, strict=True):
            changed |= await self._inject_crd(name, self._cached(informer), ca)
        if self.configuration is not None:
            changed |= await self._inject_configuration(
                VALIDATING_WEBHOOK_CONFIGURATIONS, self.config.webhook_configuration,
                self._cached(self.configuration), ca)
        if self.mutating is not None:
            changed |= await self._inject_configuration(
                MUTATING_WEBHOOK_CONFIGURATIONS, self.config.mutating_configuration,
                self._cached(self.mutating), ca)
        return changed

    async def _inject_crd(self, name: str, crd: dict[str, Any] | None, ca: str) -> bool:
        if crd is None:
            self._warn_once(f"crd {name}", "webhook certificates: CRD not found", crd=name)
            return False
        conversion = as_dict(as_record(crd.get("spec")).get("conversion"))
        if conversion.get("strategy") != "Webhook":
            self._warn_once(f"strategy {name}", "webhook certificates: the CRD does not use "
                            "the conversion webhook", crd=name)
            return False
        current = as_dict(as_record(conversion.get("webhook")).get("clientConfig"))
        change = self._desired_client_config(f"crd/{name}", current, ca,
                                             _path_of(current, CONVERT_PATH))
        if change is None:
            return False
        body = {"metadata": {"resourceVersion": crd["metadata"]["resourceVersion"]},
                "spec": {"conversion": {"webhook": {"clientConfig": change}}}}
        return await self._patch(CRDS, name, body, "merge")

    def _paths(self) -> dict[str, str]:
        if self.registry is None:
            return {}
        return {w.name: w.path for w in self.registry.admissions}

    def _configuration_body(self, resource: Resource, name: str, ca: str) -> dict[str, Any]:
        assert self.registry is not None
        make = (self.registry.mutating_configuration
                if resource is MUTATING_WEBHOOK_CONFIGURATIONS
                else self.registry.validating_configuration)
        return make(name, lambda path: {"url": self._url(path), "caBundle": ca})

    async def _inject_configuration(self, resource: Resource, name: str,
                                    vwc: dict[str, Any] | None, ca: str) -> bool:
        if vwc is None:
            if not (self.config.url and self.registry is not None):
                self._warn_once(f"{resource.kind} {name}",
                                f"webhook certificates: {resource.kind} not found", name=name)
                return False
            try:
                await self.client.create(resource, self._configuration_body(resource, name, ca),
                                         field_manager=FIELD_MANAGER)
            except ApiError as err:
                if err.is_already_exists():
                    return False
                raise
            _log.info(f"{resource.kind} created", name=name, url=self.config.url)
            return True
        ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/resourceVersion",
                                      "value": vwc["metadata"]["resourceVersion"]}]
        paths = self._paths()
        for i, webhook in enumerate(as_list(vwc.get("webhooks"))):
            current = as_dict(as_record(webhook).get("clientConfig"))
            hook = str(as_record(webhook).get("name", i))
            path = paths.get(hook, _path_of(current, "/"))
            change = self._desired_client_config(f"{name}/{hook}", current, ca, path) or {}
            for key, value in change.items():
                where = f"/webhooks/{i}/clientConfig/{key}"
                ops.append({"op": "remove", "path": where} if value is None
                           else {"op": "add", "path": where, "value": value})
        if len(ops) == 1:
            return False
        return await self._patch(resource, name, ops, "json")


class CertificateFiles:
    """Serves ``tls.crt``/``tls.key`` from ``directory`` (e.g. a mounted cert-manager Secret),
    reloading them when their content changes (checked every ``interval`` seconds)."""

    def __init__(self, directory: str, sink: CertificateSink, *, interval: float = 10.0,
                 clock: Clock | None = None) -> None:
        self.directory = Path(directory)
        self.sink = sink
        self.interval = interval
        self._clock: Clock = clock or LoopClock()
        self._loaded: tuple[bytes, bytes] | None = None

    def ready(self) -> bool:
        return self._loaded is not None

    def load(self) -> bool:
        """Load the files if they changed; False when they cannot be used (logged)."""
        try:
            pair = ((self.directory / "tls.crt").read_bytes(),
                    (self.directory / "tls.key").read_bytes())
        except OSError as err:
            _log.warning("webhook certificate files cannot be read", error=str(err))
            return False
        if pair == self._loaded:
            return True
        try:
            self.sink.set_certificate(*pair)
        except Exception as err:  # ssl.SSLError, or a malformed file: keep the previous one
            _log.warning("webhook certificate files cannot be used", error=str(err))
            return False
        self._loaded = pair
        _log.info("webhook certificate loaded from files", directory=str(self.directory))
        return True

    async def run(self) -> None:
        while True:
            self.load()
            await self._clock.sleep(self.interval)
