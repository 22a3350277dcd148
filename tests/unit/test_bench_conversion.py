"""bench/conversion_bench.py (pure parts): the cost of conversion per job from the medians."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support import REPO

sys.path.insert(0, str(Path(REPO) / "bench"))
import conversion_bench  # bench/conversion_bench.py


def test_the_cost_per_job_is_the_difference_of_the_medians_over_the_jobs() -> None:
    rows = [{"request": "list", "version": "v2beta1", "concurrency": 20, "p50_ms": 100.0},
            {"request": "list", "version": "v1", "concurrency": 20, "p50_ms": 350.0},
            {"request": "list", "version": "v2beta1", "concurrency": 100, "p50_ms": 400.0},
            {"request": "list", "version": "v1", "concurrency": 100, "p50_ms": None},
            {"request": "get", "version": "v2beta1", "concurrency": 20, "p50_ms": 4.0},
            {"request": "get", "version": "v1", "concurrency": 20, "p50_ms": 6.5}]
    assert conversion_bench.per_job_cost(rows, 1000) == {
        "get": {20: 2.5}, "list": {20: 0.25, 100: None}}


def test_a_get_asks_for_a_different_job_each_and_a_list_for_the_namespace() -> None:
    base = "/apis/kubeflow.org/v1/namespaces/ns/mpijobs"
    assert conversion_bench._paths("list", "v1", "ns", 3, 1000, 0) == [base] * 3
    assert conversion_bench._paths("get", "v1", "ns", 3, 4, 2) == [
        f"{base}/job-0002", f"{base}/job-0003", f"{base}/job-0000"]


def test_a_percentile_is_a_sample_of_the_values() -> None:
    values = [float(v) for v in range(1, 101)]
    assert conversion_bench._percentile(values, 0.95) == 95.0
    assert conversion_bench._percentile(values, 1.0) == 100.0
    assert conversion_bench._percentile([3.0], 0.5) == 3.0
