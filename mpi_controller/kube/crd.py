"""A CustomResourceDefinition document from a kind's description: names, versions (each with
its schema, subresources and printer columns; one of them the storage version) and an
optional ``conversion`` stanza. A version with no subresources or no printer columns
(``None``) has no such key, as controller-gen writes a kind without them; a CRD is
``Namespaced`` unless its ``scope`` says ``Cluster``.

A version's schema builder gets the PodTemplateSpec schema, then the schemas of the OpenAPI
components it names in ``components`` (e.g. ``io.k8s.api.autoscaling.v2.MetricSpec``), in
that order."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Schema = Callable[..., dict[str, Any]]
"""Builds a version's ``openAPIV3Schema`` from the PodTemplateSpec schema (and the schemas of
its ``components``)."""


@dataclass(frozen=True)
class Version:
    name: str
    schema: Schema
    printer_columns: list[dict[str, Any]] | None
    storage: bool = False
    served: bool = True
    subresources: dict[str, Any] | None = field(default_factory=lambda: {"status": {}})
    components: tuple[str, ...] = ()


@dataclass(frozen=True)
class CRD:
    group: str
    kind: str
    plural: str
    versions: tuple[Version, ...]
    conversion: dict[str, Any] | None = None
    short_names: tuple[str, ...] = ()
    scope: str = "Namespaced"

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def file_name(self) -> str:
        return f"{self.group}_{self.plural}.yaml"

    def document(self, template: dict[str, Any],
                 components: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """The CRD, its versions' schemas built from ``template`` (PodTemplateSpec) and the
        converted ``components`` they name."""
        found = components or {}
        if sum(v.storage for v in self.versions) != 1:
            raise ValueError(f"{self.name}: exactly one storage version is needed")
        spec: dict[str, Any] = {
            "group": self.group,
            "names": {
                "kind": self.kind,
                "listKind": f"{self.kind}List",
                "plural": self.plural,
                "singular": self.kind.lower(),
                **({"shortNames": list(self.short_names)} if self.short_names else {}),
            },
            "scope": self.scope,
            "versions": [
                {
                    "name": v.name,
                    "served": v.served,
                    "storage": v.storage,
                    **({} if v.subresources is None else {"subresources": v.subresources}),
                    **({} if v.printer_columns is None
                       else {"additionalPrinterColumns": v.printer_columns}),
                    "schema": {"openAPIV3Schema": v.schema(
                        template, *(found[name] for name in v.components))},
                }
                for v in self.versions
            ],
        }
        if self.conversion is not None:
            spec["conversion"] = self.conversion
        return {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": self.name},
            "spec": spec,
        }
