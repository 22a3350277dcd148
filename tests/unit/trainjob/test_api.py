"""The TrainJob's defaults and the plugins' checks (Trainer v2.3.0 ``trainjob_types.go``
defaults, ``plugins/torch/torch.go`` and ``plugins/xgboost/xgboost.go`` ``Validate``)."""

from __future__ import annotations

from mpi_controller.trainjob.api import managed_elsewhere, runtime_key, set_defaults, validate

TORCH = {"mlPolicy": {"torch": {}}}
XGBOOST = {"mlPolicy": {"xgboost": {}}}


def test_defaults() -> None:
    job = {"metadata": {"name": "a"}, "spec": {"runtimeRef": {"name": "torch-distributed"}}}
    assert set_defaults(job)["spec"] == {
        "runtimeRef": {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org",
                       "kind": "ClusterTrainingRuntime"},
        "suspend": False, "managedBy": "trainer.kubeflow.org/trainjob-controller"}
    assert job["spec"] == {"runtimeRef": {"name": "torch-distributed"}}  # a copy
    assert runtime_key(set_defaults(job)) == "ClusterTrainingRuntime.trainer.kubeflow.org"


def test_managed_by_multikueue_is_left_alone() -> None:
    assert managed_elsewhere({"spec": {"managedBy": "kueue.x-k8s.io/multikueue"}})
    assert not managed_elsewhere(
        {"spec": {"managedBy": "trainer.kubeflow.org/trainjob-controller"}})
    assert not managed_elsewhere({"spec": {}})


def test_torch_reserved_envs() -> None:
    job = {"spec": {"trainer": {"env": [{"name": "PET_NNODES", "value": "1"},
                                        {"name": "PET_MASTER_PORT", "value": "1"},
                                        {"name": "OK", "value": "1"}]}}}
    errors = validate(job, TORCH)
    assert [e.field for e in errors] == ["spec.trainer.env"]
    assert str(errors[0]).endswith(
        "must not have reserved envs, invalid envs configured: [PET_MASTER_PORT PET_NNODES]")
    assert validate(job, XGBOOST) == []


def test_xgboost_reserved_envs_are_forbidden_one_by_one() -> None:
    job = {"spec": {"trainer": {"env": [{"name": "OK", "value": "1"},
                                        {"name": "DMLC_TASK_ID", "value": "1"}]}}}
    assert [str(e) for e in validate(job, XGBOOST)] == [
        "spec.trainer.env[1]: Forbidden: DMLC_TASK_ID is reserved for the XGBoost runtime"]
    assert validate(job, TORCH) == []
