"""conformance.differential's comparison (pure): ownership, normalization, events, context."""

import copy
from typing import Any

from conformance.corpus import Case
from conformance.differential import (
    WEBHOOK_CONFIGURATION,
    SideRun,
    case_context,
    compare_case,
    crd_at_version,
    created_again_context,
    event_burst_context,
    owned_by,
    recreated_context,
    webhook_flags,
)
from conformance.kinds import MPIJOB_V2BETA1
from conformance.kube import Seen

Obj = dict[str, Any]


def _objects(ns: str, tag: str, *, running_seen: bool = True) -> dict[tuple[str, str], Seen]:
    job = {"kind": "MPIJob", "metadata": {"name": "pi", "namespace": ns, "uid": f"{tag}-job"},
           "status": {"conditions": [
               {"type": "Created", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
               {"type": "Running", "status": "False", "reason": "MPIJobRunning",
                "message": f"MPIJob {ns}/pi is " + ("running." if running_seen else
                                                     "finished but Running condition was "
                                                     "never set.")}]}}
    owner = [{"kind": "MPIJob", "name": "pi", "uid": f"{tag}-job", "controller": True}]
    cm = {"kind": "ConfigMap", "metadata": {"name": "pi-config", "namespace": ns,
                                            "uid": f"{tag}-cm", "ownerReferences": owner},
          "data": {"hostfile": f"pi-worker-0.pi.{ns}.svc slots=1\n"}}
    launcher = {"kind": "Job", "metadata": {"name": "pi-launcher", "uid": f"{tag}-l",
                                            "ownerReferences": owner}}
    pod = {"kind": "Pod", "metadata": {
        "name": f"pi-launcher-{tag}x", "generateName": "pi-launcher-", "uid": f"{tag}-p",
        "ownerReferences": [{"kind": "Job", "name": "pi-launcher", "uid": f"{tag}-l"}]}}
    foreign = {"kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt", "uid": f"{tag}-r"}}
    event = {"kind": "Event", "metadata": {"name": f"pi.{tag}", "uid": f"{tag}-e"},
             "type": "Normal", "reason": "MPIJobCreated", "message": f"MPIJob {ns}/pi is created.",
             "count": 1, "source": {"component": "mpi-job-controller"},
             "involvedObject": {"kind": "MPIJob", "name": "pi", "namespace": ns}}
    objs: list[Obj] = [job, cm, launcher, pod, foreign, event]
    return {(o["kind"], o["metadata"]["name"]): Seen(created=o, last=copy.deepcopy(o))
            for o in objs}


def _run(side: str, objects: dict[tuple[str, str], Seen], ns: str) -> SideRun:
    return SideRun(side, ns, objects, {}, {}, 1.0, 10.0, 0)


CASE = Case(name="pi", description="", group="default", short=True, manifest={})


def test_owned_by_follows_owner_chains_and_skips_events_and_foreign_objects() -> None:
    objs = _objects("ns-a", "a")
    assert owned_by(objs, ("MPIJob", "pi")) == [
        ("ConfigMap", "pi-config"), ("Job", "pi-launcher"), ("MPIJob", "pi"),
        ("Pod", "pi-launcher-ax")]


def test_same_behaviour_in_two_namespaces_has_no_difference() -> None:
    go = _run("go", _objects("conf-go-1", "g"), "conf-go-1")
    ours = _run("ours", _objects("conf-ours-2", "o"), "conf-ours-2")
    diffs, compared = compare_case(MPIJOB_V2BETA1, CASE, go, ours)
    assert diffs == []
    assert compared == 4


def test_a_changed_field_an_extra_object_and_a_missing_event_are_reported() -> None:
    go = _run("go", _objects("conf-go-1", "g"), "conf-go-1")
    theirs = _objects("conf-ours-2", "o")
    theirs[("ConfigMap", "pi-config")].last["data"]["hostfile"] = "other\n"
    theirs[("ConfigMap", "pi-config")].deleted = True
    del theirs[("Event", "pi.o")]
    ours = _run("ours", theirs, "conf-ours-2")
    found = {(d.obj, d.phase, d.path): (d.go, d.ours)
             for d in compare_case(MPIJOB_V2BETA1, CASE, go, ours)[0]}
    assert found == {
        ("ConfigMap/pi-config", "final", "data.hostfile"): ("pi-worker-0.pi.<ns>.svc slots=1\n",
                                                            "other\n"),
        ("ConfigMap/pi-config", "final", "deleted"): (False, True),
        ("events", "events", '["Normal MPIJobCreated: MPIJob <ns>/pi is created."]'): (
            {"count": 1, "source": "mpi-job-controller", "reportingComponent": None,
             "involvedObject": {"kind": "MPIJob", "name": "pi", "namespace": "<ns>"}},
            "<absent>"),
    }


def test_context_when_only_one_side_never_saw_the_job_running() -> None:
    seen = _objects("a", "a")[("MPIJob", "pi")]
    missed = _objects("b", "b", running_seen=False)[("MPIJob", "pi")]
    assert case_context(seen, missed) == "running-unobserved-by-ours"
    assert case_context(missed, seen) == "running-unobserved-by-go"
    assert case_context(missed, missed) == ""
    assert case_context(seen, seen) == ""
    go = _run("go", _objects("conf-go-1", "g"), "conf-go-1")
    ours = _run("ours", _objects("conf-ours-2", "o", running_seen=False), "conf-ours-2")
    diffs, _ = compare_case(MPIJOB_V2BETA1, CASE, go, ours)
    assert diffs
    assert {d.context for d in diffs} == {"running-unobserved-by-ours"}


