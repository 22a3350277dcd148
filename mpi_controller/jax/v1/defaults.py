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

from mpi_controller.engine.training.defaults import (
    camel_case_replica_types,
    default_clean_pod_policy,
    default_port,
    default_replica,
    replica_spec_map,
)
from mpi_controller.jax.constants import (
    DEFAULT_CONTAINER_NAME,
    DEFAULT_PORT,
    DEFAULT_PORT_NAME,
    DEFAULT_RESTART_POLICY,
    REPLICA_TYPES,
    SPECS_FIELD,
)
from mpi_controller.kube.jsonvalue import json_copy

__all__ = ["set_defaults"]


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A defaulted deep copy of ``job`` (any malformed part is left as it is)."""
    out: dict[str, Any] = json_copy(dict(job))
    default_clean_pod_policy(out)
    specs = replica_spec_map(out, SPECS_FIELD)
    camel_case_replica_types(specs, REPLICA_TYPES)
    for replica in specs.values():
        default_replica(replica, replicas=1, restart_policy=DEFAULT_RESTART_POLICY)
        default_port(replica, container_name=DEFAULT_CONTAINER_NAME, port_name=DEFAULT_PORT_NAME,
                     port=DEFAULT_PORT)
    return out
