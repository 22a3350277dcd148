"""Webhook CPU per request: what one ConversionReview or AdmissionReview costs the process
that serves the webhooks, apart from the API server and the network.

Every MPIJob write makes the API server call the conversion webhook twice, whoever reads the
job: it keeps a watch cache per served version, and the ``v1`` and ``v1alpha2`` caches get each
new ``v2beta1`` object through the webhook (``apiserver_crd_conversion_webhook_duration_seconds``
counts them). The webhooks are served by the controller's own process, so their cost is part of
its CPU per job in a cluster.

A child process serves the webhooks as ``mpi-controller run`` does (the routes of every kind's
:func:`~mpi_controller.webhook.registry.default_registry` on the webhook HTTPS server, a
certificate issued for 127.0.0.1); this process sends ``--requests`` reviews over
``--connections`` kept-alive TLS connections, one request at a time on each (the API server's
webhook client reuses its connections), each ``--interval`` seconds apart, and reads the
server's CPU time from ``/proc``. Back to back (``--interval 0``) the figure is the serving
path's own cost; paced (``--interval 0.01``) it adds what a process pays to wake for each
request, as it does in a cluster, where reviews come one by one. The reviews: ``conversion``
(a running 8-worker v2beta1 MPIJob with its managed fields, as the API server sends it, to
``v1`` and ``v1alpha2`` in turn) or ``admission`` (the create of that job through the
validating webhook). Prints one JSON line: server CPU per request (µs; its user and system
parts), best of ``--repeat`` rounds, and each round's. ``--new-connections`` opens a
connection per request (the TLS handshake's cost). Compare two commits by running it with each
tree on ``PYTHONPATH``. A program, not a test: nothing asserts on timing.

    PYTHONPATH=$PWD .venv/bin/python bench/webhook_bench.py [--review conversion] \\
        [--requests 2000] [--connections 2] [--interval 0] [--repeat 3] [--new-connections]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import http.client
import inspect
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
_MANAGED = [
    {"apiVersion": "kubeflow.org/v2beta1", "fieldsType": "FieldsV1", "manager": "bench",
     "operation": "Update", "time": "2026-12-07T06:57:53Z", "fieldsV1": {"f:spec": {
         ".": {}, "f:launcherCreationPolicy": {}, "f:mpiImplementation": {},
         "f:runLauncherAsWorker": {}, "f:slotsPerWorker": {}, "f:sshAuthMountPath": {},
         "f:runPolicy": {".": {}, "f:cleanPodPolicy": {}, "f:suspend": {}},
         "f:mpiReplicaSpecs": {".": {}, **{f"f:{role}": {
             ".": {}, "f:replicas": {}, "f:template": {".": {}, "f:spec": {
                 ".": {}, "f:containers": {".": {}, f'k:{{"name":"{role.lower()}"}}': {
                     ".": {}, "f:command": {}, "f:image": {}, "f:name": {}}}}}}
             for role in ("Launcher", "Worker")}}}}},
    {"apiVersion": "kubeflow.org/v2beta1", "fieldsType": "FieldsV1", "manager": "mpi-operator",
     "operation": "Update", "subresource": "status", "time": "2026-12-07T06:58:23Z",
     "fieldsV1": {"f:status": {".": {}, "f:startTime": {}, "f:conditions": {".": {}, **{
         f'k:{{"type":"{kind}"}}': {".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {},
                                    "f:message": {}, "f:reason": {}, "f:status": {},
                                    "f:type": {}} for kind in ("Created", "Running")}},
         "f:replicaStatuses": {".": {}, "f:Launcher": {".": {}, "f:active": {}},
                               "f:Worker": {".": {}, "f:active": {}}}}}},
]


def running_job() -> dict[str, Any]:
    """A running 8-worker MPIJob as the API server stores it (the bench's own job shape)."""
    sys.path.insert(0, str(REPO))
    from tests.mpijobs import small_job

    job = small_job("job-0001", workers=8, launcher_runs="10h",
                    run_policy={"cleanPodPolicy": "Running", "suspend": False},
                    launcherCreationPolicy="AtStartup", mpiImplementation="OpenMPI",
                    runLauncherAsWorker=False, slotsPerWorker=1, sshAuthMountPath="/root/.ssh")
    job["metadata"].update(namespace="bench", uid=str(uuid.uuid4()), resourceVersion="84891",
                           generation=1, creationTimestamp="2026-12-07T06:57:53Z",
                           managedFields=_MANAGED)
    now = "2026-12-07T06:58:23Z"
    job["status"] = {"startTime": now, "replicaStatuses": {"Launcher": {"active": 1},
                                                           "Worker": {"active": 8}},
                     "conditions": [{"type": kind, "status": "True", "reason": f"MPIJob{kind}",
                                     "message": f"MPIJob bench/job-0001 is {kind.lower()}.",
                                     "lastTransitionTime": now, "lastUpdateTime": now}
                                    for kind in ("Created", "Running")]}
    return job


def serve(port_file: str) -> None:
    """The child: serve the webhooks on 127.0.0.1, writing the CA and then the port."""
    from mpi_controller.runtime.https import HttpsServer
    from mpi_controller.webhook.certs import Identity, issue
    from mpi_controller.webhook.registry import default_registry
    from mpi_controller.webhook.server import MAX_BODY, webhook_routes

    bundle = issue(Identity(ip_addresses=("127.0.0.1",)),
                   now=dt.datetime.now(dt.UTC), validity=dt.timedelta(days=1),
                   ca_name="webhook-bench", organization="bench")
    Path(port_file + ".ca").write_bytes(bundle.ca_cert)

    async def no_lookup(*_: Any) -> Any:
        raise RuntimeError("the bench's webhooks read no objects")

    async def main() -> None:
        # A tree from before the server of its own (aiohttp's) named the limit otherwise:
        # measurable too, for an A/B.
        limit = ("max_body" if "max_body" in inspect.signature(HttpsServer).parameters
                 else "client_max_size")
        server = HttpsServer("127.0.0.1", 0, webhook_routes(default_registry(), no_lookup),
                             **{limit: MAX_BODY})
        server.set_certificate(bundle.cert, bundle.key)
        task = asyncio.create_task(server.run())
        while server.bound_port is None:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(Path(port_file).write_text, str(server.bound_port))
        await task

    asyncio.run(main())


def _cpu(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _requests(review: str) -> list[tuple[str, bytes]]:
    from mpi_controller.webhook.registry import default_registry

    job = running_job()
    if review == "conversion":
        return [("/convert?timeout=30s", json.dumps({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": str(uuid.uuid4()), "desiredAPIVersion": f"kubeflow.org/{v}",
                        "objects": [job]}}).encode()) for v in ("v1", "v1alpha2")]
    path = next(w.path for w in default_registry().validating
                if w.kind == "MPIJob" and w.version == "v2beta1")
    return [(path + "?timeout=10s", json.dumps({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": str(uuid.uuid4()), "operation": "CREATE", "namespace": "bench",
            "name": "job-0001", "object": job, "oldObject": None,
            "kind": {"group": "kubeflow.org", "version": "v2beta1", "kind": "MPIJob"},
            "resource": {"group": "kubeflow.org", "version": "v2beta1",
                         "resource": "mpijobs"}}}).encode())]


