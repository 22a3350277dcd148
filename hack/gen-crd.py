#!/usr/bin/env python3
"""Generate deploy/crd/kubeflow.org_mpijobs.yaml: the MPIJob CRD (kubeflow.org/v2beta1).

The MPIJob part of the schema is written here, after upstream mpi-operator v0.8.2's CRD
(defaults, enums, required fields). The pod template schema is not hand-written: it is
io.k8s.api.core.v1.PodTemplateSpec taken from a real API server's OpenAPI v3 document
(``/openapi/v3/api/v1``), turned into a structural CRD schema the way controller-gen does:

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

Usage::

    python hack/gen-crd.py [--kubeconfig PATH | --openapi FILE] [-o OUTPUT] [--check]

With ``--kubeconfig`` (default ``$KUBECONFIG``) the document is fetched from the cluster with
the kubeconfig's credentials (sync ``kubernetes`` client). ``--openapi`` reads a saved copy of
``/openapi/v3/api/v1`` instead. ``--check`` exits 1 when OUTPUT is not what would be generated.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO / "deploy" / "crd" / "kubeflow.org_mpijobs.yaml"
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


# --- OpenAPI → structural schema ------------------------------------------------------------


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
        return self.convert(self.schemas[name], (*stack, name))

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
    schemas = openapi["components"]["schemas"]
    return Resolver(schemas).convert(schemas[ROOT], (ROOT,))


# --- the MPIJob schema ----------------------------------------------------------------------


def _int(fmt: str, description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "format": fmt, "description": description, **extra}


def _str(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _time(description: str) -> dict[str, Any]:
    return {"type": "string", "format": "date-time", "description": description}


def _run_policy() -> dict[str, Any]:
    quantity = {**INT_OR_STRING, "pattern": QUANTITY_PATTERN}
    scheduling = {
        "type": "object",
        "description": "Gang-scheduling parameters (--gang-scheduling).",
        "properties": {
            "minAvailable": _int("int32", "PodGroup minMember; default: Worker replicas + 1."),
            "queue": _str("Volcano queue; default: annotation scheduling.volcano.sh/queue-name."),
            "minResources": {
                "type": "object",
                "description": "PodGroup minResources; default: computed from the replicas.",
                "additionalProperties": quantity,
            },
            "priorityClass": _str("Volcano PodGroup priorityClassName."),
            "scheduleTimeoutSeconds": _int("int32", "scheduler-plugins scheduleTimeoutSeconds."),
        },
    }
    return {
        "type": "object",
        "description": "Policies applied to the job's execution.",
        "properties": {
            "cleanPodPolicy": _str(
                "Which worker pods to delete when the job finishes: All, Running or None "
                "(the controller defaults it to None)."
            ),
            "ttlSecondsAfterFinished": _int("int32", "Copied to the launcher Job."),
            "activeDeadlineSeconds": _int("int64", "Copied to the launcher Job."),
            "backoffLimit": _int("int32", "Copied to the launcher Job."),
            "schedulingPolicy": scheduling,
            "suspend": {
                "type": "boolean",
                "default": False,
                "description": "Suspend the job: delete workers, suspend the launcher.",
            },
            "managedBy": _str(
                "The controller that reconciles this job: kubeflow.org/mpi-operator (unset) "
                "or kueue.x-k8s.io/multikueue."
            ),
        },
    }


def _status() -> dict[str, Any]:
    condition = {
        "type": "object",
        "required": ["status", "type"],
        "properties": {
            "type": _str("Created, Running, Restarting, Succeeded, Suspended or Failed."),
            "status": _str("True, False or Unknown.", enum=["True", "False", "Unknown"]),
            "reason": _str("One-word reason of the last transition."),
            "message": _str("Human-readable details."),
            "lastUpdateTime": _time("When the condition was last updated."),
            "lastTransitionTime": _time("When the status last changed."),
        },
    }
    selector = {
        "type": "object",
        "x-kubernetes-map-type": "atomic",
        "description": "Deprecated; never set.",
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
                        "values": {
                            "type": "array",
                            "items": {"type": "string"},
                            "x-kubernetes-list-type": "atomic",
                        },
                    },
                },
            },
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    replica_status = {
        "type": "object",
        "properties": {
            "active": _int("int32", "Running pods."),
            "succeeded": _int("int32", "Succeeded pods."),
            "failed": _int("int32", "Failed pods."),
            "labelSelector": selector,
            "selector": _str("Never set."),
        },
    }
    return {
        "type": "object",
        "description": "Observed state of the MPIJob.",
        "properties": {
            "conditions": {
                "type": "array",
                "items": condition,
                "x-kubernetes-list-map-keys": ["type"],
                "x-kubernetes-list-type": "map",
            },
            "replicaStatuses": {
                "type": "object",
                "description": "Per replica type (Launcher, Worker).",
                "additionalProperties": replica_status,
            },
            "startTime": _time("When the job started (or was last resumed)."),
            "completionTime": _time("When the job finished."),
            "lastReconcileTime": _time("Never set."),
        },
    }


def mpijob_schema(template: dict[str, Any]) -> dict[str, Any]:
    replica_spec = {
        "type": "object",
        "properties": {
            "replicas": _int("int32", "Number of pods (Launcher: 1)."),
            "restartPolicy": _str("Pod restart policy: Never or OnFailure (ExitCode → Never)."),
            "template": template,
        },
    }
    spec = {
        "type": "object",
        "required": ["mpiReplicaSpecs"],
        "description": "Desired state of the MPIJob.",
        "properties": {
            "slotsPerWorker": _int("int32", "Slots per host in the hostfile.", default=1),
            "runLauncherAsWorker": {
                "type": "boolean",
                "default": False,
                "description": "Also list the launcher as a host.",
            },
            "runPolicy": _run_policy(),
            "mpiReplicaSpecs": {
                "type": "object",
                "description": "Launcher and Worker replica specs.",
                "additionalProperties": replica_spec,
            },
            "sshAuthMountPath": _str("Where the SSH Secret is mounted.", default="/root/.ssh"),
            "launcherCreationPolicy": _str(
                "AtStartup or WaitForWorkersReady (as upstream, not enforced as an enum).",
                default="AtStartup",
            ),
            "mpiImplementation": _str(
                "OpenMPI, Intel or MPICH.", default="OpenMPI", enum=["OpenMPI", "Intel", "MPICH"]
            ),
        },
    }
    return {
        "type": "object",
        "description": "MPIJob runs an MPI program: one launcher Job and N worker pods.",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": _status(),
        },
    }


PRINTER_COLUMNS = [
    {
        "name": "State",
        "type": "string",
        "jsonPath": ".status.conditions[-1:].type",
        "description": (
            "Type of the most recently changed condition. Approximates the latest True "
            "condition: JSONPath filters cannot pick the last match, and the server prints the "
            "first one. Conditions are ordered by last change, so this is exact while running, "
            "succeeded or failed, but shows Running (False) right after a suspension or a finish "
            "that was observed before Running."
        ),
    },
    {"name": "Workers", "type": "integer", "jsonPath": ".spec.mpiReplicaSpecs.Worker.replicas"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


def crd(template: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "mpijobs.kubeflow.org"},
        "spec": {
            "group": "kubeflow.org",
            "names": {
                "kind": "MPIJob",
                "listKind": "MPIJobList",
                "plural": "mpijobs",
                "singular": "mpijob",
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v2beta1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": PRINTER_COLUMNS,
                    "schema": {"openAPIV3Schema": mpijob_schema(template)},
                }
            ],
        },
    }


# --- I/O ------------------------------------------------------------------------------------


def fetch(kubeconfig: str) -> tuple[dict[str, Any], str]:
    """The /openapi/v3/api/v1 document and the server's gitVersion."""
    from kubernetes import config

    api = config.new_client_from_config(config_file=kubeconfig)
    try:
        documents = []
        for path in ("/openapi/v3/api/v1", "/version"):
            method, url, headers, _, _ = api.param_serialize(
                "GET",
                path,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            response = api.call_api(method, url, header_params=headers, _request_timeout=60)
            response.read()
            if response.status != 200:
                raise RuntimeError(f"GET {path}: HTTP {response.status}")
            documents.append(json.loads(response.data))
        return documents[0], documents[1].get("gitVersion", "unknown")
    finally:
        api.close()


def render(openapi: dict[str, Any], source: str) -> str:
    header = (
        "# Code generated by hack/gen-crd.py; DO NOT EDIT.\n"
        f"# Pod template schema: io.k8s.api.core.v1.PodTemplateSpec from {source}.\n"
        "# Apply with server-side apply (kubectl apply --server-side): the document is too\n"
        "# large for the last-applied-configuration annotation.\n"
    )
    body = yaml.safe_dump(crd(pod_template_schema(openapi)), sort_keys=True, width=100)
    return header + "---\n" + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG"))
    source.add_argument("--openapi", type=Path, help="a saved /openapi/v3/api/v1 document")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="fail if OUTPUT is out of date")
    args = parser.parse_args(argv)
    if args.openapi is not None:
        openapi, origin = json.loads(args.openapi.read_text()), f"file {args.openapi.name}"
    elif args.kubeconfig:
        openapi, version = fetch(args.kubeconfig)
        origin = f"kube-apiserver {version} /openapi/v3/api/v1"
    else:
        parser.error("give --kubeconfig (or set KUBECONFIG) or --openapi")
    text = render(openapi, origin)
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        strip = lambda t: "\n".join(t.splitlines()[2:])  # noqa: E731 - ignore the source line
        if strip(current) != strip(text):
            print(f"{args.output} is out of date; run hack/gen-crd.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
