"""MPIJob conversion between ``kubeflow.org/v2beta1`` (hub, storage), ``v1`` and ``v1alpha2``.

Public: :func:`convert` (any served version to any other, lossless; see
:mod:`.convert`), :func:`generation_of` (the version a job was created in, kept through every
conversion: the launch mode a job runs in), :func:`version_of`, :func:`conversion_record` (what
an object's conversion annotations hold), :class:`ConversionError`, and the constants
:data:`ANNOTATION`, :data:`FIELD_PREFIX`, :data:`HUB`, :data:`VERSIONS`, :data:`HUB_DEFAULTS`.
"""

from mpi_controller.mpi.conversion.convert import (
    ANNOTATION,
    FIELD_PREFIX,
    GROUP,
    HUB,
    HUB_DEFAULTS,
    VERSIONS,
    ConversionError,
    conversion_record,
    convert,
    generation_of,
    version_of,
)

__all__ = [
    "ANNOTATION",
    "FIELD_PREFIX",
    "GROUP",
    "HUB",
    "HUB_DEFAULTS",
    "VERSIONS",
    "ConversionError",
    "conversion_record",
    "convert",
    "generation_of",
    "version_of",
]
