"""The CRDs of Kubeflow Trainer v2.3.0's ``trainer.kubeflow.org/v1alpha1``: ``TrainJob``,
``TrainingRuntime`` and ``ClusterTrainingRuntime`` (upstream's
``manifests/base/crds/trainer.kubeflow.org_*.yaml``).

Their schemas are built by :mod:`.schemas` (the Trainer and JobSet types; the Kubernetes types
they embed are the OpenAPI components :data:`COMPONENTS`, in the order each version's builder
takes them), imported on the first build: the kind registry reads these CRD objects whenever
it loads the TrainJob plugin (every ``mpi-controller run``), and only generating a CRD needs
the schemas.
"""

from __future__ import annotations

from typing import Any

from mpi_controller.kube.crd import CRD, Version
from mpi_controller.trainjob import constants

__all__ = ["CLUSTER_TRAINING_RUNTIME", "COMPONENTS", "TRAINING_RUNTIME", "TRAINJOB",
           "runtime_schema", "trainjob_schema"]

COMPONENTS = (
    "io.k8s.api.batch.v1.JobSpec",
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.core.v1.EnvVar",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.ResourceRequirements",
    "io.k8s.api.core.v1.Volume",
    "io.k8s.api.core.v1.VolumeMount",
    "io.k8s.api.core.v1.SecurityContext",
    "io.k8s.api.core.v1.PodSecurityContext",
    "io.k8s.api.core.v1.Affinity",
    "io.k8s.api.core.v1.Toleration",
    "io.k8s.api.core.v1.PodSchedulingGate",
)
"""The Kubernetes components the three CRDs embed."""

Schema = dict[str, Any]


def trainjob_schema(template: Schema, *components: Schema) -> Schema:
    """:func:`.schemas.trainjob_schema` (imported on first use)."""
    from mpi_controller.trainjob import schemas

    return schemas.trainjob_schema(template, *components)


def runtime_schema(kind: str) -> Any:
    """The root schema builder of ``kind`` (:func:`.schemas.runtime_schema`, imported on the
    builder's first call)."""
    def schema(template: Schema, *components: Schema) -> Schema:
        from mpi_controller.trainjob import schemas

        built: Schema = schemas.runtime_schema(kind)(template, *components)
        return built
    return schema


PRINTER_COLUMNS = [
    {"jsonPath": ".status.conditions[-1:].type", "name": "State", "type": "string"},
    {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
]

TRAINJOB = CRD(
    group=constants.GROUP, kind=constants.KIND, plural=constants.PLURAL,
    versions=(Version(constants.VERSION, trainjob_schema, PRINTER_COLUMNS, storage=True,
                      components=COMPONENTS),),
)
TRAINING_RUNTIME = CRD(
    group=constants.GROUP, kind=constants.RUNTIME_KIND, plural=constants.RUNTIME_PLURAL,
    versions=(Version(constants.VERSION, runtime_schema(constants.RUNTIME_KIND), None,
                      storage=True, subresources=None, components=COMPONENTS),),
)
CLUSTER_TRAINING_RUNTIME = CRD(
    group=constants.GROUP, kind=constants.CLUSTER_RUNTIME_KIND,
    plural=constants.CLUSTER_RUNTIME_PLURAL, scope="Cluster",
    versions=(Version(constants.VERSION, runtime_schema(constants.CLUSTER_RUNTIME_KIND), None,
                      storage=True, subresources=None, components=COMPONENTS),),
)
