"""``SetDefaults_TFJob`` (training-operator v1.9 ``tensorflow_defaults.go``), on a deep copy:

* ``runPolicy.cleanPodPolicy``: ``None``; ``successPolicy``: ``""``;
* replica spec keys camel-cased (``WORKER`` → ``Worker``, ``ps`` → ``PS``);
* each replica: ``replicas`` 1, ``restartPolicy`` ``Never``, and the port ``{name: tfjob-port,
  containerPort: 2222}`` on the ``tensorflow`` container (else the first) unless it has one of
  that name.

Defaults are never written back to the API (upstream has no mutating webhook); only the
controller's in-memory copy has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.defaults import default_job
from mpi_controller.tensorflow import constants
from mpi_controller.tensorflow.constants import SUCCESS_POLICY_DEFAULT

__all__ = ["set_defaults"]


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A defaulted deep copy of ``job`` (any malformed part is left as it is)."""
    out, _ = default_job(job, constants)
    spec = out.get("spec")
    if isinstance(spec, dict) and spec.get("successPolicy") is None:
        spec["successPolicy"] = SUCCESS_POLICY_DEFAULT
    return out
