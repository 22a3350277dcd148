"""The webhook fault runs: the API server calls webhook-serving ``mpi-controller run``
replicas (:class:`e2e.chaos.webhooks.WebhookSet`) behind a failover proxy standing in for the
Service, while clients (:class:`e2e.chaos.webhooks.Clients`) create, read, patch and list
MPIJobs through ``v1`` and ``v1alpha2``, every request of theirs converted by the webhook.

* ``webhook-kills-2`` / ``webhook-kills-1``: a replica SIGKILLed every few seconds (restarted
  at once, as a Deployment would); with two, the other is ready before the next kill. Figures:
  the share of the clients' requests that failed (goal 0 with two), the outage windows and
  their length (one), 5xx answers to those clients in the API server's audit log;
* ``cert-rotation``: two replicas with ``--webhook-cert-validity 60s`` (renewed, with a new
  CA, every 45 s) for ``webhook_seconds``: no failed request; at the end the CRD's caBundle is
  the Secret's ``ca.crt`` and both replicas serve a certificate of its newest CA;
* ``secret-deleted``: two replicas; the certificate Secret deleted three times mid-run, both
  racing to create it again: one certificate wins (both serve the issuer of the Secret's CA,
  which the CRD's caBundle holds), no failed request.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

from e2e.chaos import audit
from e2e.chaos.webhooks import (
    SECRET,
    Clients,
    WebhookSet,
    crd_ca,
    failure_summary,
    outages,
    secret_ca,
    served_certificate,
    signed_by,
)

if TYPE_CHECKING:
    from e2e.chaos.runner import Context

__all__ = ["run_cert_rotation", "run_secret_deleted", "run_webhook_kills"]

CLIENT_USER = "mpi-controller-2"
"""The clients' identity: the local cluster's audit policy logs only the controller identities'
requests, and the webhook runs have no controller of that identity (the webhook replicas are
the cluster admin), so the clients' requests and their answers are in the audit log."""


class _Env:
    """Namespaces (clients', the replicas' home, an idle one they reconcile), the replicas,
    the clients; everything deleted at the end."""

    def __init__(self, ctx: Context, name: str, *, replicas: int, extra: tuple[str, ...] = ()
                 ) -> None:
        import uuid

        from kubernetes import client, config
        self.ctx, self.name = ctx, name
        suffix = uuid.uuid4().hex[:6]
        self.ns, self.home = f"chaos-{name}-{suffix}", f"chaos-{name}-{suffix}-wh"
        logs = ctx.out_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        # The replicas as the controller's identity (their Secret writes are in the audit log).
        self.set = WebhookSet(ctx.controller_kubeconfigs[0], logs, home=self.home,
                              reconcile=f"{self.home}-idle", replicas=replicas, extra=extra,
                              kubectl=ctx.kubectl)
        self.api = config.new_client_from_config(config_file=ctx.kubeconfig)
        self.core = client.CoreV1Api(self.api)
        self.ext = client.ApiextensionsV1Api(self.api)
        self.clients = Clients(ctx.controller_kubeconfigs[1], self.ns)
        self.start_wall = audit.now()
        self.apiserver_log = ctx.audit_log.with_name("kube-apiserver.log")
        self.apiserver_offset = _size(self.apiserver_log)
        self.faults: list[dict[str, Any]] = []
        self.violations: list[str] = []

    def __enter__(self) -> _Env:
        for ns in (self.ns, self.home, f"{self.home}-idle"):
            self.ctx.kubectl("create", "namespace", ns)
        self.set.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.clients.stop()
        self.set.__exit__()
        from kubernetes import client

        from tests.mpijobs import GROUP, PLURAL, VERSION
        with contextlib.suppress(Exception):  # through the stored version: no webhook needed
            client.CustomObjectsApi(self.api).delete_collection_namespaced_custom_object(
                GROUP, VERSION, self.ns, PLURAL)
        for ns in (self.ns, self.home, f"{self.home}-idle"):
            self.ctx.kubectl("delete", "namespace", ns, "--wait=false")
        self.api.close()

    def apiserver_conversion_failures(self) -> int:
        """Lines of kube-apiserver's log since the run started that report a failed call of
        the conversion webhook."""
        if not self.apiserver_log.exists():
            return 0
        with self.apiserver_log.open("rb") as fh:
            fh.seek(self.apiserver_offset)
            text = fh.read().decode(errors="replace")
        url = f"127.0.0.1:{self.set.proxy.port}/convert"
        return sum(1 for line in text.splitlines()
                   if "conversion webhook" in line and "failed" in line and url in line)

    def record(self, fault: str, requests: list[Any], **extra: Any) -> dict[str, Any]:
        end = audit.now()
        events = audit.read_events(self.ctx.audit_log, start=self.start_wall, end=end,
                                   namespaces=[self.ns], settle=30)
        mine = [e for e in events if e.namespace == self.ns and e.resource == "mpijobs"
                and e.user == CLIENT_USER]
        summary = failure_summary(requests)
        windows = outages(requests)
        lengths = [w["length_s"] for w in windows if w["length_s"] is not None]
        rec = {"run": self.name, "fault": fault, "namespace": self.ns,
               "replicas": len(self.set.procs), **summary,
               "audit_requests": len(mine),
               "audit_5xx": sum(1 for e in mine if e.code >= 500),
               "apiserver_log_conversion_failures": self.apiserver_conversion_failures(),
               "outages": len(windows),
               "outage_s": {"count": len(lengths), "max": max(lengths, default=None),
                            "total": round(sum(lengths), 2)},
               "faults": self.faults,
               "replica_starts": [p.starts for p in self.set.procs], **extra}
        return rec


