"""The validating webhooks of the training-operator kinds, TFJob and PyTorchJob
(``kubeflow.org/v1``): training-operator v1.9's names, paths and messages. Pure.

Upstream (``pkg/webhooks/tensorflow``, ``pkg/webhooks/pytorch``) judges the job as submitted,
before any defaults, with the same functions the controller runs on every sync
(:func:`mpi_controller.tensorflow.validate`, :func:`mpi_controller.pytorch.validate`), so
``kubectl create`` of an invalid job is refused with the field named, e.g.
``admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request:
spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1``. Several errors are joined
as Kubernetes aggregates them (``[a, b]``).

* PyTorchJob also answers with upstream's admission warning for the deprecated
  ``spec.elasticPolicy.nProcPerNode`` (:func:`mpi_controller.pytorch.validation_warnings`),
  whether the job is admitted or not.
* An update is checked against the old job too (``spec.runPolicy.managedBy`` cannot change:
  the ``validate_update`` functions; upstream's PyTorchJob webhook compares the new job with
  itself, so its check never fires). An update that leaves ``spec`` as it was (labels,
  annotations, finalizers) is not judged again, so a job admitted before the webhook existed
  can still be labelled and deleted with finalizers.

``failurePolicy: Fail``, as upstream's: while no replica answers, TFJobs and PyTorchJobs cannot
be created or changed (the controller's own validation then has nothing to catch).

Paths: ``/validate-kubeflow-org-v1-tfjob``, ``/validate-kubeflow-org-v1-pytorchjob``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mpi_controller import pytorch, tensorflow
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.webhook.reviews import ValidatingWebhook, Verdict

__all__ = ["PYTORCHJOB_WEBHOOK", "TFJOB_WEBHOOK", "WEBHOOKS", "training_validator"]

GROUP = "kubeflow.org"
VERSION = "v1"

Job = Mapping[str, Any]


def training_validator(
        validate: Callable[[Job], Sequence[FieldError]],
        validate_update: Callable[[Job, Job], Sequence[FieldError]],
        warnings: Callable[[Job], Sequence[str]] = lambda job: (),
) -> Callable[[Job, Job | None, str], Verdict]:
    """The admission validator of a kind from its API's functions (module docstring)."""
    def verdict(obj: Job, old: Job | None, operation: str) -> Verdict:
        warned = list(warnings(obj))
        if old is None:
            return Verdict(errors=[str(e) for e in validate(obj)], warnings=warned)
        if old.get("spec") == obj.get("spec"):
            return Verdict(warnings=warned)
        return Verdict(errors=[str(e) for e in validate_update(old, obj)], warnings=warned)
    return verdict


def _webhook(kind: str, plural: str,
             validate: Callable[[Job, Job | None, str], Verdict]) -> ValidatingWebhook:
    lower = kind.lower()
    return ValidatingWebhook(
        name=f"validator.{lower}.training-operator.kubeflow.org",
        path=f"/validate-kubeflow-org-{VERSION}-{lower}",
        group=GROUP, version=VERSION, resource=plural, kind=kind, validate=validate,
        failure_policy="Fail")


TFJOB_WEBHOOK = _webhook("TFJob", "tfjobs", training_validator(
    tensorflow.validate, tensorflow.validate_update))
PYTORCHJOB_WEBHOOK = _webhook("PyTorchJob", "pytorchjobs", training_validator(
    pytorch.validate, pytorch.validate_update, pytorch.validation_warnings))

WEBHOOKS = (TFJOB_WEBHOOK, PYTORCHJOB_WEBHOOK)
"""The validating webhooks of the training-operator kinds."""