def test_a_case_that_no_longer_gets_its_expected_create_error_fails() -> None:
    refused = Case(name="pi", description="", group="default", short=False, manifest={},
                   create_error=True)
    go = _run("go", _objects("conf-go-1", "g"), "conf-go-1")
    ours = _run("ours", _objects("conf-ours-2", "o"), "conf-ours-2")
    diffs, _ = compare_case(MPIJOB_V2BETA1, refused, go, ours)
    assert [(d.obj, d.phase, d.go, d.ours) for d in diffs] == [("create", "expected", False,
                                                                 False)]
    go.create_errors["pi"] = ours.create_errors["pi"] = 'MPIJob "pi" is invalid'
    assert compare_case(MPIJOB_V2BETA1, refused, go, ours)[0] == []


def _creates(**counts: int) -> dict[str, Obj]:
    return {f"Normal SuccessfulCreatePod: Created pod: {name}": {"count": n}
            for name, n in counts.items()}


def test_created_again_context_when_the_reference_created_a_child_more_often() -> None:
    again = _creates(a=2, b=1)
    once = _creates(a=1, b=1)
    assert created_again_context(again, once) == "created-again-by-go"
    assert created_again_context(once, again) == ""  # ours creating more is not explained
    assert created_again_context(again, again) == ""  # both restarted the pod
    assert created_again_context(_creates(c=1), {}) == ""  # ours never made it (invalid)
    other = {"Normal SuccessfulDeletePod: Deleted pod: a": {"count": 3}}
    assert created_again_context(other, {}) == ""


def _job(*conditions: tuple[str, str]) -> Seen:
    job = {"kind": "MPIJob", "metadata": {"name": "pi"},
           "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]}}
    return Seen(created=job, last=job)


def test_a_training_operator_job_that_finished_without_a_running_condition_is_unobserved() -> None:
    """training-operator never writes "never set": a finished job without any Running
    condition was not seen running (MPIJob v1's first-reconcile counts)."""
    skipped = _job(("Created", "True"), ("Succeeded", "True"))
    ran = _job(("Created", "True"), ("Running", "False"), ("Succeeded", "True"))
    running = _job(("Created", "True"), ("Running", "True"))
    assert case_context(skipped, ran) == "running-unobserved-by-go"
    assert case_context(ran, skipped) == "running-unobserved-by-ours"
    assert case_context(_job(("Created", "True")), running) == ""  # not finished: not a miss
    assert case_context(ran, ran) == ""


def test_event_burst_context_from_the_reference_events_on_the_job() -> None:
    """client-go's spam filter lets 25 Events per source and object through in a burst."""
    assert event_burst_context({"a": {"count": 20}, "b": {"count": 5}}) == "event-burst-by-go"
    assert event_burst_context({"a": {"count": 20}, "b": {"count": 4}}) == ""
    assert event_burst_context({}) == ""


def test_recreated_context_when_the_reference_created_an_object_again_after_deleting_it() -> None:
    pod = {"metadata": {"name": "pi-launcher"}}
    again, once = Seen(pod, pod, recreated=1), Seen(pod, pod)
    assert recreated_context({"Pod/pi-launcher": again}, {"Pod/pi-launcher": once}) == (
        "created-again-by-go")
    assert recreated_context({"Pod/pi-launcher": once}, {"Pod/pi-launcher": again}) == ""
    assert recreated_context({"Pod/pi-launcher": again}, {}) == ""  # ours never made it


def test_contexts_of_a_case_are_joined() -> None:
    go = _run("go", _objects("conf-go-1", "g", running_seen=False), "conf-go-1")
    ours = _run("ours", _objects("conf-ours-2", "o"), "conf-ours-2")
    for i in range(25):  # 25 Events of the reference operator on the job
        ev: Obj = {"kind": "Event", "metadata": {"name": f"pi.{i}", "uid": f"e{i}"},
                   "type": "Normal", "reason": f"E{i}", "message": "m", "count": 1,
                   "involvedObject": {"kind": "MPIJob", "name": "pi"}}
        go.objects[("Event", f"pi.{i}")] = Seen(ev, ev)
    diffs, _ = compare_case(MPIJOB_V2BETA1, CASE, go, ours)
    assert {d.context for d in diffs} == {"running-unobserved-by-go,event-burst-by-go"}


def test_crd_at_version_keeps_that_entry_of_the_versions_only() -> None:
    crd: Obj = {"kind": "CustomResourceDefinition", "metadata": {"name": "mpijobs.kubeflow.org"},
           "spec": {"group": "kubeflow.org", "conversion": {"strategy": "Webhook"},
                    "versions": [{"name": "v2beta1", "storage": True},
                                 {"name": "v1", "storage": False}, {"name": "v1alpha2"}]}}
    assert crd_at_version(crd, "v1") == {
        "kind": "CustomResourceDefinition", "metadata": {"name": "mpijobs.kubeflow.org"},
        "spec": {"group": "kubeflow.org", "conversion": {"strategy": "Webhook"},
                 "versions": [{"name": "v1", "storage": False}]}}
    assert len(crd["spec"]["versions"]) == 3  # not changed in place


def test_ours_serves_its_webhooks_on_the_loopback_address() -> None:
    assert webhook_flags(9555) == [
        "--webhooks", "on", "--webhook-server-port", "9555",
        "--webhook-url", "https://127.0.0.1:9555", "--webhook-namespace", "mpi-operator",
        "--webhook-configuration-name", WEBHOOK_CONFIGURATION]
