"""conformance.normalize: placeholders for what no operator chooses, everything else kept."""

import base64
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conformance.normalize import Context, build_context, normalize, summarize_events

NS = "conf-default-go-ab12c"


def _objects() -> list[dict[str, Any]]:
    job = {"kind": "MPIJob", "metadata": {"name": "pi", "uid": "u-job", "namespace": NS}}
    launcher = {"kind": "Job", "metadata": {
        "name": "pi-launcher", "uid": "u-launcher", "namespace": NS,
        "labels": {"batch.kubernetes.io/controller-uid": "u-launcher"},
        "ownerReferences": [{"kind": "MPIJob", "name": "pi", "uid": "u-job", "controller": True}],
        "creationTimestamp": "2026-01-02T03:04:05Z", "resourceVersion": "123",
        "managedFields": [{"manager": "mpi-operator", "operation": "Update",
                           "time": "2026-01-02T03:04:05Z"}]}}
    pods = [{"kind": "Pod", "metadata": {"name": name, "generateName": "pi-launcher-",
                                         "uid": f"u-{name}", "creationTimestamp": ts},
             "spec": {"nodeName": "kwok-node-3"},
             "status": {"podIP": "10.244.0.7", "podIPs": [{"ip": "10.244.0.7"}],
                        "startTime": "2026-01-02T03:04:06.123456Z"}}
            for name, ts in (("pi-launcher-zz9xk", "2026-01-02T03:04:09Z"),
                             ("pi-launcher-abcde", "2026-01-02T03:04:07Z"))]
    return [job, launcher, *pods]


def test_uids_generated_names_namespace_times_and_volatile_fields() -> None:
    objs = _objects()
    ctx = build_context(NS, objs)
    launcher = normalize(objs[1], ctx)
    assert launcher["metadata"] == {
        "name": "pi-launcher", "uid": "<uid Job/pi-launcher>", "namespace": "<ns>",
        "labels": {"batch.kubernetes.io/controller-uid": "<uid Job/pi-launcher>"},
        "ownerReferences": [{"kind": "MPIJob", "name": "pi", "uid": "<uid MPIJob/pi>",
                             "controller": True}],
        "creationTimestamp": "<time>",
        "managedFields": [{"manager": "mpi-operator", "operation": "Update"}]}
    # Generated names are numbered in creation order, not by their random suffix.
    first = normalize(objs[3], ctx)
    assert first["metadata"]["name"] == "pi-launcher-<1>"
    assert first["metadata"]["uid"] == "<uid Pod/pi-launcher-<1>>"
    assert first["spec"] == {"nodeName": "<node>"}
    assert first["status"] == {"podIP": "<ip>", "podIPs": [{"ip": "<ip>"}],
                               "startTime": "<time>"}
    assert normalize(objs[2], ctx)["metadata"]["name"] == "pi-launcher-<2>"


def test_strings_keep_everything_but_the_placeholders() -> None:
    ctx = build_context(NS, _objects())
    assert ctx.text(f"pi-worker-0.pi.{NS}.svc slots=1") == "pi-worker-0.pi.<ns>.svc slots=1"
    assert ctx.text("Created pod: pi-launcher-abcde") == "Created pod: pi-launcher-<1>"
    assert ctx.text("2026-01-02 not a timestamp") == "2026-01-02 not a timestamp"
    assert ctx.text("u-job") == "<uid MPIJob/pi>"


def _ssh_secret(private_for_public: ec.EllipticCurvePrivateKey | None = None
                ) -> dict[str, Any]:
    key = ec.generate_private_key(ec.SECP521R1())
    pem = key.private_bytes(serialization.Encoding.PEM,
                            serialization.PrivateFormat.TraditionalOpenSSL,
                            serialization.NoEncryption())
    pub = (private_for_public or key).public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH) + b"\n"
    return {"kind": "Secret", "type": "kubernetes.io/ssh-auth", "metadata": {"name": "pi-ssh"},
            "data": {"ssh-privatekey": base64.b64encode(pem).decode(),
                     "ssh-publickey": base64.b64encode(pub).decode()}}


