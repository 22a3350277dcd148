"""OpenAPI v3 → structural CRD schema, the way controller-gen writes it.

The pod template schema of a job CRD is not hand-written: it is
io.k8s.api.core.v1.PodTemplateSpec taken from a real API server's OpenAPI v3 document
(``/openapi/v3/api/v1``), converted here:

* ``$ref`` and single-entry ``allOf: [{$ref}]`` are inlined (sibling keys such as the
  description win);
* extensions CRDs disallow (``x-kubernetes-patch-strategy``, ``x-kubernetes-patch-merge-key``,
  ``x-kubernetes-group-version-kind``, ``x-kubernetes-unions``) are dropped; ``list-type``,
  ``list-map-keys`` and ``map-type`` are kept;
* ``enum`` lists of core types are dropped (controller-gen does not emit them), as are empty
  object/array defaults (``default: {}``) and the zero-value defaults the server publishes for
  required fields; other scalar defaults are kept (e.g. ``protocol: TCP``, which the
  ``containerPort, protocol`` list-map key needs);
* ``Quantity`` and ``IntOrString`` become controller-gen's ``anyOf: [integer, string]`` with
  ``x-kubernetes-int-or-string`` (and the quantity pattern);
* the embedded ``ObjectMeta`` becomes controller-gen's subset (labels, annotations, name,
  namespace, finalizers).

Also the small schema builders the job schemas share (:func:`integer`, :func:`string`,
:func:`date_time`, :func:`quantity`, :func:`label_selector`, :func:`resource_schema`).
"""

from __future__ import annotations

import copy
from typing import Any

ROOT = "io.k8s.api.core.v1.PodTemplateSpec"
REF_PREFIX = "#/components/schemas/"
DROPPED_KEYS = {
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-group-version-kind",
    "x-kubernetes-unions",
    "enum",
}
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
INT_OR_STRING = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}
SPECIAL: dict[str, dict[str, Any]] = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {**INT_OR_STRING, "pattern": QUANTITY_PATTERN},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": dict(INT_OR_STRING),
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
        "type": "object",
        "properties": {
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "finalizers": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "name": {"type": "string"},
            "namespace": {"type": "string"},
        },
    },
}



class Resolver:
    """Inline ``$ref``s of one OpenAPI v3 document's component schemas."""

    def __init__(self, schemas: dict[str, Any]) -> None:
        self.schemas = schemas

    def ref(self, ref: str, stack: tuple[str, ...]) -> dict[str, Any]:
        name = ref.removeprefix(REF_PREFIX)
        if name in SPECIAL:
            return copy.deepcopy(SPECIAL[name])
        if name in stack:
            raise ValueError(f"recursive schema {' -> '.join((*stack, name))}")
        if name not in self.schemas:
            raise KeyError(f"unknown schema {name}")
        converted: dict[str, Any] = self.convert(self.schemas[name], (*stack, name))
        return converted

    def convert(self, node: Any, stack: tuple[str, ...] = ()) -> Any:
        if isinstance(node, list):
            return [self.convert(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        node = dict(node)
        base: dict[str, Any] = {}
        if "$ref" in node:
            base = self.ref(node.pop("$ref"), stack)
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
            node.pop("allOf")
            base = self.ref(all_of[0]["$ref"], stack)
        out = dict(base)
        for key, value in node.items():
            if key in DROPPED_KEYS:
                continue
            if key == "default" and value in ({}, []):
                continue
            if key == "properties":
                out[key] = {k: self.convert(v, stack) for k, v in value.items()}
            else:
                out[key] = self.convert(value, stack)
        _drop_required_defaults(out)
        if out.get("format") == "int-or-string":  # IntOrString written inline
            out = {k: v for k, v in out.items() if k not in ("format", "oneOf", "type")}
            out.update(copy.deepcopy(INT_OR_STRING))
        return out


def _drop_required_defaults(schema: dict[str, Any]) -> None:
    """Drop the zero-value defaults the server publishes for required fields (controller-gen
    emits only ``+default`` markers; a default would also let a missing required field pass),
    and sort ``required`` as controller-gen does."""
    required = schema.get("required")
    if not isinstance(required, list):
        return
    schema["required"] = sorted(required)
    for name in required:
        prop = schema.get("properties", {}).get(name)
        if isinstance(prop, dict):
            prop.pop("default", None)


def pod_template_schema(openapi: dict[str, Any]) -> dict[str, Any]:
    """The structural schema of io.k8s.api.core.v1.PodTemplateSpec."""
    return component_schema(openapi, ROOT)


def component_schema(openapi: dict[str, Any], name: str) -> dict[str, Any]:
    """The structural schema of the component ``name`` (e.g.
    ``io.k8s.api.autoscaling.v2.MetricSpec``)."""
    schemas = openapi["components"]["schemas"]
    converted: dict[str, Any] = Resolver(schemas).convert(schemas[name], (name,))
    return converted


def integer(fmt: str, description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "format": fmt, "description": description, **extra}


def string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def date_time(description: str) -> dict[str, Any]:
    return {"type": "string", "format": "date-time", "description": description}


def quantity() -> dict[str, Any]:
    """A ``resource.Quantity`` (integer or string matching the quantity pattern)."""
    return {**INT_OR_STRING, "pattern": QUANTITY_PATTERN}


def label_selector(description: str) -> dict[str, Any]:
    """A ``metav1.LabelSelector`` (``matchExpressions``, ``matchLabels``), atomic."""
    return {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "description": description,
        "properties": {
            "matchExpressions": {
                "type": "array",
                "x-kubernetes-list-type": "atomic",
                "items": {
                    "type": "object",
                    "required": ["key", "operator"],
                    "properties": {
                        "key": {"type": "string"},
                        "operator": {"type": "string"},
                        "values": {"type": "array", "items": {"type": "string"},
                                   "x-kubernetes-list-type": "atomic"},
                    },
                },
            },
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }


def resource_schema(description: str, spec: dict[str, Any],
                    status: dict[str, Any]) -> dict[str, Any]:
    """A custom resource's root schema: ``apiVersion``, ``kind``, ``metadata``, its ``spec``
    and ``status``."""
    return {
        "type": "object",
        "description": description,
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
    }
