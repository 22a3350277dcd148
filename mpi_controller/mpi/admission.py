"""The MPIJob's admission: validation of every version at admission with the controller's
own messages, and the conversion webhook's converter. Pure.

A job is validated by the rules of the version it was created in (its origin,
:func:`~mpi_controller.mpi.conversion.generation_of`), whatever version the request uses,
because that is the generation the controller runs it as: the object is converted to that
version and checked there.

* ``v2beta1``: :func:`mpi_controller.mpi.v2beta1.validate` after the defaults (the messages of
  the controller's ``ValidationError`` events);
* ``v1``: training-operator v1.9's ``ValidateV1MpiJobSpec`` messages, prefixed with the field;
* ``v1alpha2``: mpi-operator v0.2.3's CRD checks and what its controller needs.

Also refused: an annotation conversion cannot read (:data:`~mpi_controller.mpi.conversion.
ANNOTATION`), and an update that changes the job's origin. An update that leaves ``spec`` as
it was is not judged again (so metadata changes, such as finalizers or labels, of a job
admitted before the webhook existed keep working).

The webhooks' ``failurePolicy`` is ``Ignore``: while no replica answers, ``v2beta1`` jobs are
still admitted (and the controller's own validation reports what is wrong with them), and
``v1``/``v1alpha2`` requests fail anyway, at the conversion webhook, with the reason.

Paths (one webhook per version, ``matchPolicy: Exact``):
``/validate-kubeflow-org-v2beta1-mpijob``, ``/validate-kubeflow-org-v1-mpijob``,
``/validate-kubeflow-org-v1alpha2-mpijob``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mpi_controller.kube.fielderrors import invalid
from mpi_controller.mpi import v1, v1alpha2, v2beta1
from mpi_controller.mpi.conversion import (
    ANNOTATION,
    GROUP,
    VERSIONS,
    ConversionError,
    convert,
    generation_of,
)

__all__ = ["convert_mpijob", "validate_mpijob", "webhook_name", "webhook_path"]

_RULES: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "v2beta1": lambda job: [str(e) for e in v2beta1.validate(v2beta1.set_defaults(job))],
    "v1": lambda job: [e.with_field() for e in v1.validate(job)],
    "v1alpha2": lambda job: [str(e) for e in v1alpha2.validate(job)],
}


def convert_mpijob(obj: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The conversion webhook's converter for MPIJob (raises ConversionError): the result
    shares the values it leaves as they are with ``obj`` (the plugin's ``Converter``)."""
    return convert(obj, version, copy=False)


def _readable(obj: Mapping[str, Any]) -> str | None:
    """The problem with the object's conversion annotation, if any."""
    try:
        for version in VERSIONS:
            convert(obj, version, copy=False)  # only its errors are read
    except ConversionError as err:
        return str(err)
    return None


def validate_mpijob(obj: Mapping[str, Any], old: Mapping[str, Any] | None,
                    ) -> tuple[list[str], list[str]]:
    """The admission errors and warnings (none) of an MPIJob of any version (module
    docstring)."""
    problem = _readable(obj)
    if problem is not None:
        return [problem], []
    origin = generation_of(obj)
    errors: list[str] = []
    if old is not None:
        was = generation_of(old)
        if was != origin:
            errors.append(str(invalid(f"metadata.annotations[{ANNOTATION}]", origin,
                                      f"the job was created as {GROUP}/{was}; the version a "
                                      "job was created in cannot change")))
        if old.get("spec") == obj.get("spec"):
            return errors, []
    return errors + _RULES[origin](convert(obj, origin)), []


def webhook_name(version: str) -> str:
    """The validating webhook of ``version`` (one per served version)."""
    return f"validator.{version}.mpijob.mpi-operator.kubeflow.org"


def webhook_path(version: str) -> str:
    return f"/validate-kubeflow-org-{version}-mpijob"
