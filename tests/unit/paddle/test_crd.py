"""The PaddleJob CRD document (mpi_controller/paddle/crd.py) against training-operator
v1.9.2's manifests/base/crds/kubeflow.org_paddlejobs.yaml: equal up to descriptions, with the
pod template and autoscaling/v2 MetricSpec schemas (generated from a real API server's OpenAPI
documents) given as markers. Scale subresource on the Worker replicas, status subresource,
printer columns State and Age, paddleReplicaSpecs required."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mpi_controller.paddle.crd import METRIC_SPEC, PADDLEJOB
from mpi_controller.paddle.plugin import PLUGIN
from tests.upstream import training_operator_dir

UPSTREAM = Path("manifests", "base", "crds", "kubeflow.org_paddlejobs.yaml")
TEMPLATE, METRIC = "<PodTemplateSpec>", "<MetricSpec>"

QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")

# Upstream's CRD with descriptions and controller-gen's annotation removed, the pod template
# and the MetricSpec replaced by the markers (and the quantity pattern, written above).
EXPECTED = yaml.safe_load(r"""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: paddlejobs.kubeflow.org}
spec:
  group: kubeflow.org
  names: {kind: PaddleJob, listKind: PaddleJobList, plural: paddlejobs, singular: paddlejob}
  scope: Namespaced
  versions:
  - additionalPrinterColumns:
    - {jsonPath: '.status.conditions[-1:].type', name: State, type: string}
    - {jsonPath: .metadata.creationTimestamp, name: Age, type: date}
    name: v1
    schema:
      openAPIV3Schema:
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            properties:
              elasticPolicy:
                properties:
                  maxReplicas: {format: int32, type: integer}
                  maxRestarts: {format: int32, type: integer}
                  metrics: {items: <MetricSpec>, type: array}
                  minReplicas: {format: int32, type: integer}
                type: object
              paddleReplicaSpecs:
                additionalProperties:
                  properties:
                    replicas: {format: int32, type: integer}
                    restartPolicy: {type: string}
                    template: <PodTemplateSpec>
                  type: object
                type: object
              runPolicy:
                properties:
                  activeDeadlineSeconds: {format: int64, type: integer}
                  backoffLimit: {format: int32, type: integer}
                  cleanPodPolicy: {type: string}
                  managedBy: {type: string}
                  schedulingPolicy:
                    properties:
                      minAvailable: {format: int32, type: integer}
                      minResources:
                        additionalProperties:
                          anyOf:
                          - {type: integer}
                          - {type: string}
                          pattern: <QUANTITY_PATTERN>
                          x-kubernetes-int-or-string: true
                        type: object
                      priorityClass: {type: string}
                      queue:
                        type: string
                        x-kubernetes-validations:
                        - {message: spec.runPolicy.schedulingPolicy.queue is immutable,
                          rule: self == oldSelf}
                      scheduleTimeoutSeconds: {format: int32, type: integer}
                    type: object
                  suspend: {default: false, type: boolean}
                  ttlSecondsAfterFinished: {format: int32, type: integer}
                type: object
            required: [paddleReplicaSpecs]
            type: object
          status:
            properties:
              completionTime: {format: date-time, type: string}
              conditions:
                items:
                  properties:
                    lastTransitionTime: {format: date-time, type: string}
                    lastUpdateTime: {format: date-time, type: string}
                    message: {type: string}
                    reason: {type: string}
                    status: {type: string}
                    type: {type: string}
                  required: [status, type]
                  type: object
                type: array
              lastReconcileTime: {format: date-time, type: string}
              replicaStatuses:
                additionalProperties:
                  properties:
                    active: {format: int32, type: integer}
                    failed: {format: int32, type: integer}
                    labelSelector:
                      properties:
                        matchExpressions:
                          items:
                            properties:
                              key: {type: string}
                              operator: {type: string}
                              values:
                                items: {type: string}
                                type: array
                                x-kubernetes-list-type: atomic
                            required: [key, operator]
                            type: object
                          type: array
                          x-kubernetes-list-type: atomic
                        matchLabels:
                          additionalProperties: {type: string}
                          type: object
                      type: object
                      x-kubernetes-map-type: atomic
                    selector: {type: string}
                    succeeded: {format: int32, type: integer}
                  type: object
                type: object
              startTime: {format: date-time, type: string}
            type: object
        type: object
    served: true
    storage: true
    subresources:
      scale:
        labelSelectorPath: .status.replicaStatuses.Worker.selector
        specReplicasPath: .spec.paddleReplicaSpecs.Worker.replicas
        statusReplicasPath: .status.replicaStatuses.Worker.active
      status: {}
