"""The TrainJob kind (``trainer.kubeflow.org/v1alpha1``, Kubeflow Trainer v2.3.0): a TrainJob
names a ``TrainingRuntime`` or ``ClusterTrainingRuntime`` (a JobSet template and an ML
policy), and becomes a JobSet (``jobset.x-k8s.io/v1alpha2``) that the real JobSet controller
runs.

Public (plain dicts in, plain dicts out, no I/O):

* :func:`desired_jobset`: the JobSet of a TrainJob on a runtime's spec (the plain, torch,
  JAX and XGBoost ML policies; MPI and Flux are refused with :class:`UnsupportedPolicy`);
* the API: :func:`set_defaults`, :func:`validate` (the torch and XGBoost plugins' checks),
  :func:`runtime_key`;
* :mod:`.status`: the conditions (Suspended, Complete, Failed) and jobsStatus;
* :mod:`mpi_controller.trainjob.constants` (names, labels, environment variables).

:mod:`.patches` merges a TrainJob's runtime patches, :mod:`.podgroups` makes its PodGroup,
:mod:`.snapshot` its runtime snapshot ConfigMap, :mod:`.validation` holds the webhooks'
checks (pure) and :mod:`.plugin` serves them (reading the API through the webhook server).
:mod:`.crd` holds the three CRDs, :mod:`.kind` the kind on the engine (the only module here
that meets it, with :mod:`.plugin`, the registry entry). Enabled only by
``--enable-scheme trainjob``; needs JobSet installed.
"""

from mpi_controller.trainjob import constants, status
from mpi_controller.trainjob.api import runtime_key, set_defaults, validate
from mpi_controller.trainjob.build import UnsupportedPolicy, desired_jobset

__all__ = [
    "UnsupportedPolicy",
    "constants",
    "desired_jobset",
    "runtime_key",
    "set_defaults",
    "status",
    "validate",
]
