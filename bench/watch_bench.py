"""Controller CPU per watch event: the pod informer's read path alone, against a local server.

A server in a process of its own streams ``--events`` MODIFIED events of TFJob-like worker pods
(~2.5 KB each, every event a chunk of its own, as the API server sends them) at ``--rate``
events a second, over TLS (a self-signed certificate; ``--plain`` for HTTP). This process
reads them as the controller does: :meth:`RestClient.watch` with the pod codec, then
:func:`~mpi_controller.engine.pods.slim_pod` and a dict standing for the cache. Reported: the
process CPU per event (user and system), best of ``--repeat`` rounds, through the lean client
(``lean``), through aiohttp (``aiohttp``, the path watches took before) and through the lean
client on the controller's event loop gathering messages for ``--wakeup-gather`` seconds while
busy (``gathered``, :mod:`mpi_controller.runtime.eventloop`; left out with 0), alternately,
with the reader's wake-ups per event (voluntary context switches). No cluster; prints one JSON
line. Not a test: no asserts on timing.

    PYTHONPATH=$PWD .venv/bin/python bench/watch_bench.py [--events 3000] [--rate 1000] \\
        [--repeat 3] [--plain] [--wakeup-gather 0.01]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from mpi_controller.engine.pods import POD_CODEC, slim_pod
from mpi_controller.kube.resources import PODS
from mpi_controller.runtime.eventloop import new_event_loop
from mpi_controller.runtime.kubeauth import ApiSession, kube_auth
from mpi_controller.runtime.rest import RestClient

_SERVER = r'''
import asyncio, json, ssl, sys, time
events, rate, port = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
cert, key = sys.argv[4], sys.argv[5]
RUNNING = {"running": {"startedAt": "2026-12-06T00:00:02Z"}}
CONDITIONS = ("Initialized", "Ready", "ContainersReady", "PodScheduled")

def pod(i):
    job, index = f"job-{i % 30:04d}", i % 4
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"{job}-worker-{index}", "namespace": "bench", "uid": f"uid-{i % 120}",
        "resourceVersion": str(1000 + i), "creationTimestamp": "2026-12-06T00:00:00Z",
        "labels": {"training.kubeflow.org/operator-name": "tfjob-controller",
                   "training.kubeflow.org/job-name": job,
                   "training.kubeflow.org/replica-type": "worker",
                   "training.kubeflow.org/replica-index": str(index)},
        "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": job,
                             "uid": f"job-uid-{i % 30}", "controller": True,
                             "blockOwnerDeletion": True}],
        "managedFields": [{"manager": "mpi-controller", "operation": "Update",
                           "apiVersion": "v1", "time": "2026-12-06T00:00:00Z",
                           "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}]},
        "spec": {"containers": [{"name": "tensorflow", "image": "kubeflow/tf-mnist:1.0",
                 "command": ["python", "/var/tf_dist_mnist/dist_mnist.py"],
                 "env": [{"name": "TF_CONFIG", "value": json.dumps({"cluster": {
                     "ps": [f"{job}-ps-{k}.bench.svc:2222" for k in range(2)],
                     "worker": [f"{job}-worker-{k}.bench.svc:2222" for k in range(4)]},
                     "task": {"type": "worker", "index": index}})}],
                 "ports": [{"name": "tfjob-port", "containerPort": 2222}]}],
                 "restartPolicy": "Never", "nodeName": "kwok-node-0"},
        "status": {"phase": ("Pending", "Running", "Succeeded")[i % 3],
                   "podIP": f"10.0.1.{i % 250}",
                   "startTime": "2026-12-06T00:00:01Z",
                   "conditions": [{"type": t, "status": "True",
                                   "lastTransitionTime": "2026-12-06T00:00:01Z"}
                                  for t in CONDITIONS],
                   "containerStatuses": [{"name": "tensorflow", "ready": True, "restartCount": 0,
                                          "image": "kubeflow/tf-mnist:1.0", "imageID": "",
                                          "state": RUNNING}]}}

LINES = [json.dumps({"type": "MODIFIED", "object": pod(i)}).encode() + b"\n" for i in range(events)]

async def handle(reader, writer):
    try:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        start = time.monotonic()
        for i, line in enumerate(LINES):
            wait = start + i / rate - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(b"%x\r\n%s\r\n" % (len(line), line))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
    except ConnectionError:
        pass
    writer.close()

async def main():
    context = None
    if cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
    server = await asyncio.start_server(handle, "127.0.0.1", port, ssl=context)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
'''


def _certificate(directory: Path) -> tuple[str, str]:
    """A self-signed ``127.0.0.1`` certificate and its key, as PEM files."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "watch-bench")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(now - dt.timedelta(minutes=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _round(port: int, ca: str | None, events: int, connections: int
                 ) -> tuple[float, float, int]:
    """User and system CPU seconds of reading ``events`` events through the informer path, and
    the wake-ups (voluntary context switches) meanwhile."""
    cfg = kube_auth().Configuration()
    cfg.host = f"{'https' if ca else 'http'}://127.0.0.1:{port}"
    if ca:
        cfg.ssl_ca_cert = ca
    kube = RestClient(ApiSession(cfg), qps=0, max_connections=connections)
    cache: dict[str, Any] = {}
    seen = 0
    before, woken = os.times(), resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
    async with kube.watch(PODS, namespace="bench", codec=POD_CODEC) as stream:
        async for event in stream:
            obj = slim_pod(event["object"])
            meta = obj["metadata"]
            cache[f"{meta['namespace']}/{meta['name']}"] = obj
            seen += 1
            if seen == events:
                break
    after, wakeups = os.times(), resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - woken
    await kube.close()
    return after.user - before.user, after.system - before.system, wakeups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plain", action="store_true", help="HTTP instead of TLS")
    parser.add_argument("--wakeup-gather", type=float, default=0.01,
                        help="the gathered variant's window (s); 0 leaves it out")
    args = parser.parse_args(argv)
    variants = [("lean", 16, 0.0), ("aiohttp", 0, 0.0)]
    if args.wakeup_gather > 0:
        variants.append(("gathered", 16, args.wakeup_gather))
    rounds: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    wakeups: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    with tempfile.TemporaryDirectory(prefix="watch-bench-") as tmp:
        cert, key = ("", "") if args.plain else _certificate(Path(tmp))
        for _ in range(args.repeat):
            for transport, connections, window in variants:
                port = _free_port()
                server = subprocess.Popen(
                    [sys.executable, "-c", _SERVER, str(args.events), str(args.rate),
                     str(port), cert, key], stdout=subprocess.PIPE, text=True)
                try:
                    assert server.stdout is not None
                    server.stdout.readline()  # "ready"
                    with asyncio.Runner(loop_factory=partial(new_event_loop, window)) as run:
                        user, system, woken = run.run(
                            _round(port, cert or None, args.events, connections))
                finally:
                    server.kill()
                    server.wait()
                rounds[transport].append(1e6 * (user + system) / args.events)
                wakeups[transport].append(woken / args.events)
                time.sleep(0.2)
    print(json.dumps({
        "events": args.events, "rate": args.rate, "tls": not args.plain,
        **{f"{name}_cpu_us_per_event": round(min(values), 1) for name, values in rounds.items()},
        **{f"{name}_wakeups_per_event": round(statistics.median(values), 2)
           for name, values in wakeups.items()},
        "rounds_us": {name: [round(v, 1) for v in values] for name, values in rounds.items()},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
