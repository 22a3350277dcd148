"""The PyTorchJob kind's description (:class:`~mpi_controller.engine.plugin.KindPlugin`): the
training-operator kind of :class:`~mpi_controller.pytorch.hooks.PyTorch`'s hooks, with its
admission warnings, the elastic job's HorizontalPodAutoscaler, and the flags of the workers'
init container (training-operator's): ``--pytorch-init-container-image``,
``--pytorch-init-container-max-tries`` and ``--pytorch-init-container-template-file`` (read
once, at startup; a bad one is an error naming the flag)."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.plugin import FlagSet, RbacRule
from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.engine.training.plugin import training_plugin
from mpi_controller.pytorch import constants
from mpi_controller.pytorch.children import initial_children
from mpi_controller.pytorch.crd import PYTORCHJOB
from mpi_controller.pytorch.hooks import HPAS, PyTorch, PyTorchOptions
from mpi_controller.pytorch.initcontainer import InitContainerTemplate
from mpi_controller.pytorch.v1 import validate, validate_update, validation_warnings

__all__ = ["PLUGIN"]


def _add_flags(parser: Any) -> None:
    parser.add_argument(
        "--pytorch-init-container-image", "-pytorch-init-container-image",
        dest="pytorch_init_container_image", default=constants.DEFAULT_INIT_CONTAINER_IMAGE,
        help="image of the PyTorchJob workers' init container (waits for the master)")
    parser.add_argument(
        "--pytorch-init-container-max-tries", "-pytorch-init-container-max-tries",
        dest="pytorch_init_container_max_tries", type=int,
        default=constants.DEFAULT_INIT_CONTAINER_MAX_TRIES,
        help="DNS lookups of the master the init container tries (2 s apart)")
    parser.add_argument(
        "--pytorch-init-container-template-file", "-pytorch-init-container-template-file",
        dest="pytorch_init_container_template_file",
        default=constants.DEFAULT_INIT_CONTAINER_TEMPLATE_FILE,
        help="YAML template of the init containers ({{.MasterAddr}}, "
             "{{.InitContainerImage}}, {{.MaxTries}}); the built-in one when unreadable")


def _parse_flags(args: Any) -> PyTorchOptions:
    tries = args.pytorch_init_container_max_tries
    if tries <= 0:
        raise ValueError(f"--pytorch-init-container-max-tries must be greater than 0, got "
                         f"{tries:g}")
    try:
        template = InitContainerTemplate.load(
            args.pytorch_init_container_template_file,
            image=args.pytorch_init_container_image, max_tries=tries)
    except ValueError as err:
        raise ValueError(f"--pytorch-init-container-template-file: {err}") from None
    return PyTorchOptions(init_container=template)


def _framework(training: TrainingOptions, options: object) -> PyTorch:
    own = options if isinstance(options, PyTorchOptions) else PyTorchOptions()
    return PyTorch(init_container=own.init_container)


PLUGIN = training_plugin(
    framework=_framework, initial_children=initial_children, crd=PYTORCHJOB, validate=validate,
    validate_update=validate_update,
    warnings=validation_warnings,
    flags=FlagSet(add=_add_flags, parse=_parse_flags, default=PyTorchOptions),
    rbac=(RbacRule("autoscaling", ("horizontalpodautoscalers",),
                   ("get", "create", "list", "watch", "update", "delete"),
                   "the HorizontalPodAutoscaler of an elastic PyTorchJob (read from a cache; "
                   "created, updated, deleted on suspend; get after an AlreadyExists)"),),
    children=(HPAS,),
    examples=("examples/pytorch-simple.yaml",))
