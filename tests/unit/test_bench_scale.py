"""bench/scale.py's pure helpers: the workload's sizes and jobs, the metrics check that says
every job was reconciled, the RSS slope and the sizing model; the harness keeps the
hand-written sections of docs/performance.md."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support import REPO

sys.path.insert(0, str(Path(REPO) / "bench"))
import harness  # bench/harness.py
import scale  # bench/scale.py


def test_the_full_size_is_2000_mpijobs_and_1000_pytorchjobs_of_about_22000_pods() -> None:
    assert scale.sizes(1.0) == (2000, 1000)
    assert scale.sizes(0.25) == (500, 250)
    assert scale.sizes(0.0001) == (1, 1)
    assert scale.pods_of(2000, 1000) == 2000 * 9 + 1000 * 4 == 22000
    assert scale.halves(5) == (2, 3)


def test_the_jobs_run_for_a_day_and_the_kinds_arrive_mixed() -> None:
    jobs = scale.bodies(range(4), range(2))
    assert [j["metadata"]["name"] for j in jobs] == [
        "mpi-00000", "pt-00000", "mpi-00001", "mpi-00002", "pt-00001", "mpi-00003"]
    mpi = jobs[0]["spec"]["mpiReplicaSpecs"]
    assert mpi["Worker"]["replicas"] == 8
    assert mpi["Launcher"]["template"]["metadata"]["annotations"] == {
        "sim.mpi-controller.io/duration": "24h"}
    pt = jobs[1]["spec"]["pytorchReplicaSpecs"]
    assert {t: s["replicas"] for t, s in pt.items()} == {"Master": 1, "Worker": 3}
    assert all(s["template"]["metadata"]["annotations"] == {
        "sim.mpi-controller.io/duration": "24h"} for s in pt.values())
    assert [j["metadata"]["name"] for j in scale.bodies(range(2, 3), range(0))] == ["mpi-00002"]


METRICS = """\
# HELP controller_runtime_reconcile_total syncs
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="MPIJob",result="success"} 9.0
controller_runtime_reconcile_total{controller="MPIJob",result="error"} 1.0
controller_runtime_reconcile_total{controller="PyTorchJob",result="success"} 5.0
workqueue_depth{name="MPIJob"} 0.0
workqueue_depth{name="PyTorchJob"} 2.0
controller_runtime_active_workers{controller="MPIJob"} 0.0
controller_runtime_active_workers{controller="PyTorchJob"} 0.0
"""


def test_every_job_is_reconciled_when_each_kind_synced_its_jobs_and_has_nothing_queued() -> None:
    assert scale.metric_sum(METRICS, "controller_runtime_reconcile_total",
                            {"controller": "MPIJob"}) == 10.0
    assert scale.metric_sum(METRICS, "workqueue_depth", {}) == 2.0
    assert scale.reconciled(METRICS, {"MPIJob": 10})
    assert not scale.reconciled(METRICS, {"MPIJob": 11})
    assert not scale.reconciled(METRICS, {"MPIJob": 10, "PyTorchJob": 5})  # 2 queued
    drained = METRICS.replace('workqueue_depth{name="PyTorchJob"} 2.0',
                              'workqueue_depth{name="PyTorchJob"} 0.0')
    assert scale.reconciled(drained, {"MPIJob": 10, "PyTorchJob": 5})


def test_the_slope_and_the_model() -> None:
    mib = 2**20
    points = [(0, 50 * mib), (10_000, 70 * mib), (20_000, 90 * mib)]
    assert scale.slope(points) == 2 * mib / 1000
    assert scale.slope([(10, 1), (10, 2)]) is None
    m = scale.model(points=points, cpu_ms_per_job=40.0, synced_s=10.0, pods=20_000,
                    writes_per_job=20.0, qps=100)
    assert m == {"bytes_per_pod": 2097, "mb_per_1000_pods": 2.0, "empty_rss_mb": 50.0,
                 "pods_per_gb": 512_000, "pods_in_512mi_limit": 231_000,
                 "jobs_per_s_one_core": 25.0, "jobs_per_s_at_qps": 5.0,
                 "synced_s_per_1000_pods": 0.5}
    # Without a point at 0 pods the empty cache is the intercept.
    assert scale.model(points=points[1:], cpu_ms_per_job=None, synced_s=None,
                       pods=0)["empty_rss_mb"] == 50.0


def test_the_docs_keep_their_hand_written_scale_section(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    assert harness.kept_sections(doc) == ""
    doc.write_text("# Performance\n\n| a | b |\n\n## Scale\n\nThe model.\n")
    assert harness.kept_sections(doc) == "\n## Scale\n\nThe model.\n"
    doc.write_text("# Performance\n\n| a | b |\n")
    assert harness.kept_sections(doc) == ""
    # a kept heading that goes on after a colon starts the kept text too; a longer heading
    # that only begins with the same words does not
    doc.write_text("# Performance\n\n| a |\n\n## CPU per jobs seen\n\nx\n\n"
                   "## Issue 29, latency and CPU per job: before and after\n\nFigures.\n\n"
                   "## Scale\n\nThe model.\n")
    assert harness.kept_sections(doc) == (
        "\n## Issue 29, latency and CPU per job: before and after\n\nFigures.\n\n"
        "## Scale\n\nThe model.\n")