IN_FLIGHT = 1.0
"""Seconds around a SIGKILL within which a failed request (by the time its client sent it)
counts as in flight at the kill (on a connection to the killed replica: no server can answer
it, and the API server does not retry a webhook call that got EOF)."""


def run_webhook_kills(ctx: Context, *, replicas: int = 2, graceful: bool = False
                      ) -> dict[str, Any]:
    """SIGKILL (``graceful``: SIGTERM, as a rolling update or a drain does) a webhook-serving
    replica every 4-8 s for ``ctx.webhook_seconds``, restarting it at once; with more than one,
    the replicas are stopped in turn, each once the others are ready (a PodDisruptionBudget's
    ``minAvailable: 1``). With several replicas, a failed request is a violation unless it was
    in flight at a SIGKILL (:data:`IN_FLIGHT`); after SIGTERM none may fail."""
    import random
    name = f"webhook-{'restarts' if graceful else 'kills'}-{replicas}"
    signal_name = "SIGTERM" if graceful else "SIGKILL"
    rng = random.Random(ctx.seed)
    with _Env(ctx, name, replicas=replicas) as env:
        env.clients.start()
        deadline = time.monotonic() + ctx.webhook_seconds
        i = 0
        while time.monotonic() < deadline - 8:
            time.sleep(rng.uniform(4, 8))
            proc = env.set.procs[i % replicas]
            others = [p for p in env.set.procs if p is not proc]
            for other in others:  # a PodDisruptionBudget's minAvailable 1
                env.set.wait_ready(other)
            t = audit.now()
            if graceful:
                code = proc.stop()
                if code != 0:
                    env.violations.append(f"replica exited {code} on SIGTERM")
            else:
                proc.kill()
            proc.start()
            ready_after = env.set.wait_ready(proc)
            env.faults.append({"what": f"{signal_name} replica {i % replicas}",
                               "at": round(t, 3), "ready_again_s": ready_after})
            i += 1
        time.sleep(max(0.0, deadline - time.monotonic()))
        requests = env.clients.stop()
        kills = [f["at"] for f in env.faults]
        in_flight = [r for r in requests if not r.ok and not graceful
                     and any(abs(r.at - k) <= IN_FLIGHT for k in kills)]
        rec = env.record(f"{signal_name} a webhook replica x{i} ({replicas} "
                         f"{'replicas' if replicas > 1 else 'replica'})", requests,
                         failed_in_flight_at_kill=len(in_flight))
    violations = list(env.violations)
    if replicas > 1 and rec["failed"] > len(in_flight):
        violations.append(f"{rec['failed'] - len(in_flight)} of {rec['requests']} client "
                          "requests failed (beyond those in flight at a kill)")
    if not rec["requests"]:
        violations.append("no client requests")
    rec["violations"], rec["passed"] = violations, not violations
    return rec


