"""Informer benchmark: how fast a real watch fills the cache, and what a cached pod costs.

Creates ``--pods`` pods (default 10,000) in a fresh namespace with the synchronous client.
The pods name a scheduler that does not exist, so no scheduler, KWOK or pod GC touches them:
they stay Pending and emit no further events. Then, in this process:

* ``watch``: one streaming watch (``sendInitialEvents=true``, the WatchList protocol) delivers
  every pod as an ADDED event; each goes through the reflector's event path (transform
  ``drop_managed_fields`` → indexer with the namespace index → one handler). Figure: events per
  second from the request until the ``initial-events-end`` bookmark.
* ``list``: an informer's initial paged LIST (500 per page) until ``has_synced``.
* ``memory``: tracemalloc, bytes held by the cache per pod (the memory freed when the informer is
  dropped, divided by the pod count), with managedFields dropped and, for comparison, kept;
  and as the MPIJob controller caches pods (``mpi_controller.engine.pods``: the typed pod codec
  and the slim, shared transform), whose events per second are measured too.

Writes ``bench-results/informer.json``, and returns once the namespace and its pods are gone
(their deletion would load the machine under the next benchmark). A program, not a test:
nothing asserts on timing.

    .venv/bin/python bench/informer_bench.py [--kubeconfig PATH] [--pods 10000] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import sys
import time
import tracemalloc
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kubernetes import client, config  # noqa: E402

from mpi_controller.engine.pods import POD_CODEC, slim_pod  # noqa: E402
from mpi_controller.kube.resources import PODS  # noqa: E402
from mpi_controller.runtime.codec import Codec  # noqa: E402
from mpi_controller.runtime.informer import SharedIndexInformer, drop_managed_fields  # noqa: E402
from mpi_controller.runtime.reflector import ResourceListerWatcher, Transform  # noqa: E402
from mpi_controller.runtime.rest import RestClient  # noqa: E402

RESULTS = REPO / "bench-results"
DEFAULT_KUBECONFIG = Path.home() / ".cache/mpi-controller/cluster/kubeconfig"
Obj = dict[str, Any]


def log(msg: str) -> None:
    print(f"[informer-bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def pod_body(i: int) -> Obj:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"bench-{i:05d}", "labels": {
            "app": "informer-bench", "training.kubeflow.org/job-name": f"job-{i // 8}",
            "training.kubeflow.org/job-role": "worker"}},
        "spec": {
            "schedulerName": "informer-bench-no-such-scheduler",
            "containers": [{
                "name": "worker", "image": "mpioperator/mpi-pi:openmpi",
                "command": ["sleep", "infinity"],
                "env": [{"name": "K_MPI_JOB_ROLE", "value": "worker"},
                        {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }],
        },
    }


def create_pods(api: client.ApiClient, namespace: str, count: int) -> float:
    core = client.CoreV1Api(api)
    labels = {"mpi-controller-bench": "1"}
    core.create_namespace({"metadata": {"name": namespace, "labels": labels}})
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=32) as pool:
        list(pool.map(lambda i: core.create_namespaced_pod(namespace, pod_body(i),
                                                           _preload_content=False), range(count)))
    return time.monotonic() - started


def new_informer(
    kube: RestClient, namespace: str, transform: Transform | None, codec: Codec | None = None
) -> SharedIndexInformer:
    from mpi_controller.runtime.cache import NAMESPACE_INDEX, namespace_index

    lw = ResourceListerWatcher(kube, PODS, namespace=namespace, codec=codec)
    informer = SharedIndexInformer(lw, indexers={NAMESPACE_INDEX: namespace_index},
                                   transform=transform)
    handled = [0]
    informer.add_event_handler(on_add=lambda o: handled.__setitem__(0, handled[0] + 1))
    return informer


async def stream_into(kube: RestClient, informer: SharedIndexInformer, namespace: str,
                      codec: Codec | None = None) -> float:
    """Fill ``informer`` from one WatchList stream; return the seconds it took."""
    started = time.perf_counter()
    async with kube.watch(PODS, namespace=namespace, send_initial_events=True,
                          resource_version_match="NotOlderThan", timeout_seconds=600,
                          codec=codec) as w:
        async for event in w:
            if event["type"] == "BOOKMARK":
                annotations = event["object"]["metadata"].get("annotations") or {}
                if annotations.get("k8s.io/initial-events-end") == "true":
                    break
            informer.reflector._handle_event(event)  # the reflector's per-event path
    return time.perf_counter() - started


async def list_sync(kube: RestClient, informer: SharedIndexInformer) -> float:
    started = time.perf_counter()
    task = asyncio.create_task(informer.run())
    while not informer.has_synced():
        await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - started
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return elapsed


async def held_bytes(
    kube: RestClient, namespace: str, transform: Transform | None, codec: Codec | None = None
) -> tuple[int, int]:
    """(bytes freed when the filled informer is dropped, pods cached), under tracemalloc."""
    gc.collect()
    tracemalloc.start()
    informer = new_informer(kube, namespace, transform, codec)
    await stream_into(kube, informer, namespace, codec)
    count = len(informer.indexer)
    gc.collect()
    filled = tracemalloc.get_traced_memory()[0]
    del informer
    gc.collect()
    emptied = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return filled - emptied, count


async def measure(kubeconfig: str, namespace: str, pods: int) -> dict[str, Any]:
    async with await RestClient.from_kubeconfig(kubeconfig, qps=0) as kube:
        watch_runs = []
        for _ in range(3):
            informer = new_informer(kube, namespace, drop_managed_fields)
            seconds = await stream_into(kube, informer, namespace)
            assert len(informer.indexer) == pods, len(informer.indexer)
            watch_runs.append(seconds)
            log(f"watch: {pods} events in {seconds:.2f}s = {pods / seconds:,.0f} events/s")
        list_runs = []
        for _ in range(3):
            informer = new_informer(kube, namespace, drop_managed_fields)
            seconds = await list_sync(kube, informer)
            list_runs.append(seconds)
            log(f"list: {pods} objects synced in {seconds:.2f}s = {pods / seconds:,.0f}/s")
        slim_runs = []
        for _ in range(3):
            informer = new_informer(kube, namespace, slim_pod, POD_CODEC)
            seconds = await stream_into(kube, informer, namespace, POD_CODEC)
            assert len(informer.indexer) == pods, len(informer.indexer)
            slim_runs.append(seconds)
            log(f"watch, controller pod cache: {pods / seconds:,.0f} events/s")
        dropped, n1 = await held_bytes(kube, namespace, drop_managed_fields)
        kept, n2 = await held_bytes(kube, namespace, None)
        slim, n3 = await held_bytes(kube, namespace, slim_pod, POD_CODEC)
        log(f"memory: {dropped / n1:,.0f} B/pod without managedFields, {kept / n2:,.0f} with, "
            f"{slim / n3:,.0f} as the controller caches pods")
    best_watch, best_list = min(watch_runs), min(list_runs)
    return {
        "pods": pods,
        "watch": {"seconds": watch_runs, "events_per_second": round(pods / best_watch),
                  "controller_pod_cache_seconds": slim_runs,
                  "controller_pod_cache_events_per_second": round(pods / min(slim_runs)),
                  "protocol": "WatchList (sendInitialEvents=true)"},
        "list": {"seconds": list_runs, "objects_per_second": round(pods / best_list),
                 "page_size": 500},
        "memory": {"bytes_per_pod_managed_fields_dropped": round(dropped / n1),
                   "bytes_per_pod_managed_fields_kept": round(kept / n2),
                   "bytes_per_pod_controller_cache": round(slim / n3),
                   "method": "tracemalloc: memory freed when the filled informer is dropped"},
    }


def delete_namespace(api: Any, namespace: str, timeout: float = 600.0) -> None:
    """Delete the namespace and wait until it is gone: deleting its pods keeps the API server,
    etcd and the namespace controller busy for ~45 s on a 2-core machine, which would otherwise
    land in the next benchmark's figures (``make bench`` runs the harness right after)."""
    core = client.CoreV1Api(api)
    start = time.monotonic()
    core.delete_namespace(namespace, propagation_policy="Background")
    while time.monotonic() - start < timeout:
        try:
            core.read_namespace(namespace)
        except client.ApiException as err:
            if err.status == 404:
                log(f"namespace {namespace} deleted in {time.monotonic() - start:.0f}s")
                return
            raise
        time.sleep(1)
    log(f"namespace {namespace} still terminating after {timeout:.0f}s; going on")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig",
                        default=os.environ.get("KUBECONFIG") or str(DEFAULT_KUBECONFIG))
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--keep", action="store_true", help="keep the namespace afterwards")
    args = parser.parse_args()

    api = config.new_client_from_config(config_file=args.kubeconfig)
    namespace = f"informer-bench-{uuid.uuid4().hex[:6]}"
    try:
        log(f"creating {args.pods} pods in {namespace}")
        create_seconds = create_pods(api, namespace, args.pods)
        log(f"created in {create_seconds:.1f}s ({args.pods / create_seconds:,.0f}/s)")
        result = asyncio.run(measure(args.kubeconfig, namespace, args.pods))
    finally:
        if not args.keep:
            delete_namespace(api, namespace)
        api.close()
    version_api = config.new_client_from_config(config_file=args.kubeconfig)
    version = client.VersionApi(version_api).get_code()
    version_api.close()
    result.update({
        "create_seconds": round(create_seconds, 2),
        "environment": {"python": platform.python_version(), "machine": platform.machine(),
                        "cpus": os.cpu_count(), "kube_apiserver": version.git_version,
                        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")},
    })
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "informer.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
