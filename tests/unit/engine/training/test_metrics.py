"""The training_operator_jobs_* counters count transitions once."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training.metrics import count_transitions, transitions
from mpi_controller.runtime.metrics import REGISTRY


def cond(ctype: str, status: str = "True", at: str = "t0") -> dict[str, Any]:
    return {"type": ctype, "status": status, "lastTransitionTime": at}


def test_transitions() -> None:
    assert transitions({}, {"conditions": [cond("Created")]}) == ["Created"]
    running = {"conditions": [cond("Created"), cond("Running")]}
    done = {"conditions": [cond("Created"), cond("Running", "False"), cond("Succeeded")]}
    assert transitions(running, done) == ["Succeeded"]
    assert transitions(done, done) == []
    restarting = {"conditions": [cond("Created"), cond("Restarting")]}
    assert transitions(running, restarting) == ["Restarting"]
    assert transitions(restarting, restarting) == []
    again = {"conditions": [cond("Created"), cond("Restarting", at="t1")]}
    assert transitions(restarting, again) == ["Restarting"]
    failed = {"conditions": [cond("Created"), cond("Failed")]}
    assert transitions(running, failed) == ["Failed"]


def test_count_transitions_labels_namespace_and_framework() -> None:
    def value(name: str) -> float:
        return REGISTRY.get_sample_value(f"training_operator_jobs_{name}_total",
                                         {"job_namespace": "m", "framework": "x"}) or 0.0
    before = value("created"), value("failed")
    count_transitions({}, {"conditions": [cond("Created"), cond("Failed")]}, namespace="m",
                      framework="x")
    assert (value("created"), value("failed")) == (before[0] + 1, before[1] + 1)
