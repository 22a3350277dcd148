"""Short fault runs (``make test``): the ``e2e.chaos`` runs at a small size against the shared
test cluster, using the session controller. No API server restarts here (``make chaos`` has
them, on a cluster of its own): controller kills, lost watches (etcd compaction while the
controller is stopped), failover between two identities, and hostile input, each with a
workload of MPIJobs and TFJobs (the per-kind invariants of :mod:`e2e.chaos.kinds`); and one
webhook fault: two webhook-serving replicas killed in turn while clients go through MPIJob
``v1`` and ``v1alpha2``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e.chaos.runner import (
    Context,
    Replica,
    run_crashes,
    run_failover,
    run_hostile,
    run_lost_watches,
)
from e2e.chaos.webhook_runs import run_webhook_kills
from tests.processes import ControllerProcess
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster

KINDS = ("mpijob-v2beta1", "tfjob")
"""MPIJob v2beta1 and one kind of the training operator (no conversion webhook needed)."""


def _adopt(proc: ControllerProcess) -> Replica:
    """The session controller as a chaos Replica (its current incarnation's log offset)."""
    if not isinstance(proc, Replica):
        proc.__class__ = Replica
    rep = proc
    assert isinstance(rep, Replica)
    text = rep.log_path.read_bytes()
    rep.offset = max(text.rfind(b"mpi-controller starting"), 0)
    return rep


@pytest.fixture
def ctx(cluster: Cluster, controller: ControllerProcess, tmp_path: Path) -> Iterator[Context]:
    state = Path(cluster.kubeconfig).parent
    audit_log = state / "logs" / "audit.log"
    if not cluster.local or not isinstance(controller, ControllerProcess) \
            or not audit_log.exists():
        pytest.skip("needs the local cluster (audit log) and the controller as a process")
    rep = _adopt(controller)
    yield Context(
        kubeconfig=cluster.kubeconfig,
        controller_kubeconfigs=(str(state / "kubeconfig-controller"),
                                str(state / "kubeconfig-controller-2")),
        audit_log=audit_log, out_dir=tmp_path, jobs=10, workers=2, kills=2, min_s=3, max_s=8,
        invalid=12, converge_timeout=180, given=[rep], kinds=KINDS, webhook_seconds=25,
        cluster_env={"MPI_CONTROLLER_CLUSTER_DIR": str(state)})
    # Later tests need the session controller up and leading.
    if not rep.alive():
        rep.start()
    wait_for(rep.leading, timeout=60, what="the session controller to lead again")


def _check(rec: dict[str, Any]) -> None:
    detail = json.dumps(rec, indent=1)[:4000]
    assert rec["passed"], detail
    assert rec["converged"] == rec["expected"], detail
    assert not rec["duplicates"], detail
    assert not rec["orphans"], detail
    assert not rec["secret_leaks"], detail
    assert set(rec["kinds"]) == set(KINDS), detail
    assert all(row["passed"] for row in rec["kinds"].values()), detail


def test_controller_kills(ctx: Context) -> None:
    rec = run_crashes(ctx)
    _check(rec)
    assert rec["recovery_s"]["count"] >= ctx.kills


def test_lost_watches_and_jobs_deleted_while_stopped(ctx: Context) -> None:
    rec = run_lost_watches(ctx, restart_apiserver=False, pause=4.0)
    _check(rec)
    assert rec["deleted_while_stopped"]
    assert rec["recovery_s"]["count"] >= 1


def test_failover_between_two_identities(ctx: Context, tmp_path: Path) -> None:
    second = Replica(ctx.controller_kubeconfigs[1], tmp_path / "replica-2.log")
    second.start()
    ctx.given.append(second)
    try:
        rec = run_failover(ctx)
    finally:
        if second.alive():  # once its signal handlers are in place, SIGTERM exits 0
            wait_for(lambda: "attempting to acquire" in second.current_log(), timeout=30,
                     what="the second replica to start")
            assert second.stop() == 0
    _check(rec)
    assert rec["leaders"][0] != rec["leaders"][1]
    assert rec["released_lease"]
    assert rec["sigterm_exit_code"] == 0
    assert {e["user"] for e in rec["writer_epochs"]} <= {"mpi-controller", "mpi-controller-2"}
    assert all(gap > 0 for gap in rec["handover_gaps_s"]), rec["writer_epochs"]


def test_hostile_input(ctx: Context) -> None:
    rec = run_hostile(ctx)
    _check(rec)
    assert rec["validation_events_naming_field"] == rec["invalid_admitted"] > 0
    assert set(rec["at_limits"].values()) <= {"Succeeded", "Suspended"}
    assert not rec["unplanned_restarts"]


def test_webhook_replicas_killed_in_turn(ctx: Context, tmp_path: Path) -> None:
    """Two webhook-serving replicas, each SIGKILLed in turn (the other ready): no request of
    the clients through v1/v1alpha2 fails but those in flight on the killed replica."""
    rec = run_webhook_kills(ctx, replicas=2)
    (tmp_path / "webhook-kills-2.json").write_text(json.dumps(rec, indent=1))
    detail = json.dumps({k: rec.get(k) for k in ("violations", "failures", "faults", "by_op")},
                        indent=1)[:4000]
    assert rec["passed"], detail
    assert rec["requests"] > 20, detail
    assert len(rec["faults"]) >= 2, detail
    assert rec["failed"] == rec["failed_in_flight_at_kill"], detail
