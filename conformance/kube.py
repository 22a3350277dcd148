"""Raw JSON access to the API server for the conformance runs: requests and a namespace recorder.

Objects are plain dicts exactly as the API server sends them (no client models), so what is
compared is what the API holds. :class:`Recorder` watches a set of resources in one namespace and
keeps, for every object, the version seen when it was added, the last version seen, and whether
it was deleted; it also reports when the namespace was last quiet.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes import client, config

Obj = dict[str, Any]


class ApiError(Exception):
    """A non-2xx answer: ``status`` and the decoded Status body (or the raw text)."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        message = body.get("message") if isinstance(body, dict) else body
        super().__init__(f"{status}: {message}")

    @property
    def message(self) -> str:
        return str(self.body.get("message") if isinstance(self.body, dict) else self.body)


class Kube:
    """A kubeconfig's API server, spoken to in JSON."""

    def __init__(self, kubeconfig: Path | str) -> None:
        cfg = client.Configuration()
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=str(kubeconfig), client_configuration=cfg)
        cfg.connection_pool_maxsize = 16
        self.api = client.ApiClient(cfg)

    def _call(self, method: str, path: str, *, query: list[tuple[str, str]] | None = None,
              body: Any = None, content_type: str | None = None,
              timeout: float | tuple[float, float | None] = 30, stream: bool = False) -> Any:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type or "application/json"
        method_, url, headers, body_, post = self.api.param_serialize(
            method, path, query_params=query or [], header_params=headers, body=body,
            auth_settings=["BearerToken"])
        resp = self.api.call_api(method_, url, header_params=headers, body=body_,
                                 post_params=post, _request_timeout=timeout)
        if stream:
            if resp.status >= 300:
                raise ApiError(resp.status, _decode(resp.read()))  # type: ignore[no-untyped-call]
            return resp
        data = resp.read()  # type: ignore[no-untyped-call]
        if resp.status >= 300:
            raise ApiError(resp.status, _decode(data))
        return _decode(data)

    def get(self, path: str, **query: str) -> Any:
        return self._call("GET", path, query=list(query.items()))

    def create(self, path: str, body: Obj, **query: str) -> Any:
        return self._call("POST", path, body=body, query=list(query.items()))

    def put(self, path: str, body: Obj) -> Any:
        return self._call("PUT", path, body=body)

    def merge_patch(self, path: str, patch: Obj) -> Any:
        return self._call("PATCH", path, body=patch, content_type="application/merge-patch+json")

    def patch(self, path: str, patch: Any, patch_type: str) -> Any:
        """A ``merge``, ``strategic`` (built-in kinds: lists merge by their keys) or ``json``
        (RFC 6902 operations) patch."""
        content_type = {"merge": "application/merge-patch+json",
                        "strategic": "application/strategic-merge-patch+json",
                        "json": "application/json-patch+json"}[patch_type]
        return self._call("PATCH", path, body=patch, content_type=content_type)

    def delete(self, path: str, *, missing_ok: bool = True) -> Any:
        try:
            return self._call("DELETE", path, body={"propagationPolicy": "Background"})
        except ApiError as err:
            if err.status == 404 and missing_ok:
                return None
            raise

    def watch_lines(self, path: str, resource_version: str, *,
                    timeout_seconds: int = 30) -> Iterator[Obj]:
        """One watch request's events, decoded, until the server closes it."""
        resp = self._call("GET", path, query=[
            ("watch", "true"), ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true"), ("timeoutSeconds", str(timeout_seconds))],
            timeout=(5, timeout_seconds + 10), stream=True)
        try:
            for line in resp.response:
                if line.strip():
                    yield json.loads(line)
        finally:
            resp.response.release_conn()

    def stream_lines(self, path: str, **query: str) -> Iterator[str]:
        """The lines of a streamed GET (a pod's log with ``follow=true``) until the server ends
        it."""
        resp = self._call("GET", path, query=list(query.items()), timeout=(5, None),
                          stream=True)
        try:
            for line in resp.response:
                yield line.decode(errors="replace").rstrip("\n")
        finally:
            resp.response.release_conn()

    def apply_file(self, path: Path) -> None:
        """Create or replace every object of a YAML file (cluster-scoped or namespaced ones that
        name their namespace): the CRDs and webhook configurations the runs install."""
        import yaml

        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                self.create_or_replace(doc)

    def create_or_replace(self, obj: Obj) -> Any:
        base = resource_path(obj["apiVersion"], _plural(obj["kind"]),
                             obj["metadata"].get("namespace"))
        try:
            return self.create(base, obj)
        except ApiError as err:
            if err.status != 409:
                raise
        current = self.get(f"{base}/{obj['metadata']['name']}")
        obj = {**obj, "metadata": {**obj["metadata"],
                                   "resourceVersion": current["metadata"]["resourceVersion"]}}
        return self.put(f"{base}/{obj['metadata']['name']}", obj)

    def close(self) -> None:
        self.api.close()  # type: ignore[no-untyped-call]


def _decode(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return data.decode(errors="replace")


_PLURALS = {"CustomResourceDefinition": "customresourcedefinitions",
            "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
            "Namespace": "namespaces", "Secret": "secrets", "Service": "services",
            "PriorityClass": "priorityclasses"}


def _plural(kind: str) -> str:
    return _PLURALS.get(kind) or kind.lower() + "s"


def resource_path(api_version: str, plural: str, namespace: str | None = None) -> str:
    """``/api/v1/namespaces/ns/pods`` style collection path of a resource."""
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    return f"{prefix}/namespaces/{namespace}/{plural}" if namespace else f"{prefix}/{plural}"


@dataclass
class Resource:
    """A namespaced resource the recorder watches."""

    api_version: str
    kind: str
    plural: str

    def path(self, namespace: str) -> str:
        return resource_path(self.api_version, self.plural, namespace)


@dataclass
class Seen:
    """What the recorder knows of one object."""

    created: Obj
    last: Obj
    deleted: bool = False
    versions: int = 1
    recreated: int = 0  # times it was created again after a deletion (the same name)


# Components whose Events repeat on their own, whatever the operators do: the
# HorizontalPodAutoscaler controller reports every sync (5 s on the local cluster) that it
# cannot read metrics (there is no metrics server). Recorded, but not activity for quiet_for.
BACKGROUND_EVENT_SOURCES = frozenset({"horizontal-pod-autoscaler"})


@dataclass
class Recorder:
    """Watches ``resources`` in ``namespace`` from before anything is created in it."""

    kube: Kube
    namespace: str
    resources: list[Resource]
    objects: dict[tuple[str, str], Seen] = field(default_factory=dict)
    last_event: float = field(default_factory=time.monotonic)
    errors: list[str] = field(default_factory=list)
    background: frozenset[str] = BACKGROUND_EVENT_SOURCES

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for res in self.resources:
            rv = self.kube.get(res.path(self.namespace), limit="1")["metadata"]["resourceVersion"]
            thread = threading.Thread(target=self._run, args=(res, rv), daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()

    def _run(self, res: Resource, rv: str) -> None:
        path = res.path(self.namespace)
        while not self._stop.is_set():
            try:
                for event in self.kube.watch_lines(path, rv, timeout_seconds=5):
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":  # expired: the record would have a gap
                        self.errors.append(f"watch {res.plural}: {obj.get('message')}")
                        rv = self.kube.get(path, limit="1")["metadata"]["resourceVersion"]
                        break
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                    if self._stop.is_set():  # nothing after stop (a CRD swap deletes all)
                        return
                    if event.get("type") != "BOOKMARK":
                        self._record(res.kind, event["type"], obj)
            except Exception as err:  # a transport hiccup: resume from the last version seen
                if self._stop.is_set():
                    return
                self.errors.append(f"watch {res.plural}: {type(err).__name__}: {err}")
                time.sleep(0.5)

    def _record(self, kind: str, etype: str, obj: Obj) -> None:
        obj.setdefault("kind", kind)
        key = (kind, obj["metadata"]["name"])
        with self._lock:
            if not self.is_background(obj):
                self.last_event = time.monotonic()
            seen = self.objects.get(key)
            if seen is None or (seen.deleted and etype == "ADDED"):
                self.objects[key] = Seen(created=obj, last=obj, deleted=etype == "DELETED",
                                         recreated=seen.recreated + 1 if seen else 0)
                return
            seen.last = obj
            seen.versions += 1
            seen.deleted = etype == "DELETED"

    def is_background(self, obj: Obj) -> bool:
        """An Event reported by one of the ``background`` components."""
        source = (obj.get("source") or {}).get("component") or obj.get("reportingComponent")
        return obj.get("kind") == "Event" and source in self.background

    def quiet_for(self) -> float:
        """Seconds since the last watch event in the namespace (background Events aside)."""
        with self._lock:
            return time.monotonic() - self.last_event

    def snapshot(self) -> dict[tuple[str, str], Seen]:
        with self._lock:
            return dict(self.objects)

    def find(self, kind: str, pred: Callable[[Obj], bool]) -> list[Obj]:
        with self._lock:
            return [s.last for (k, _), s in self.objects.items()
                    if k == kind and not s.deleted and pred(s.last)]
