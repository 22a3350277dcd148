"""The names of a made-up ``kubeflow.org/v1`` kind, ``SomeJob``, for the engine's tests (what a
kind's ``constants`` module gives: ``engine/training/names.py``)."""

from __future__ import annotations

KIND = "SomeJob"
PLURAL = "somejobs"
CONTROLLER_NAME = "somejob-controller"
FRAMEWORK_NAME = "some"
SPECS_FIELD = "someReplicaSpecs"
REPLICA_TYPES = ("Master", "Worker")
DEFAULT_CONTAINER_NAME = "some"
DEFAULT_PORT_NAME = "somejob-port"
DEFAULT_PORT = 1234
DEFAULT_RESTART_POLICY = "Never"
DELETE_JOB_REASONS = ("SuccessfulDeleteJob", "FailedDeleteJob")
