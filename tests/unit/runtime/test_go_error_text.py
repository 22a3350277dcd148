"""Event messages quote an API failure as Go's ``%v`` does: a ``StatusError`` prints its
``Status`` message alone (apimachinery ``StatusError.Error()``), so ``FailedCreatePod`` says
``Error creating: pods "a" already exists`` as training-operator's does, and ``MPIJobFailed``
``launcher pod created failed: Internal error occurred: ...`` as mpi-operator's does."""

from __future__ import annotations

from mpi_controller.kube.resources import PODS
from mpi_controller.runtime.errors import ApiError, go_error_text
from mpi_controller.testing import already_exists, internal_error


def test_a_status_error_is_its_message_alone() -> None:
    err = already_exists(PODS, "a")
    assert str(err) == '409 AlreadyExists: pods "a" already exists'  # the logs keep the code
    assert go_error_text(err) == 'pods "a" already exists'
    assert go_error_text(internal_error("etcd timeout")) == (
        "Internal error occurred: etcd timeout")


def test_an_answer_without_a_message_and_other_errors_print_as_they_are() -> None:
    assert go_error_text(ApiError(503, "ServiceUnavailable")) == "503 ServiceUnavailable"
    assert go_error_text(ValueError("bad")) == "bad"
