"""The TFJob kind (``kubeflow.org/v1``, training-operator v1.9): its API, TF_CONFIG, status
rules, and the kind on the job engine.

Public (importable by other controllers; plain dicts in, plain dicts out, no I/O):

* :func:`initial_children`: everything the first sync of a job creates (its pods and
  Services, a PodGroup with gang scheduling), in creation order;
* the API: :func:`set_defaults`, :func:`validate`, :func:`validate_update`,
  :func:`parse_tfjob` (:class:`TFJob`);
* :func:`tf_config` (the ``TF_CONFIG`` value of a pod), :func:`is_distributed`;
* :func:`update_tfjob_status` (the TFJob status rules);
* :mod:`mpi_controller.tensorflow.constants` (names, replica types, defaults).

The pods and Services are built by the engine's training-operator part
(:mod:`mpi_controller.engine.training`) with this kind's hooks; :mod:`.hooks` holds its hooks on
the engine (internal).
"""

from mpi_controller.tensorflow import constants
from mpi_controller.tensorflow.children import initial_children
from mpi_controller.tensorflow.status import update_tfjob_status
from mpi_controller.tensorflow.tfconfig import is_distributed, tf_config
from mpi_controller.tensorflow.v1 import (
    TFJob,
    parse_tfjob,
    set_defaults,
    validate,
    validate_update,
)

__all__ = [
    "TFJob",
    "constants",
    "initial_children",
    "is_distributed",
    "parse_tfjob",
    "set_defaults",
    "tf_config",
    "update_tfjob_status",
    "validate",
    "validate_update",
]
