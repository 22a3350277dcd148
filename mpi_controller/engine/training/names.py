"""The names a ``kubeflow.org/v1`` kind's ``constants`` module gives (:class:`KindNames`), read by
the engine's shared defaults (:func:`~mpi_controller.engine.training.defaults.default_job`) and
hooks (:class:`~mpi_controller.engine.training.hooks.TrainingHooks`): a kind passes its
``constants`` module itself, which mypy checks against this protocol.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["KindNames"]


class KindNames(Protocol):
    """A kind's names (TFJob's shown)."""

    @property
    def KIND(self) -> str:
        """``TFJob``; also the prefix of condition and event reasons."""

    @property
    def PLURAL(self) -> str:
        """``tfjobs`` (resource ``kubeflow.org/v1``)."""

    @property
    def CONTROLLER_NAME(self) -> str:
        """``tfjob-controller``: the operator-name label, the Events' source component."""

    @property
    def FRAMEWORK_NAME(self) -> str:
        """``tensorflow``: the ``framework`` label of the ``training_operator_jobs_*`` metrics."""

    @property
    def SPECS_FIELD(self) -> str:
        """``tfReplicaSpecs``: where the replica specs are under ``spec``."""

    @property
    def REPLICA_TYPES(self) -> tuple[str, ...]:
        """The replica types, in the order upstream camel-cases them."""

    @property
    def DEFAULT_CONTAINER_NAME(self) -> str:
        """``tensorflow``: the container that gets the default port, whose ports the Services
        expose and whose exit code decides restarts."""

    @property
    def DEFAULT_PORT_NAME(self) -> str:
        """``tfjob-port``: the name of the port the defaults add."""

    @property
    def DEFAULT_PORT(self) -> int:
        """``2222``: its number."""

    @property
    def DEFAULT_RESTART_POLICY(self) -> str:
        """``Never``: a replica's ``restartPolicy`` when unset."""

    @property
    def DELETE_JOB_REASONS(self) -> tuple[str, str]:
        """The Event reasons (success, failure) when ``ttlSecondsAfterFinished`` deletes a
        job: ``SuccessfulDeleteJob``/``FailedDeleteJob`` or, for some kinds, upstream's
        ``SuccessfulDeletePod``/``FailedDeletePod``."""
