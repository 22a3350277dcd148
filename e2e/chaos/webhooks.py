"""Webhook serving for the fault runs, and the webhook fault runs' pure parts.

* :class:`FailoverProxy`: a round-robin TCP proxy (:class:`e2e.tcpproxy.RoundRobinProxy`)
  that, like a Service whose endpoints follow readiness, sends a connection to the next
  backend when one refuses it;
* :class:`WebhookSet`: ``n`` ``mpi-controller run`` replicas serving the conversion and
  validating webhooks (every replica serves; one leads) on 127.0.0.1 behind such a proxy, their
  Lease and certificate Secret in a namespace of their own, reconciling ``reconcile`` (a
  namespace of jobs, or an idle one);
* :class:`Clients`: threads that create, read, list and patch MPIJobs through ``v1`` and
  ``v1alpha2`` (every request converted by the webhook) and record each request's outcome;
* :func:`outages`: failure windows of those outcomes (pure).
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from e2e.tcpproxy import RoundRobinProxy
from tests.processes import ControllerProcess, free_port, http_get

__all__ = ["Clients", "FailoverProxy", "Request", "WebhookSet", "outages", "served_certificate",
           "signed_by"]

CRD = "mpijobs.kubeflow.org"
SECRET = "mpi-operator-webhook-cert"
_GROUP, _PLURAL = "kubeflow.org", "mpijobs"
_PATCH = {"metadata": {"labels": {"touched": "yes"}}}


class FailoverProxy(RoundRobinProxy):
    """:class:`RoundRobinProxy` that tries the other backends when one refuses a connection
    (a Service routes only to ready endpoints; a killed replica's port refuses at once).
    Connections live until either side closes them, as through a Service (kube-proxy never
    closes a connection; the round-robin proxy's ``max_age`` would race the API server's reuse
    of kept-alive connections, a failure no Service makes)."""

    def __init__(self, backends: Sequence[int], *, max_age: float = float("inf"),
                 idle: float = 0.2) -> None:
        super().__init__(backends, max_age=max_age, idle=idle)

    def _pipe(self, client: socket.socket, port: int) -> None:
        start = self.backends.index(port)
        order = self.backends[start:] + self.backends[:start]
        for candidate in order:
            try:
                socket.create_connection(("127.0.0.1", candidate), timeout=2).close()
            except OSError:
                continue
            return super()._pipe(client, candidate)
        client.close()
        return None


class WebhookSet:
    """``replicas`` webhook-serving controller processes behind a :class:`FailoverProxy` (see
    the module doc); ``extra`` flags for each (``--webhook-cert-validity 60s``)."""

    def __init__(self, kubeconfig: str, logs: Path, *, home: str, reconcile: str,
                 replicas: int = 1, extra: Sequence[str] = (), kubectl: Any = None) -> None:
        self.home = home
        self.configuration = f"mpi-operator-{home}"
        self.ports = [free_port() for _ in range(replicas)]
        self.proxy = FailoverProxy(self.ports)
        self.kubectl = kubectl
        self.procs = [ControllerProcess(
            kubeconfig, logs / f"{home}-{i}.log",
            "--namespace", reconcile, "--lock-namespace", home,
            "--webhooks", "on", "--webhook-server-port", str(port),
            "--webhook-url", f"https://127.0.0.1:{self.proxy.port}",
            "--webhook-namespace", home, "--webhook-configuration-name", self.configuration,
            *extra) for i, port in enumerate(self.ports)]

    def __enter__(self) -> WebhookSet:
        self.previous = self._client_config()
        self.proxy.__enter__()
        for proc in self.procs:
            proc.start()
        for proc in self.procs:
            self.wait_ready(proc)
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            if proc.alive():
                proc.stop()
        self.proxy.__exit__(None, None, None)
        if self.kubectl is not None:  # failurePolicy Fail: no configuration left behind
            self.kubectl("delete", "validatingwebhookconfiguration", self.configuration,
                         "--ignore-not-found")
            if self.previous is not None:  # the CRD's conversion as it was before
                config = {"url": None, "service": None, "caBundle": None, **self.previous}
                self.kubectl("patch", "crd", CRD, "--type", "merge", "-p", json.dumps(
                    {"spec": {"conversion": {"webhook": {"clientConfig": config}}}}))

    def _client_config(self) -> dict[str, Any] | None:
        if self.kubectl is None:
            return None
        text = self.kubectl("get", "crd", CRD, "-o",
                            "jsonpath={.spec.conversion.webhook.clientConfig}")
        try:
            found = json.loads(text) if text.strip() else None
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    @staticmethod
    def ready(proc: ControllerProcess) -> bool:
        return proc.alive() and http_get(proc.health_port, "/readyz") == (200, "ok")

    def wait_ready(self, proc: ControllerProcess, timeout: float = 90) -> float:
        """Seconds until ``proc`` is ready (it serves once ready)."""
        start = time.monotonic()
        while not self.ready(proc):
            if not proc.alive():
                raise RuntimeError(f"webhook replica exited:\n{proc.log()[-3000:]}")
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"webhook replica not ready after {timeout}s")
            time.sleep(0.2)
        return round(time.monotonic() - start, 2)


def served_certificate(port: int) -> Any:
    """The certificate served on 127.0.0.1:``port`` (an ``x509.Certificate``; None when nothing
    answers)."""
    from cryptography import x509
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
                context.wrap_socket(raw) as tls:
            der = tls.getpeercert(binary_form=True)
    except OSError:
        return None
    return None if der is None else x509.load_der_x509_certificate(der)


def signed_by(cert: Any, ca: Any) -> bool:
    """Whether ``ca`` issued ``cert`` (its signature verifies with the CA's key)."""
    try:
        cert.verify_directly_issued_by(ca)
    except Exception:
        return False
    return True


def secret_ca(core: Any, namespace: str) -> bytes:
    """``ca.crt`` of the webhook certificate Secret (b"" when there is none)."""
    from kubernetes.client.exceptions import ApiException
    try:
        data = core.read_namespaced_secret(SECRET, namespace).data or {}
    except ApiException as exc:
        if exc.status == 404:
            return b""
        raise
    return base64.b64decode(data.get("ca.crt", ""))


def crd_ca(ext: Any) -> bytes:
    """The caBundle of the MPIJob CRD's conversion webhook."""
    crd = ext.read_custom_resource_definition(CRD)
    bundle = crd.spec.conversion.webhook.client_config.ca_bundle or ""
    return base64.b64decode(bundle)


@dataclass
class Request:
    at: float  # seconds since the epoch
    op: str  # create-v1, get-v1alpha2, ...
    ok: bool
    error: str = ""


@dataclass
class Clients:
    """``threads`` clients, each looping: create a job through ``v1`` or ``v1alpha2`` (in
    turn), read it back through both, patch a label through ``v1``, list through ``v1``;
    every request recorded (no retries: a failure is the client's failure)."""

    kubeconfig: str
    namespace: str
    threads: int = 2
    pause: float = 0.2
    requests: list[Request] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _workers: list[threading.Thread] = field(default_factory=list)

    def start(self) -> Clients:
        for i in range(self.threads):
            t = threading.Thread(target=self._loop, args=(i,), daemon=True)
            t.start()
            self._workers.append(t)
        return self

    def stop(self) -> list[Request]:
        self._stop.set()
        for t in self._workers:
            t.join(timeout=60)
        return sorted(self.requests, key=lambda r: r.at)

    def _loop(self, index: int) -> None:
        from kubernetes import client, config

        from tests.mpijobs import older_generation_job
        api = config.new_client_from_config(config_file=self.kubeconfig)
        custom = client.CustomObjectsApi(api)
        ns, n = self.namespace, 0
        while not self._stop.is_set():
            version = ("v1", "v1alpha2")[n % 2]
            name = f"wc-{index}-{n:04d}"
            body = older_generation_job(version, name, launcher_runs="1h", stored=False)
            steps: list[tuple[str, Any]] = [
                (f"create-{version}", lambda v=version, b=body: custom.create_namespaced_custom_object(  # noqa: E501
                    _GROUP, v, ns, _PLURAL, b, _request_timeout=30)),
                ("get-v1", lambda nm=name: custom.get_namespaced_custom_object(
                    _GROUP, "v1", ns, _PLURAL, nm, _request_timeout=30)),
                ("get-v1alpha2", lambda nm=name: custom.get_namespaced_custom_object(
                    _GROUP, "v1alpha2", ns, _PLURAL, nm, _request_timeout=30)),
                ("patch-v1", lambda nm=name: custom.patch_namespaced_custom_object(
                    _GROUP, "v1", ns, _PLURAL, nm, _PATCH, _request_timeout=30)),
                ("list-v1", lambda: custom.list_namespaced_custom_object(
                    _GROUP, "v1", ns, _PLURAL, limit=20, _request_timeout=30)),
            ]
            for op, call in steps:
                if self._stop.is_set():
                    break
                at = time.time()
                try:
                    call()
                    self.requests.append(Request(at, op, True))
                except Exception as exc:
                    body_text = getattr(exc, "body", None) or repr(exc)
                    self.requests.append(Request(at, op, False, _reason(str(body_text))))
                    if op.startswith("create"):
                        break  # nothing to read back
                time.sleep(self.pause)
            n += 1
        api.close()


def _reason(text: str) -> str:
    try:
        return str(json.loads(text).get("message", text))[:300]
    except ValueError:
        return text[:300]


def outages(requests: Sequence[Request]) -> list[dict[str, Any]]:
    """Windows of consecutive failed requests (by time): ``start`` (first failure), ``end``
    (the first success after), ``length_s`` (end - the last success before; None while no
    success follows), ``failed`` (requests in the window)."""
    out: list[dict[str, Any]] = []
    last_ok: float | None = None
    current: dict[str, Any] | None = None
    for r in sorted(requests, key=lambda r: r.at):
        if r.ok:
            if current is not None:
                current["end"] = r.at
                current["length_s"] = round(r.at - current["after_ok"], 2)
                out.append(current)
                current = None
            last_ok = r.at
        elif current is None:
            current = {"start": r.at, "after_ok": last_ok if last_ok is not None else r.at,
                       "end": None, "length_s": None, "failed": 1}
        else:
            current["failed"] += 1
    if current is not None:
        out.append(current)
    for o in out:
        o.pop("after_ok")
    return out


def failure_summary(requests: Sequence[Request]) -> dict[str, Any]:
    """Counts of requests and failures, by operation, and the first failures' reasons."""
    by_op: dict[str, list[int]] = {}
    for r in requests:
        counts = by_op.setdefault(r.op, [0, 0])
        counts[0] += 1
        counts[1] += 0 if r.ok else 1
    failed = [r for r in requests if not r.ok]
    return {"requests": len(requests), "failed": len(failed),
            "failed_share": round(len(failed) / len(requests), 4) if requests else None,
            "by_op": {op: {"requests": c[0], "failed": c[1]} for op, c in sorted(by_op.items())},
            "reasons": sorted({r.error for r in failed})[:5],
            "failures": [{"at": round(r.at, 3), "op": r.op, "error": r.error[:200]}
                         for r in failed[:20]]}
