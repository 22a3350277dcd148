""":func:`initial_children` of a JAXJob (pure): worker pods told the coordinator's address (worker
0's Service, short name, so ``cluster_domain`` is unused) and their Services."""

from __future__ import annotations

from mpi_controller.engine.training.children import initial_children_of
from mpi_controller.jax.hooks import JAX

__all__ = ["initial_children"]

initial_children = initial_children_of(lambda cluster_domain: JAX(), "JAXJob")
