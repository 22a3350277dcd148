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

from typing import Any

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    """``__version__``, the installed distribution's version, read on first use: reading it
    imports ``importlib.metadata`` (with ``email``, ``zipfile``, ``csv``: ~0.7 MB of RSS and
    ~0.1 s), which a running controller never needs."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("mpi-controller")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found
