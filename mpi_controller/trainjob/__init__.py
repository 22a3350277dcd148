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
:mod:`.crd` holds the three CRDs (their schemas built by :mod:`.schemas`), :mod:`.kind` the
kind on the engine (the only module here that meets it, with :mod:`.plugin`, the registry
entry, which every ``run`` loads: it imports :mod:`.resources` and :mod:`.crd`, and the kind,
the schemas and the webhooks' checks only when first used). Enabled only by
``--enable-scheme trainjob``; needs JobSet installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Each public name is loaded from its module on first use (as in mpi_controller.runtime), so
# `from mpi_controller.trainjob import constants` (the CLI's render and convert) loads no
# builder: a controller that does not serve TrainJobs never imports them.
_MODULES = {"constants": "", "status": "", "runtime_key": "api", "set_defaults": "api",
            "validate": "api", "UnsupportedPolicy": "build", "desired_jobset": "build"}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    path = f"{__name__}.{module or name}"
    loaded = importlib.import_module(path)
    value = loaded if not module else getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