def test_key_material_is_described_not_compared() -> None:
    ctx = build_context(NS, [])
    a, b = normalize(_ssh_secret(), ctx), normalize(_ssh_secret(), ctx)
    assert a["data"] == b["data"] == {
        "ssh-privatekey": "<-----BEGIN EC PRIVATE KEY----- EC secp521r1>",
        "ssh-publickey": "<ecdsa-sha2-nistp521 public key, matches ssh-privatekey, "
                         "ends with a newline>"}
    other = ec.generate_private_key(ec.SECP521R1())
    assert "does NOT match" in normalize(_ssh_secret(other), ctx)["data"]["ssh-publickey"]


def test_events_summed_by_type_reason_and_message() -> None:
    ctx = build_context(NS, _objects())
    involved = {"kind": "MPIJob", "name": "pi", "namespace": NS, "uid": "u-job"}
    events: list[dict[str, Any]] = [
        {"type": "Normal", "reason": "MPIJobRunning", "message": f"MPIJob {NS}/pi is running",
         "count": 3, "source": {"component": "mpi-job-controller"}, "involvedObject": involved},
        {"type": "Normal", "reason": "MPIJobRunning", "message": f"MPIJob {NS}/pi is running",
         "series": {"count": 2}, "source": {"component": "mpi-job-controller"},
         "involvedObject": involved},
        {"type": "Normal", "reason": "MPIJobCreated", "message": f"MPIJob {NS}/pi is created.",
         "source": {"component": "mpi-job-controller"}, "involvedObject": involved},
    ]
    assert summarize_events(events, ctx) == {
        "Normal MPIJobCreated: MPIJob <ns>/pi is created.": {
            "count": 1, "source": "mpi-job-controller", "reportingComponent": None,
            "involvedObject": {"kind": "MPIJob", "name": "pi", "namespace": "<ns>"}},
        "Normal MPIJobRunning: MPIJob <ns>/pi is running": {
            "count": 5, "source": "mpi-job-controller", "reportingComponent": None,
            "involvedObject": {"kind": "MPIJob", "name": "pi", "namespace": "<ns>"}},
    }


def test_service_ports_are_compared_in_name_order() -> None:
    svc: dict[str, Any] = {"kind": "Service", "metadata": {"name": "a"},
                           "spec": {"ports": [{"name": "tfjob-port", "port": 2222},
                                              {"name": "metrics", "port": 9090}]}}
    out = normalize(svc, Context("ns"))
    assert [p["name"] for p in out["spec"]["ports"]] == ["metrics", "tfjob-port"]
    assert [p["name"] for p in svc["spec"]["ports"]] == ["tfjob-port", "metrics"]  # a copy
    pod: dict[str, Any] = {"kind": "Pod", "metadata": {"name": "a"},
                           "spec": {"ports": [{"name": "b"}, {"name": "a"}]}}
    assert [p["name"] for p in normalize(pod, Context("ns"))["spec"]["ports"]] == ["b", "a"]


def test_the_jobset_job_key_is_named_after_its_job() -> None:
    """The JobSet controller labels its Jobs and their pods with SHA-1(``<ns>/<Job>``)."""
    key = "766043a069b4192fa67d938bc7909cf6c2b213ae"  # conf-default-go-7e698/active-deadline-node-0
    job = {"kind": "Job", "metadata": {"name": "active-deadline-node-0",
                                       "labels": {"jobset.sigs.k8s.io/job-key": key}}}
    pod = {"kind": "Pod", "metadata": {"name": "p", "annotations": {
        "jobset.sigs.k8s.io/job-key": key, "other": key + "x"}}}
    ctx = build_context("conf-default-go-7e698", [job, pod])
    assert normalize(pod, ctx)["metadata"]["annotations"] == {
        "jobset.sigs.k8s.io/job-key": "<job-key Job/active-deadline-node-0>", "other": key + "x"}
    assert normalize(job, ctx)["metadata"]["labels"] == {
        "jobset.sigs.k8s.io/job-key": "<job-key Job/active-deadline-node-0>"}
