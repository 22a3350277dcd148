"""The webhook checks the ``kubeflow.org/v1`` kinds share (``engine/training/validation.py``),
with upstream's messages, in the order of the replica specs as written."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training.validation import (
    validate_job,
    validate_job_update,
    validate_replica_specs,
)
from mpi_controller.kube.fielderrors import FieldError, forbidden


def job(specs: object, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "j"}, "spec": {"someReplicaSpecs": specs, **spec}}


def replica(*containers: dict[str, Any]) -> dict[str, Any]:
    return {"template": {"spec": {"containers": list(containers)}}}


def messages(errors: list[FieldError]) -> list[str]:
    return [str(e) for e in errors]


def test_the_replica_specs_are_required() -> None:
    assert messages(validate_replica_specs(job(None), "someReplicaSpecs", "some")) == [
        "spec.someReplicaSpecs: Required value: must be required"]
    assert validate_replica_specs(job({}), "someReplicaSpecs", "some") == []


def test_types_containers_images_and_the_default_container_in_order() -> None:
    specs = {"Bad": replica({"name": "other", "image": "i"}), "Worker": replica({"name": "x"}),
             "Master": "not an object"}
    assert messages(validate_replica_specs(job(specs), "someReplicaSpecs", "some",
                                           types=("Master", "Worker"))) == [
        'spec.someReplicaSpecs[Bad]: Unsupported value: "Bad": supported values: "Master", '
        '"Worker"',
        "spec.someReplicaSpecs[Bad].template.spec.containers: Required value: must have at least "
        "one container with name some",
        "spec.someReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must "
        "be required",
        "spec.someReplicaSpecs[Worker].template.spec.containers: Required value: must have at "
        "least one container with name some",
        "spec.someReplicaSpecs[Master].template.spec.containers: Required value: must be "
        "specified",
        "spec.someReplicaSpecs[Master].template.spec.containers: Required value: must have at "
        "least one container with name some"]


def test_the_container_name_quoted_and_the_kinds_own_check() -> None:
    def check(rtype: str, spec: object, path: str) -> list[FieldError]:
        return [forbidden(f"{path}.replicas", f"{rtype} checked")]

    errors = validate_replica_specs(job({"Worker": replica()}), "someReplicaSpecs", "some",
                                    quote_name=True, check=check)
    assert messages(errors) == [
        "spec.someReplicaSpecs[Worker].template.spec.containers: Required value: must be "
        "specified",
        'spec.someReplicaSpecs[Worker].template.spec.containers: Required value: must have at '
        'least one container with name "some"',
        "spec.someReplicaSpecs[Worker].replicas: Forbidden: Worker checked"]


def test_a_job_name_managed_by_then_the_spec() -> None:
    def spec_errors(body: Any) -> list[FieldError]:
        return [forbidden("spec", "checked")]

    bad = {"metadata": {"name": "A"}, "spec": {"runPolicy": {"managedBy": "me"}}}
    old = {"metadata": {"name": "A"}, "spec": {}}
    assert [e.field for e in validate_job(bad, spec_errors)] == [
        "metadata.name", "spec.runPolicy.managedBy", "spec"]
    assert [e.field for e in validate_job_update(old, bad, spec_errors)] == [
        "metadata.name", "spec.runPolicy.managedBy", "spec.runPolicy.managedBy", "spec"]
