"""mpi-controller: a Python (asyncio) implementation of the Kubeflow MPI Operator and of the
training-operator's TFJob and PyTorchJob.

Subpackages: ``kube`` (pure Kubernetes object helpers), ``runtime`` (generic controller
machinery: client, informers, work queues, leader election, events, metrics, manager),
``engine`` (what every job kind shares: the sync loop, child writes, the pod cache;
``engine.training`` the training-operator's common job semantics), one package per kind
(``mpi``: MPIJob ``v2beta1``, ``v1`` and ``v1alpha2``; ``tensorflow``: TFJob; ``pytorch``:
PyTorchJob), each listing its public, pure API in ``__all__``, and ``webhook`` (conversion and
validating admission webhooks, their certificates).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mpi-controller")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
