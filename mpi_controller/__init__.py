"""mpi-controller: a Python (asyncio) implementation of the Kubeflow MPI Operator.

Subpackages: ``runtime`` (generic controller machinery), ``api`` (the MPIJob
``kubeflow.org/v2beta1`` types, defaults and validation) and ``reconcile`` (pure builders
of every object the controller creates, and status computation).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mpi-controller")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