""")
EXPECTED["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
    "runPolicy"]["properties"]["schedulingPolicy"]["properties"]["minResources"][
    "additionalProperties"]["pattern"] = QUANTITY_PATTERN


def strip_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [strip_descriptions(v) for v in value]
    return value


def ours() -> dict[str, Any]:
    return PADDLEJOB.document(TEMPLATE, {METRIC_SPEC: METRIC})  # type: ignore[arg-type]


def test_the_crd_is_upstreams_but_for_descriptions() -> None:
    """kubeflow.org_paddlejobs.yaml (controller-gen) without descriptions: our document equals
    it."""
    assert strip_descriptions(ours()) == EXPECTED


def test_names_subresources_and_columns() -> None:
    """paddlepaddle_types.go's kubebuilder markers: status and scale subresources (Worker replicas,
    active, selector), printer columns State and Age."""
    doc = ours()
    assert doc["metadata"]["name"] == PADDLEJOB.name == "paddlejobs.kubeflow.org"
    assert PADDLEJOB.file_name == "kubeflow.org_paddlejobs.yaml"
    (version,) = doc["spec"]["versions"]
    assert version["subresources"] == {"status": {}, "scale": {
        "specReplicasPath": ".spec.paddleReplicaSpecs.Worker.replicas",
        "statusReplicasPath": ".status.replicaStatuses.Worker.active",
        "labelSelectorPath": ".status.replicaStatuses.Worker.selector"}}
    assert [c["name"] for c in version["additionalPrinterColumns"]] == ["State", "Age"]
    assert (version["name"], version["served"], version["storage"]) == ("v1", True, True)


def test_every_schema_node_is_described() -> None:
    """Ours documents the fields upstream documents (kubectl explain)."""
    spec = ours()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["description"]
    for name, field in spec["properties"].items():
        assert field.get("description"), name
    for name, field in spec["properties"]["elasticPolicy"]["properties"].items():
        assert field.get("description"), name


def test_the_plugin_names_the_crd_and_the_examples() -> None:
    """The registry entry: scheme paddlejob, controller paddlejob-controller, framework paddle
    (metrics label), the webhook validator.paddlejob.training-operator.kubeflow.org at /validate-
    kubeflow-org-v1-paddlejob, no flags and no children beyond pods and Services."""
    assert PLUGIN.crd is PADDLEJOB
    assert (PLUGIN.scheme, PLUGIN.kind, PLUGIN.plural, PLUGIN.crd_name) == (
        "paddlejob", "PaddleJob", "paddlejobs", "paddlejobs.kubeflow.org")
    assert PLUGIN.operator_names == ("paddlejob-controller",)
    assert PLUGIN.component == "paddlejob-controller"
    assert PLUGIN.framework_name == "paddle"
    assert PLUGIN.examples == ("examples/paddlepaddle/simple-cpu.yaml",
                               "examples/paddlepaddle/simple-gpu.yaml")
    (admission,) = PLUGIN.admission
    assert admission.name == "validator.paddlejob.training-operator.kubeflow.org"
    assert admission.path == "/validate-kubeflow-org-v1-paddlejob"
    assert PLUGIN.children == ()
    assert PLUGIN.flags is None


def test_against_the_upstream_file_itself() -> None:
    """The literal above is upstream's file (downloaded to the Go module cache)."""
    upstream = strip_descriptions(yaml.safe_load(
        (training_operator_dir() / UPSTREAM).read_text()))
    upstream["metadata"].pop("annotations", None)
    schema = upstream["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    schema["properties"]["paddleReplicaSpecs"]["additionalProperties"]["properties"][
        "template"] = TEMPLATE
    schema["properties"]["elasticPolicy"]["properties"]["metrics"]["items"] = METRIC
    assert upstream == EXPECTED