def run_cert_rotation(ctx: Context) -> dict[str, Any]:
    """Two replicas renewing their certificate (and CA) every 45 s (a 60 s validity)."""
    seconds = max(ctx.webhook_seconds, 100.0)
    with _Env(ctx, "cert-rotation", replicas=2, extra=("--webhook-cert-validity", "60s")) as env:
        env.clients.start()
        cas = [secret_ca(env.core, env.home)]
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            current = secret_ca(env.core, env.home)
            if current and current != cas[-1]:
                cas.append(current)
                env.faults.append({"what": "CA and certificate rotated", "at": audit.now()})
            time.sleep(1)
        requests = env.clients.stop()
        agree = _agreement(env)
        rec = env.record("certificate and CA rotated (60 s validity)", requests,
                         rotations=len(cas) - 1, **agree)
    violations = []
    if rec["failed"]:
        violations.append(f"{rec['failed']} of {rec['requests']} client requests failed")
    if rec["rotations"] < 1:
        violations.append("no rotation during the run")
    violations += agree["disagreements"]
    rec["violations"], rec["passed"] = violations, not violations
    return rec


def run_secret_deleted(ctx: Context, *, times: int = 3) -> dict[str, Any]:
    """Two replicas; the certificate Secret deleted ``times`` times, 10-15 s apart."""
    import random
    rng = random.Random(ctx.seed)
    with _Env(ctx, "secret-deleted", replicas=2) as env:
        env.clients.start()
        for _ in range(times):
            time.sleep(rng.uniform(10, 15))
            t = audit.now()
            env.ctx.kubectl("delete", "secret", SECRET, "-n", env.home, check=True)
            back = _wait(lambda: bool(secret_ca(env.core, env.home)), 60)
            env.faults.append({"what": "certificate Secret deleted", "at": round(t, 3),
                               "recreated_s": back})
        time.sleep(15)
        requests = env.clients.stop()
        agree = _wait_agreement(env, 60)
        creates = _secret_creates(env)
        rec = env.record(f"certificate Secret deleted x{times} (2 replicas race)", requests,
                         secret_creates=creates, **agree)
    violations = []
    if rec["failed"]:
        violations.append(f"{rec['failed']} of {rec['requests']} client requests failed")
    violations += agree["disagreements"]
    rec["violations"], rec["passed"] = violations, not violations
    return rec


def _size(path: Any) -> int:
    return int(path.stat().st_size) if path.exists() else 0


def _wait(probe: Any, timeout: float) -> float | None:
    start = time.monotonic()
    while not probe():
        if time.monotonic() - start > timeout:
            return None
        time.sleep(0.2)
    return round(time.monotonic() - start, 2)


def _agreement(env: _Env) -> dict[str, Any]:
    """Whether the Secret's CA, the CRD's caBundle and the served certificates agree: the
    caBundle is the Secret's ``ca.crt`` and every replica serves a certificate signed by its
    newest CA (every CA has the same name: the signature tells them apart)."""
    from cryptography import x509
    ca_pem = secret_ca(env.core, env.home)
    bundle = crd_ca(env.ext)
    cas = x509.load_pem_x509_certificates(ca_pem) if ca_pem else []
    served = [served_certificate(port) for port in env.set.ports]
    problems = []
    if bundle != ca_pem:
        problems.append("the CRD's caBundle is not the Secret's ca.crt")
    signed = [bool(cas) and c is not None and signed_by(c, cas[0]) for c in served]
    if not all(signed):
        problems.append(f"replicas serving a certificate of the Secret's newest CA: {signed}")
    return {"served_serials": [c.serial_number if c else None for c in served],
            "secret_ca_serial": cas[0].serial_number if cas else None,
            "disagreements": problems}


def _wait_agreement(env: _Env, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        agree = _agreement(env)
        if not agree["disagreements"] or time.monotonic() > deadline:
            return agree
        time.sleep(1)


def _secret_creates(env: _Env) -> dict[str, int]:
    """Creations of the certificate Secret by answer code (201 won; 409 lost the race)."""
    events = audit.read_events(env.ctx.audit_log, start=env.start_wall, end=audit.now(),
                               namespaces=[env.home], settle=10)
    out: dict[str, int] = {}
    for e in events:
        if e.namespace == env.home and e.resource == "secrets" and e.verb == "create" \
                and e.name in (SECRET, ""):
            out[str(e.code)] = out.get(str(e.code), 0) + 1
    return out