def _send(context: ssl.SSLContext, port: int, requests: list[tuple[str, bytes]], count: int,
          new_connections: bool, interval: float) -> None:
    conn: http.client.HTTPSConnection | None = None
    for i in range(count):
        if interval:
            time.sleep(interval)
        if conn is None or new_connections:
            if conn is not None:
                conn.close()
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=context)
        path, body = requests[i % len(requests)]
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        answer = conn.getresponse()
        data = answer.read()
        if answer.status != 200 or (b'"Success"' not in data and b'"allowed":true' not in data):
            raise SystemExit(f"unexpected answer {answer.status}: {data[:300]!r}")
    if conn is not None:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--review", choices=("conversion", "admission"), default="conversion")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--new-connections", action="store_true")
    parser.add_argument("--interval", type=float, default=0.0,
                        help="seconds each connection waits before each request (0: none)")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve)
        return 0
    port_file = str(Path(tempfile.mkdtemp(prefix="webhook-bench-")) / "port")
    child = subprocess.Popen([sys.executable, __file__, "--serve", port_file],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and Path(port_file).read_text()):
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the webhook server did not start")
            time.sleep(0.05)
        port = int(Path(port_file).read_text())
        context = ssl.create_default_context(cafile=port_file + ".ca")
        requests = _requests(args.review)
        per = max(1, args.requests // args.connections)

        def wave(count: int) -> None:
            threads = [threading.Thread(target=_send, args=(context, port, requests, count,
                                                            args.new_connections, args.interval))
                       for _ in range(args.connections)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        wave(100)  # warm up: connections, caches
        rounds: list[tuple[int, int]] = []  # (user, system) µs per request
        for _ in range(args.repeat):
            before = _cpu(child.pid)
            wave(per)
            after = _cpu(child.pid)
            rounds.append((round((after[0] - before[0]) / (per * args.connections) * 1e6),
                           round((after[1] - before[1]) / (per * args.connections) * 1e6)))
    finally:
        child.terminate()
        child.wait()
        shutil.rmtree(Path(port_file).parent, ignore_errors=True)
    user, system = min(rounds, key=sum)
    print(json.dumps({"review": args.review, "requests": per * args.connections,
                      "connections": args.connections, "new_connections": args.new_connections,
                      "server_cpu_us_per_request": user + system, "user_us": user,
                      "system_us": system, "rounds_us": [sum(r) for r in rounds]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
