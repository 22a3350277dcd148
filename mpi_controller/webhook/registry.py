"""What the webhook server serves: the validating and mutating webhooks and the conversions of
every job kind, registered in one :class:`WebhookRegistry`. Pure.

:func:`default_registry` registers every kind's webhooks; a kind adds its own with one line
(``registry.add_validating(webhook)`` for each :class:`~.reviews.ValidatingWebhook`,
``registry.add_conversion(...)`` for a CRD with several versions). From the registry come the
server's routes (:mod:`.server`), the CRDs whose conversion ``caBundle`` the certificate
manager keeps (:attr:`WebhookRegistry.conversion_crds`) and the ValidatingWebhookConfiguration
manifest (:meth:`WebhookRegistry.validating_configuration`; ``deploy/`` has it, checked by a
test). A kind's :class:`~mpi_controller.engine.plugin.Defaulting` becomes a
:class:`~.reviews.MutatingWebhook` (``now`` the wall clock's time at each request), in the
MutatingWebhookConfiguration of :meth:`WebhookRegistry.mutating_configuration`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from mpi_controller.engine.plugin import Admission, Defaulting, KindPlugin
from mpi_controller.kinds import plugins
from mpi_controller.kube.timefmt import format_time, utcnow
from mpi_controller.webhook.reviews import (
    AdmissionWebhook,
    AsyncValidator,
    Converter,
    Lookup,
    MutatingWebhook,
    Mutator,
    ValidatingWebhook,
    Validator,
    Verdict,
)

__all__ = ["CONVERT_PATH", "WebhookRegistry", "default_registry", "mutating_webhook",
           "validating_webhook"]

CONVERT_PATH: Final = "/convert"


class WebhookRegistry:
    def __init__(self) -> None:
        self.validating: list[ValidatingWebhook] = []
        self.mutating: list[MutatingWebhook] = []
        self.converters: dict[tuple[str, str], Converter] = {}
        self.conversion_crds: list[str] = []

    def add_validating(self, webhook: ValidatingWebhook) -> None:
        """Serve ``webhook`` at its path (paths and names must be unique)."""
        self._check_unique(webhook)
        self.validating.append(webhook)

    def add_mutating(self, webhook: MutatingWebhook) -> None:
        """Serve ``webhook`` at its path (paths and names must be unique)."""
        self._check_unique(webhook)
        self.mutating.append(webhook)

    @property
    def admissions(self) -> list[AdmissionWebhook]:
        """Every validating and mutating webhook."""
        return [*self.validating, *self.mutating]

    def _check_unique(self, webhook: AdmissionWebhook) -> None:
        for other in self.admissions:
            if other.path == webhook.path or other.name == webhook.name:
                raise ValueError(f"webhook {webhook.name} at {webhook.path} is already "
                                 f"registered ({other.name} at {other.path})")

    def add_conversion(self, crd_name: str, group: str, kind: str, converter: Converter) -> None:
        """Convert ``group`` ``kind`` objects at ``/convert`` for CRD ``crd_name``."""
        if (group, kind) in self.converters:
            raise ValueError(f"a conversion of {group} {kind} is already registered")
        self.converters[(group, kind)] = converter
        self.conversion_crds.append(crd_name)

    def validating_configuration(
            self, name: str, client_config: Callable[[str], Mapping[str, Any]],
            labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The ValidatingWebhookConfiguration ``name`` of every registered validating
        webhook; ``client_config(path)`` gives each one's ``clientConfig``."""
        return _configuration("Validating", name, self.validating, client_config, labels)

    def mutating_configuration(
            self, name: str, client_config: Callable[[str], Mapping[str, Any]],
            labels: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The MutatingWebhookConfiguration ``name`` of every registered mutating webhook."""
        return _configuration("Mutating", name, self.mutating, client_config, labels)


def _configuration(kind: str, name: str,
                   webhooks: Sequence[AdmissionWebhook],
                   client_config: Callable[[str], Mapping[str, Any]],
                   labels: Mapping[str, str] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": f"{kind}WebhookConfiguration",
        "metadata": meta,
        "webhooks": [w.configuration_entry(client_config(w.path)) for w in webhooks],
    }


def _validator(admission: Admission) -> Validator:
    def validate(obj: Mapping[str, Any], old: Mapping[str, Any] | None,
                 operation: str) -> Verdict:
        if admission.judge is None:
            return Verdict(errors=[f"{admission.name} reads the API: it has no pure judge"])
        errors, warnings = admission.judge(obj, old)
        return Verdict(errors=errors, warnings=warnings)
    return validate


def _async_validator(admission: Admission) -> AsyncValidator | None:
    judge = admission.lookup_judge
    if judge is None:
        return None

    async def validate(lookup: Lookup, obj: Mapping[str, Any], old: Mapping[str, Any] | None,
                       operation: str) -> Verdict:
        errors, warnings = await judge(lookup, obj, old)
        return Verdict(errors=errors, warnings=warnings)
    return validate


def validating_webhook(kind: KindPlugin, admission: Admission) -> ValidatingWebhook:
    """The webhook that serves one admission of ``kind``."""
    return ValidatingWebhook(
        name=admission.name, path=admission.path, group=kind.group, version=admission.version,
        resource=admission.resource or kind.plural, kind=admission.kind or kind.kind,
        validate=_validator(admission), failure_policy=admission.failure_policy,
        scope=admission.scope, validate_async=_async_validator(admission))


def _mutator(defaulting: Defaulting, wall: Callable[[], dt.datetime]) -> Mutator:
    def mutate(obj: Mapping[str, Any], old: Mapping[str, Any] | None,
               operation: str) -> dict[str, Any]:
        return defaulting.default(obj, old, format_time(wall()))
    return mutate


def mutating_webhook(kind: KindPlugin, defaulting: Defaulting,
                     wall: Callable[[], dt.datetime] = utcnow) -> MutatingWebhook:
    """The webhook that serves one defaulting of ``kind``; ``wall`` is its clock."""
    return MutatingWebhook(
        name=defaulting.name, path=defaulting.path, group=kind.group,
        version=defaulting.version, resource=defaulting.resource or kind.plural,
        kind=defaulting.kind or kind.kind, mutate=_mutator(defaulting, wall),
        failure_policy=defaulting.failure_policy, scope=defaulting.scope)


def default_registry(kinds: Iterable[KindPlugin] | None = None,
                     wall: Callable[[], dt.datetime] = utcnow) -> WebhookRegistry:
    """Every job kind's webhooks (module doc), or those of ``kinds``."""
    registry = WebhookRegistry()
    for kind in plugins() if kinds is None else kinds:
        if kind.convert is not None:
            registry.add_conversion(kind.crd_name, kind.group, kind.kind, kind.convert)
        for admission in kind.admission:
            registry.add_validating(validating_webhook(kind, admission))
        for defaulting in kind.defaulting:
            registry.add_mutating(mutating_webhook(kind, defaulting, wall))
    return registry
