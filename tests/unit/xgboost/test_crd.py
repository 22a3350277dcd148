"""The XGBoostJob CRD document: training-operator v1.9.2's
``manifests/base/crds/kubeflow.org_xgboostjobs.yaml`` up to descriptions and the pod template
(the schema written out here; also compared with the module's file, downloaded to the Go
module cache)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mpi_controller.xgboost.crd import XGBOOSTJOB
from tests.upstream import training_operator_dir

TEMPLATE = {"type": "object", "description": "the PodTemplateSpec",
            "properties": {"metadata": {"type": "object"}, "spec": {"type": "object"}}}
UPSTREAM = Path("manifests", "base", "crds", "kubeflow.org_xgboostjobs.yaml")


def without_descriptions(node: Any) -> Any:
    """The schema without ``description``s, the pod template (an object with ``metadata``
    and ``spec`` properties under ``template``) replaced by ``"TEMPLATE"``."""
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "description":
            continue
        is_template = key == "template" and isinstance(value, dict) \
            and {"metadata", "spec"} <= set(value.get("properties", {}))
        out[key] = "TEMPLATE" if is_template else without_descriptions(value)
    return out


def i32() -> dict[str, str]:
    return {"format": "int32", "type": "integer"}


def time() -> dict[str, str]:
    return {"format": "date-time", "type": "string"}


STRING = {"type": "string"}
RUN_POLICY = {"type": "object", "properties": {
    "activeDeadlineSeconds": {"format": "int64", "type": "integer"},
    "backoffLimit": i32(), "cleanPodPolicy": STRING, "managedBy": STRING,
    "schedulingPolicy": {"type": "object", "properties": {
        "minAvailable": i32(),
        "minResources": {"type": "object", "additionalProperties": {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                       r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
            "x-kubernetes-int-or-string": True}},
        "priorityClass": STRING,
        "queue": {"type": "string", "x-kubernetes-validations": [
            {"message": "spec.runPolicy.schedulingPolicy.queue is immutable",
             "rule": "self == oldSelf"}]},
        "scheduleTimeoutSeconds": i32()}},
    "suspend": {"default": False, "type": "boolean"},
    "ttlSecondsAfterFinished": i32()}}
STATUS = {"type": "object", "properties": {
    "completionTime": time(), "lastReconcileTime": time(), "startTime": time(),
    "conditions": {"type": "array", "items": {
        "type": "object", "required": ["status", "type"], "properties": {
            "lastTransitionTime": time(), "lastUpdateTime": time(), "message": STRING,
            "reason": STRING, "status": STRING, "type": STRING}}},
    "replicaStatuses": {"type": "object", "additionalProperties": {
        "type": "object", "properties": {
            "active": i32(), "failed": i32(), "succeeded": i32(), "selector": STRING,
            "labelSelector": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {
                "matchExpressions": {"type": "array", "x-kubernetes-list-type": "atomic",
                                     "items": {"type": "object", "required": ["key", "operator"],
                                               "properties": {
                                                   "key": STRING, "operator": STRING,
                                                   "values": {"type": "array", "items": STRING,
                                                              "x-kubernetes-list-type": "atomic"}
                                               }}},
                "matchLabels": {"type": "object", "additionalProperties": STRING}}}}}}}}
EXPECTED = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "xgboostjobs.kubeflow.org"},
    "spec": {
        "group": "kubeflow.org",
        "names": {"kind": "XGBoostJob", "listKind": "XGBoostJobList", "plural": "xgboostjobs",
                  "singular": "xgboostjob"},
        "scope": "Namespaced",
        "versions": [{
            "name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
            "additionalPrinterColumns": [
                {"jsonPath": ".status.conditions[-1:].type", "name": "State", "type": "string"},
                {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"}],
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "apiVersion": STRING, "kind": STRING, "metadata": {"type": "object"},
                "spec": {"type": "object", "required": ["xgbReplicaSpecs"], "properties": {
                    "runPolicy": RUN_POLICY,
                    "xgbReplicaSpecs": {"type": "object", "additionalProperties": {
                        "type": "object", "properties": {
                            "replicas": i32(), "restartPolicy": STRING,
                            "template": "TEMPLATE"}}}}},
                "status": STATUS}}},
        }],
    },
}


def document() -> dict[str, Any]:
    return XGBOOSTJOB.document(TEMPLATE)


def test_the_crd_is_upstreams_up_to_descriptions() -> None:
    """kubeflow.org_xgboostjobs.yaml: names, the v1 schema (required xgbReplicaSpecs; the
    shared runPolicy with the immutable queue; the JobStatus), the status subresource only,
    the State and Age columns."""
    assert without_descriptions(document()) == EXPECTED
    assert XGBOOSTJOB.name == "xgboostjobs.kubeflow.org"
    assert XGBOOSTJOB.file_name == "kubeflow.org_xgboostjobs.yaml"


def test_the_pod_template_is_the_one_given() -> None:
    """The replica spec's template is the PodTemplateSpec schema the generator passes in."""
    schema = document()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    specs = schema["properties"]["spec"]["properties"]["xgbReplicaSpecs"]
    assert specs["additionalProperties"]["properties"]["template"] == TEMPLATE


def test_the_crd_matches_the_modules_file() -> None:
    """The same comparison against the file itself (without controller-gen's annotation)."""
    upstream = yaml.safe_load((training_operator_dir() / UPSTREAM).read_text())
    upstream["metadata"].pop("annotations", None)
    assert without_descriptions(document()) == without_descriptions(upstream)
