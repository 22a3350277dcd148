"""An XGBoostJob's pods (``MASTER_ADDR``, ``WORKER_ADDRS``, ...) and Services as the first sync
creates them: :func:`initial_children` (pure; ``cluster_domain`` unused: short names)."""

from __future__ import annotations

from mpi_controller.engine.training.children import initial_children_of
from mpi_controller.xgboost.hooks import XGBoost

__all__ = ["initial_children"]

initial_children = initial_children_of(lambda cluster_domain: XGBoost(), "XGBoostJob")
