"""The XGBoostJob kind's description (:class:`~mpi_controller.engine.plugin.KindPlugin`): the
training-operator kind of :class:`~mpi_controller.xgboost.hooks.XGBoost`'s hooks; no flags of
its own (its environment names Services by their short names, so ``--cluster-domain`` does
not apply), upstream's example manifests."""

from __future__ import annotations

from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.engine.training.plugin import training_plugin
from mpi_controller.xgboost.children import initial_children
from mpi_controller.xgboost.crd import XGBOOSTJOB
from mpi_controller.xgboost.hooks import XGBoost
from mpi_controller.xgboost.v1 import validate, validate_update

__all__ = ["PLUGIN"]


def _framework(training: TrainingOptions, options: object) -> XGBoost:
    return XGBoost()


PLUGIN = training_plugin(
    framework=_framework, initial_children=initial_children, crd=XGBOOSTJOB, validate=validate,
    validate_update=validate_update,
    examples=("examples/xgboost/xgboostjob.yaml",
              "examples/xgboost/xgboostjob_v1_iris_train.yaml",
              "examples/xgboost/xgboostjob_v1_iris_predict.yaml",
              "examples/xgboost/xgboostjob_v1_iris_train_local.yaml",
              "examples/xgboost/xgboostjob_v1_iris_predict_local.yaml",
              "examples/xgboost/xgboostjob_v1_lightgbm_dist_training.yaml",
              "examples/xgboost/xgboostjob_v1_rabit_test.yaml",
              "examples/xgboost/xgboostjob_v1alpha1_rabit_test.yaml"))
