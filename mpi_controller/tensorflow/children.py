"""The TFJob's public builder, :func:`initial_children`: its pods, each with ``TF_CONFIG`` (host
names with the ``cluster_domain``), and their headless Services (pure)."""

from __future__ import annotations

from mpi_controller.engine.training.children import initial_children_of
from mpi_controller.tensorflow.hooks import TensorFlow

__all__ = ["initial_children"]

initial_children = initial_children_of(
    lambda cluster_domain: TensorFlow(cluster_domain=cluster_domain), "TFJob")
