"""The fault runs' pure parts (e2e/chaos): the mixed workload's plans, the per-kind
invariants and tables, the webhook clients' outage windows and the webhook runs' table."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.chaos.kinds import (
    KINDS,
    attribute,
    index_beyond,
    kind_rows,
    kind_table,
    parse_kinds,
    plan_mixed,
    sampled_beyond,
)
from e2e.chaos.runner import webhook_table
from e2e.chaos.webhooks import Request, failure_summary, outages
from e2e.chaos.workload import pod_role, resource_of

PLANS = {p.name: p for p in plan_mixed(16, 2, min_s=3, max_s=5)}


def test_the_mixed_workload_takes_every_kind_in_turn_through_its_own_version() -> None:
    assert [p.key for p in list(PLANS.values())[:8]] == list(KINDS)
    got = {p.name: (p.body["apiVersion"], p.body["kind"]) for p in PLANS.values()
           if p.name.endswith("-000")}
    assert got == {
        "cj-mpi-000": ("kubeflow.org/v2beta1", "MPIJob"),
        "cj-mv1-000": ("kubeflow.org/v1", "MPIJob"),
        "cj-ma2-000": ("kubeflow.org/v1alpha2", "MPIJob"),
        "cj-tf-000": ("kubeflow.org/v1", "TFJob"),
        "cj-pt-000": ("kubeflow.org/v1", "PyTorchJob"),
        "cj-xgb-000": ("kubeflow.org/v1", "XGBoostJob"),
        "cj-pd-000": ("kubeflow.org/v1", "PaddleJob"),
        "cj-jax-000": ("kubeflow.org/v1", "JAXJob"),
    }
    assert resource_of(PLANS["cj-mv1-000"]) == ("v1", "mpijobs")
    assert resource_of(PLANS["cj-tf-000"]) == ("v1", "tfjobs")


def test_limits_per_replica_type_elastic_pytorchjobs_and_the_v1alpha2_statefulset() -> None:
    assert PLANS["cj-tf-000"].limits == {"ps": 2, "worker": 2}
    assert PLANS["cj-xgb-000"].limits == {"master": 1, "worker": 2}
    elastic = PLANS["cj-pt-000"]  # every third PyTorchJob, the first among them
    assert elastic.hpa
    assert elastic.limits == {"worker": 3}
    assert elastic.body["spec"]["elasticPolicy"]["maxReplicas"] == 3
    assert not PLANS["cj-pt-001"].hpa
    assert PLANS["cj-pt-001"].limits == {"master": 1, "worker": 1}
    assert PLANS["cj-ma2-000"].statefulset == 2
    assert PLANS["cj-mv1-000"].statefulset is None
    for spec in PLANS["cj-mv1-000"].body["spec"]["mpiReplicaSpecs"].values():
        assert all("resources" not in c for c in spec["template"]["spec"]["containers"])


def test_every_tenth_job_is_an_mpijob_v2beta1_whose_launcher_fails() -> None:
    plans = plan_mixed(20, 2, kinds=("mpijob-v2beta1",))
    assert [p.expected for p in plans].count("Failed") == 2
    assert plans[9].expected == "Failed"
    launcher = plans[9].body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"]
    assert launcher["annotations"]["sim.mpi-controller.io/exit-code"] == "1"


def test_kinds_flag() -> None:
    assert parse_kinds("all") == tuple(KINDS)
    assert parse_kinds("mpijob,tfjob") == ("mpijob-v2beta1", "mpijob-v1", "mpijob-v1alpha2",
                                           "tfjob")
    assert parse_kinds("jaxjob, mpijob-v1") == ("jaxjob", "mpijob-v1")
    with pytest.raises(ValueError, match="unknown kind 'bogus'"):
        parse_kinds("bogus")


def test_children_are_attributed_to_the_longest_matching_job() -> None:
    jobs = ["a", "a-b", "cj-tf-001"]
    assert attribute("a-b-worker-0", jobs) == "a-b"
    assert attribute("a-worker-0", jobs) == "a"
    assert attribute("cj-tf-001", jobs) == "cj-tf-001"
    assert attribute("cj-tf-0010-worker-0", jobs) is None


def test_pod_index_beyond_replicas_for_each_replica_type() -> None:
    created = ["cj-tf-000-ps-1", "cj-tf-000-ps-2", "cj-tf-000-worker-1",
               "cj-xgb-000-master-1", "cj-pt-000-worker-2", "cj-pt-000-worker-3",
               "cj-mpi-000-launcher-24567", "cj-mpi-000-worker-2", "other-worker-9"]
    assert index_beyond(created, PLANS) == ["cj-tf-000-ps-2", "cj-xgb-000-master-1",
                                            "cj-pt-000-worker-3", "cj-mpi-000-worker-2"]
    assert sampled_beyond({("cj-tf-000", "ps"): 3, ("cj-tf-000", "worker"): 2,
                           ("cj-mpi-000", "launcher"): 1}, PLANS) == {"cj-tf-000/ps": 1}


def test_pods_of_every_kind_and_version_by_their_labels() -> None:
    assert pod_role({"training.kubeflow.org/job-name": "j",
                     "training.kubeflow.org/replica-type": "Worker"}) == ("j", "worker")
    assert pod_role({"training.kubeflow.org/job-name": "j",
                     "training.kubeflow.org/job-role": "launcher"}) == ("j", "launcher")
    assert pod_role({"mpi_job_name": "j", "mpi_role_type": "worker"}) == ("j", "worker")
    assert pod_role({"app": "x"}) == (None, None)


def _rows(**seen: Any) -> dict[str, dict[str, Any]]:
    terminal = {n: p.expected for n, p in PLANS.items()}
    args: dict[str, Any] = {"terminal": terminal, "created_pods": [], "duplicates": {},
                            "max_pods": {}, "max_hpas": {}, "max_statefulset": {},
                            "orphans": []}
    args.update(seen)
    return kind_rows(PLANS, **args)


def test_a_clean_run_passes_for_every_kind() -> None:
    rows = _rows(max_hpas={"cj-pt-000": 1}, max_statefulset={"cj-ma2-000-worker": 2})
    assert list(rows) == list(KINDS)
    assert all(r["passed"] for r in rows.values())
    assert rows["tfjob"]["converged"] == rows["tfjob"]["jobs"] == 2


def test_each_invariant_fails_the_kind_it_belongs_to() -> None:
    terminal: dict[str, str | None] = {n: p.expected for n, p in PLANS.items()}
    terminal["cj-jax-000"] = None
    terminal["cj-pd-000"] = "Failed"
    rows = _rows(
        terminal=terminal,
        created_pods=["cj-xgb-001-worker-2"],
        duplicates={"services/ns/cj-tf-001-worker-0": 2,
                    "horizontalpodautoscalers/ns/cj-pt-000": 2,
                    "pods/ns/cj-mv1-000-launcher": 2},
        max_hpas={"cj-pt-000": 2},
        max_statefulset={"cj-ma2-001-worker": 3},
        orphans=["pod/cj-mpi-001-worker-0", "hpa/cj-pt-000"])
    assert rows["jaxjob"]["stuck"] == ["cj-jax-000"]
    assert rows["paddlejob"]["wrong"] == {"cj-pd-000": "Failed"}
    assert rows["xgboostjob"]["pods_beyond_replicas"] == ["cj-xgb-001-worker-2"]
    assert rows["tfjob"]["services_twice"] == ["services/ns/cj-tf-001-worker-0"]
    assert rows["pytorchjob"]["hpa_duplicated"] == [
        "horizontalpodautoscalers/ns/cj-pt-000", "cj-pt-000: 2 at once"]
    assert rows["mpijob-v1"]["duplicates"] == {"pods/ns/cj-mv1-000-launcher": 2}
    assert rows["mpijob-v1alpha2"]["statefulset_beyond_workers"] == {"cj-ma2-001-worker": 3}
    assert rows["mpijob-v2beta1"]["orphans"] == ["pod/cj-mpi-001-worker-0"]
    assert rows["pytorchjob"]["orphans"] == ["hpa/cj-pt-000"]
    assert {k for k, r in rows.items() if not r["passed"]} == set(KINDS)
    assert rows["jaxjob"]["violations"] == ["1 stuck, 0 wrong"]
    assert rows["pytorchjob"]["violations"] == ["created twice: 1", "HPA duplicated: 2",
                                                "orphans: 1"]


def test_the_per_kind_table() -> None:
    rows = _rows(created_pods=["cj-jax-001-worker-5"])
    text = kind_table([{"run": "crashes", "kinds": rows}, {"run": "old-record"}])
    lines = text.splitlines()
    assert len(lines) == 2 + len(KINDS)
    assert lines[2] == "| crashes | mpijob-v2beta1 | 2/2 | 0 | 0 (0) | 0 | 0 | 0 | pass |"
    assert lines[-1] == ("| crashes | jaxjob | 2/2 | 1 | 0 (0) | 0 | 0 | 0 | "
                         "FAIL: pods beyond replicas: 1 |")


def _requests(pattern: str, step: float = 1.0) -> list[Request]:
    return [Request(at=i * step, op="get-v1", ok=c == ".", error="" if c == "." else "refused")
            for i, c in enumerate(pattern)]


def test_outages_are_windows_of_failed_requests_from_the_last_success() -> None:
    got = outages(_requests("..xx.x...xxx"))
    assert got == [
        {"start": 2.0, "end": 4.0, "length_s": 3.0, "failed": 2},
        {"start": 5.0, "end": 6.0, "length_s": 2.0, "failed": 1},
        {"start": 9.0, "end": None, "length_s": None, "failed": 3},
    ]
    assert outages(_requests("....")) == []
    assert outages(_requests("x.")) == [{"start": 0.0, "end": 1.0, "length_s": 1.0,
                                         "failed": 1}]


def test_failure_summary_and_webhook_table() -> None:
    reqs = _requests("..x.")
    summary = failure_summary(reqs)
    assert (summary["requests"], summary["failed"], summary["failed_share"]) == (4, 1, 0.25)
    assert summary["by_op"] == {"get-v1": {"requests": 4, "failed": 1}}
    assert summary["reasons"] == ["refused"]
    rec = {"run": "webhook-kills-1", "fault": "SIGKILL x3", "replicas": 1, **summary,
           "failed_in_flight_at_kill": 0, "audit_5xx": 1, "apiserver_log_conversion_failures": 4,
           "outages": 1, "outage_s": {"count": 1, "max": 2.0, "total": 2.0}, "passed": True,
           "violations": []}
    crashed = {"run": "cert-rotation", "fault": "cert-rotation", "passed": False,
               "violations": ["run crashed: boom"]}
    lines = webhook_table([rec, crashed]).splitlines()
    assert lines[2] == ("| webhook-kills-1 | SIGKILL x3 | 1 | 4 | 1 (0.25; 0) | 1 | 4 | "
                        "1 (2.0, 2.0) | pass |")
    assert lines[3] == "| cert-rotation | cert-rotation | | | | | | | FAIL: run crashed: boom |"


# -- hostile input for every kind ---------------------------------------------------------------


def test_bad_jobs_of_every_kind_each_name_a_field_their_validation_names() -> None:
    """Every kind but MPIJob v2beta1 (its own generator) gets bad jobs, created through its
    own version; generation checked each against the kind's pure validation."""
    from e2e.chaos.hostile_kinds import generate_for_kinds

    jobs = generate_for_kinds(tuple(KINDS), 6, seed=3)
    assert sorted({j.key for j in jobs}) == sorted(k for k in KINDS if k != "mpijob-v2beta1")
    assert all(len([j for j in jobs if j.key == k]) == 6 for k in {j.key for j in jobs})
    assert {(j.key, j.version, j.plural) for j in jobs if j.key.startswith("mpijob")} == {
        ("mpijob-v1", "v1", "mpijobs"), ("mpijob-v1alpha2", "v1alpha2", "mpijobs")}
    assert len({j.name for j in jobs}) == len(jobs)
    again = generate_for_kinds(tuple(KINDS), 6, seed=3)
    assert [(j.name, j.field) for j in again] == [(j.name, j.field) for j in jobs]


