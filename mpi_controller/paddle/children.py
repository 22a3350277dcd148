"""A PaddleJob's first objects, :func:`initial_children` (pure): pods with the ``PADDLE_*``
environment and headless Services; ``cluster_domain`` is unused (short Service names)."""

from __future__ import annotations

from mpi_controller.engine.training.children import initial_children_of
from mpi_controller.paddle.hooks import Paddle

__all__ = ["initial_children"]

initial_children = initial_children_of(lambda cluster_domain: Paddle(), "PaddleJob")
