"""Webhooks of ``mpi-controller run``: the conversion webhook of multi-version CRDs and the
validating (and mutating) admission webhooks of every job kind, served over HTTPS on every
replica, with their certificates.

* :mod:`.reviews`: the ConversionReview/AdmissionReview protocols (pure);
* :mod:`.registry`: what is served (:func:`default_registry`: the admissions and conversions
  every kind's plugin describes, ``mpi_controller/<kind>/plugin.py``);
* :mod:`.certs` (pure) and :mod:`.certmanager`: the CA, the serving certificate, the shared
  Secret, ``caBundle`` injection and renewal; or certificate files (cert-manager);
* :mod:`.server`: the HTTP routes (imported by :func:`build_webhook` only), and
  :mod:`.metrics` their metrics.

:func:`build_webhook` returns the Manager runnables for :class:`WebhookOptions`.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.kube.timefmt import utcnow
from mpi_controller.runtime.clock import Clock
from mpi_controller.runtime.kubeclient import KubeClient
from mpi_controller.runtime.manager import Runnable
from mpi_controller.webhook import metrics as _metrics  # noqa: F401  (registered, served or not)
from mpi_controller.webhook.registry import WebhookRegistry, default_registry

if TYPE_CHECKING:  # the certificates' modules load cryptography (~8 MB of RSS): imported when
    # the webhook is built
    from mpi_controller.webhook.certs import Identity

__all__ = ["WebhookOptions", "build_webhook", "default_registry", "webhook_identity"]

TEN_YEARS = dt.timedelta(days=3650)


@dataclass(frozen=True)
class WebhookOptions:
    """The ``--webhook*`` flags (see options.py and docs/running.md)."""

    mode: str = "auto"
    port: int = 9443
    service_name: str = "mpi-operator-webhook"
    secret_name: str = "mpi-operator-webhook-cert"
    configuration_name: str = ""
    namespace: str = ""
    url: str = ""
    cert_dir: str = ""
    cert_validity: dt.timedelta = TEN_YEARS

    def enabled(self, *, in_pod: bool) -> bool:
        """``on``; ``off``; ``auto``: in a pod, or when ``url`` or ``cert_dir`` is given."""
        if self.mode == "auto":
            return in_pod or bool(self.url or self.cert_dir)
        return self.mode == "on"

    @property
    def configuration(self) -> str:
        """The ValidatingWebhookConfiguration (and the MutatingWebhookConfiguration of the
        same name, with a defaulting kind): ``--webhook-configuration-name``, else
        ``mpi-operator`` (deploy/'s), or ``mpi-operator-local`` with ``--webhook-url`` (which the
        controller creates itself, so that it never rewrites the deployed one)."""
        return self.configuration_name or ("mpi-operator-local" if self.url else "mpi-operator")

    def namespace_or(self, fallback: str) -> str:
        """The namespace of the Secret and the Service: ``--webhook-namespace``, else
        ``$POD_NAMESPACE``, else ``fallback`` (the lock namespace)."""
        return self.namespace or os.environ.get("POD_NAMESPACE", "") or fallback


def webhook_identity(opts: WebhookOptions, namespace: str) -> Identity:
    """The names the serving certificate needs: ``<service>.<namespace>.svc``, and the host of
    ``--webhook-url``."""
    from mpi_controller.webhook.certs import Identity

    dns = [f"{opts.service_name}.{namespace}.svc"]
    ips: list[str] = []
    host = urllib.parse.urlsplit(opts.url).hostname if opts.url else None
    if host:
        try:
            ips.append(str(ipaddress.ip_address(host)))
        except ValueError:
            dns.append(host)
    return Identity(tuple(dns), tuple(ips))


def build_webhook(client: KubeClient, opts: WebhookOptions, *, namespace: str,
                  registry: WebhookRegistry | None = None, clock: Clock | None = None,
                  wall: Callable[[], dt.datetime] = utcnow,
                  defaulting: bool = False) -> list[Runnable]:
    """The HTTPS server and its certificate source, as every-replica runnables. Every
    registered webhook is served; the MutatingWebhookConfiguration of :attr:`WebhookOptions.
    configuration`'s name is kept only with ``defaulting`` (a kind with a defaulter is
    enabled: its overlay installs that configuration and the rule to read it)."""
    from mpi_controller.runtime.https import HttpsServer
    from mpi_controller.webhook.certmanager import CertConfig, CertificateFiles, CertificateManager
    from mpi_controller.webhook.server import MAX_BODY, webhook_routes

    registry = registry or default_registry()
    host = urllib.parse.urlsplit(opts.url).hostname if opts.url else None
    async def lookup(resource: Resource, name: str, namespace: str | None) -> Obj:
        return await client.get(resource, name, namespace=namespace)

    server = HttpsServer(host or "0.0.0.0", opts.port, webhook_routes(registry, lookup),
                         name="webhook", max_body=MAX_BODY)
    source: Runnable
    if opts.cert_dir:
        source = CertificateFiles(opts.cert_dir, server, clock=clock)
    else:
        config = CertConfig(
            namespace=namespace, secret_name=opts.secret_name,
            identity=webhook_identity(opts, namespace), validity=opts.cert_validity,
            crds=tuple(registry.conversion_crds),
            webhook_configuration=opts.configuration if registry.validating else "",
            mutating_configuration=(opts.configuration if defaulting and registry.mutating
                                    else ""),
            url=opts.url)
        source = CertificateManager(client, config, server, registry=registry, clock=clock,
                                    wall=wall)
    return [source, server]