def test_a_field_is_named_with_its_map_key_in_either_notation() -> None:
    from e2e.chaos.hostile_kinds import names_field

    field = "spec.mpiReplicaSpecs[Worker].replicas"
    assert names_field(field, f"{field}: Invalid value: -1")
    assert names_field(field, "spec.mpiReplicaSpecs.Worker.replicas in body should be >= 1")
    assert not names_field(field, "spec.mpiReplicaSpecs[Launcher].replicas: Invalid value")


def test_at_limit_jobs_of_the_training_kinds() -> None:
    from e2e.chaos.hostile_kinds import at_limit_jobs

    jobs = at_limit_jobs(("tfjob", "mpijob-v2beta1"))
    assert [(k, what, plan.expected) for k, what, plan in jobs] == [
        ("tfjob", "longest name", "Succeeded"),
        ("tfjob", "1 MiB of env and unicode", "Succeeded"),
        ("tfjob", "3000 workers (suspended)", "Suspended")]
    longest = jobs[0][2].name
    assert len(f"{longest}-worker-0") == 62
    env = jobs[1][2].body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"][
        "containers"][0]["env"]
    assert sum(len(e["value"]) for e in env if e["name"].startswith("BIG_")) == 1024 * 1024
    assert jobs[2][2].workers == 3000
