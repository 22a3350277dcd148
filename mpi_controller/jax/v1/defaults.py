"""``SetDefaults_JAXJob`` (training-operator v1.9 ``jax_defaults.go``), on a deep copy:

* ``runPolicy.cleanPodPolicy``: ``None``;
* a replica spec key equal to ``Worker`` but for case (``worker``, ``WORKER``) is renamed
  ``Worker``;
* each replica: ``replicas`` 1, ``restartPolicy`` ``Never``, and the port ``{name: jaxjob-port,
  containerPort: 6666}`` appended to the ``jax`` container (else the first) unless it has a
  port of that name.

Defaults are never written back to the API (upstream has no mutating webhook); only the
controller's in-memory copy has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.defaults import default_job
from mpi_controller.jax import constants

__all__ = ["set_defaults"]


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A defaulted deep copy of ``job`` (any malformed part is left as it is)."""
    return default_job(job, constants)[0]
