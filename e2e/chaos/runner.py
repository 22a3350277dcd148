"""Fault runs: one function per fault, each driving a mixed workload (every job kind of
:mod:`e2e.chaos.kinds`, ``--kinds`` selects) while injecting that fault, then checking the
invariants (overall and per kind) and writing ``<out>/<run>.json``; ``main`` runs them all and
writes ``<out>/summary.md``.

    python -m e2e.chaos.runner --cluster-dir DIR [--jobs 100 --workers 4 --kills 10]
        [--kinds all|mpijob,tfjob,...] [RUN ...]

Runs: crashes, apiserver-restarts, lost-watches, failover, overload, hostile, and the webhook
runs of :mod:`e2e.chaos.webhook_runs` (webhook-kills-2, webhook-restarts-2,
webhook-kills-1, cert-rotation, secret-deleted). The controller runs as processes
(``mpi-controller run``) with leader election on ``<lock-ns>/mpi-operator``; a supervisor
restarts a replica that exits on its own (as a Deployment would) and counts it. Jobs created
through MPIJob ``v1``/``v1alpha2`` need the conversion webhook: a run with those kinds starts
a webhook-serving process of its own (which no fault touches; the webhook runs fault it).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from e2e.chaos import audit, webhook_runs
from e2e.chaos.hostile import at_limits, generate_invalid
from e2e.chaos.hostile_kinds import BadJob, at_limit_jobs, generate_for_kinds, names_field
from e2e.chaos.kinds import CONVERSION_KINDS, KINDS, kind_rows, kind_table, parse_kinds, plan_mixed
from e2e.chaos.webhooks import WebhookSet
from e2e.chaos.workload import Workload, retrying
from tests.processes import ControllerProcess
from tests.support import HACK

FAULT_RUNS = ("crashes", "apiserver-restarts", "lost-watches", "failover", "overload",
              "hostile")
WEBHOOK_RUNS = ("webhook-kills-2", "webhook-restarts-2", "webhook-kills-1", "cert-rotation",
                "secret-deleted")
RUNS = FAULT_RUNS + WEBHOOK_RUNS
OVERLOAD_ARGS = ("--max-requests-inflight=5 --max-mutating-requests-inflight=2 "
                 "--enable-priority-and-fairness=false")
HANDOVER_WINDOW = 1.0  # seconds two identities' writes may overlap at a lease handover


class Replica(ControllerProcess):
    """A controller process that knows where its current incarnation's log starts."""

    parked = False  # stopped on purpose: the supervisor leaves it down

    def start(self) -> None:
        self.parked = False
        self.offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        super().start()

    def current_log(self) -> str:
        with self.log_path.open("rb") as fh:
            fh.seek(getattr(self, "offset", 0))
            return fh.read().decode(errors="replace")

    def leading(self) -> bool:
        return self.alive() and "successfully acquired lease" in self.current_log()


@dataclass
class Context:
    """Where and how big: the cluster (admin kubeconfig, controller kubeconfigs, audit log,
    hack commands) and the workload size."""

    kubeconfig: str
    controller_kubeconfigs: tuple[str, str]
    audit_log: Path
    out_dir: Path
    jobs: int = 100
    workers: int = 4
    kills: int = 10
    seed: int = 1
    lock_namespace: str = "mpi-operator"
    converge_timeout: float = 600.0
    min_s: int = 10
    max_s: int = 30
    invalid: int = 40
    cluster_env: dict[str, str] = field(default_factory=dict)
    # Controllers provided by the caller (pytest's session controller); else started here.
    given: list[Replica] = field(default_factory=list)
    extra_args: tuple[str, ...] = ()
    kinds: tuple[str, ...] = tuple(KINDS)
    webhook_seconds: float = 90.0  # how long the webhook runs' clients run

    def kubectl(self, *args: str, check: bool = False, input: str | None = None) -> str:
        return _kubectl(self, *args, check=check, input=input)

    def hack(self, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> str:
        import os
        out = subprocess.run(["bash", str(HACK), *args], check=True, capture_output=True,
                             text=True, timeout=timeout,
                             env={**os.environ, **self.cluster_env, **(env or {})})
        return out.stdout

    def secrets(self) -> list[str]:
        """Bearer tokens of the cluster's identities (must never appear in any output)."""
        found = []
        tokens = Path(self.kubeconfig).with_name("tokens.csv")
        if tokens.exists():
            found += [line.split(",")[0] for line in tokens.read_text().splitlines() if line]
        return found


class Run:
    """One fault run: namespace, workload, controllers, supervisor, faults, checks."""

    def __init__(self, ctx: Context, name: str, fault: str, *, replicas: int = 1,
                 extra: tuple[str, ...] = (), kubeconfigs: Sequence[str] = (),
                 admission: bool = False) -> None:
        self.ctx, self.name, self.fault = ctx, name, fault
        self.extra = extra
        self.kubeconfigs = list(kubeconfigs) or list(ctx.controller_kubeconfigs)
        self.namespace = f"chaos-{name}-{uuid.uuid4().hex[:6]}"
        self.rng = random.Random(ctx.seed)
        self.work = Workload(ctx.kubeconfig, self.namespace)
        self.faults: list[tuple[str, float]] = []
        self.unplanned: list[str] = []
        self.notes: dict[str, Any] = {}
        self.violations: list[str] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.started = time.monotonic()
        self.start_wall = audit.now()
        self.replicas = self._replicas(replicas)
        self.supervisor = threading.Thread(target=self._supervise, daemon=True)
        self.webhooks: WebhookSet | None = None
        if admission or set(ctx.kinds) & set(CONVERSION_KINDS):
            home = f"{self.namespace}-wh"
            logs = ctx.out_dir / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            # No leader election: an API server restart longer than the renew deadline would
            # end its leadership and the process (exit 1, restarted by a Deployment; here by
            # nobody), and jobs created through v1/v1alpha2 would fail for the rest of the run.
            self.webhooks = WebhookSet(ctx.kubeconfig, logs, home=home, reconcile=f"{home}-idle",
                                       kubectl=ctx.kubectl, extra=("--no-leader-elect",))

    def _replicas(self, n: int) -> list[Replica]:
        if self.ctx.given:
            return self.ctx.given[:n]
        logs = self.ctx.out_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        return [Replica(self.kubeconfigs[i], logs / f"{self.name}-{i}.log",
                        "--lock-namespace", self.ctx.lock_namespace, *self.ctx.extra_args,
                        *self.extra)
                for i in range(n)]

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Run:
        self.work.create_namespace()
        if self.webhooks is not None:
            for ns in (self.webhooks.home, f"{self.webhooks.home}-idle"):
                self.ctx.kubectl("create", "namespace", ns)
            self.webhooks.__enter__()
        for rep in self.replicas:
            if not rep.alive():
                rep.start()
        self.wait(lambda: any(r.alive() and "caches synced" in r.current_log()
                              for r in self.replicas), 90, "a replica to lead and sync")
        self.supervisor.start()
        # Pods of every kind, HPAs and StatefulSets sampled from the start (the audit log has
        # only the controller's own requests: not the pods a Job or StatefulSet creates).
        self.work.start_sampling()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        if self.supervisor.is_alive():
            self.supervisor.join(timeout=10)
        _own_replicas_stop(self)
        if exc[0] is not None:  # a crashed run leaves no jobs behind for the next runs
            try:
                self.work.delete_namespace()
            except Exception as err:
                self.violations.append(f"namespace not deleted: {err!r}")
        if self.webhooks is not None:
            self.webhooks.__exit__()
            for ns in (self.webhooks.home, f"{self.webhooks.home}-idle"):
                self.ctx.kubectl("delete", "namespace", ns, "--wait=false")
        self.work.close()

    def _supervise(self) -> None:
        while not self.stopping.wait(0.5):
            with self.lock:
                for rep in self.replicas:
                    if rep.proc is not None and not rep.alive() and not rep.parked:
                        code = rep.proc.returncode
                        self.unplanned.append(f"{rep.log_path.name}: exit {code}")
                        self.fault_at(f"restart after exit {code}")
                        rep.start()

    def fault_at(self, label: str) -> float:
        t = audit.now()
        self.faults.append((label, t))
        return t

    @staticmethod
    def wait(probe: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not probe():
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
            time.sleep(0.2)

    def leader(self, timeout: float = 60) -> Replica:
        self.wait(lambda: any(r.leading() for r in self.replicas), timeout, "a leader")
        return next(r for r in self.replicas if r.leading())

    def kill(self, rep: Replica, *, restart: bool = True) -> float:
        with self.lock:
            t = self.fault_at(f"SIGKILL {rep.log_path.name}")
            rep.kill()
            rep.parked = True
            if restart:
                rep.start()
        return t

    def background(self, fn: Callable[[], None]) -> threading.Thread:
        def target() -> None:
            try:
                fn()
            except Exception as exc:
                self.violations.append(f"fault injection failed: {exc!r}")
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        return thread

    # -- checks ----------------------------------------------------------------------------

    def ssh_key_lines(self, names: Sequence[str]) -> list[str]:
        """Lines of the jobs' SSH private keys (to look for in every output)."""
        lines: list[str] = []
        for name in names[:5]:
            try:
                sec = self.work.core.read_namespaced_secret(f"{name}-ssh", self.namespace)
            except Exception:
                continue
            raw = base64.b64decode((sec.data or {}).get("ssh-privatekey", "")).decode()
            lines += [ln for ln in raw.splitlines() if ln and "-----" not in ln]
        return lines

    def texts(self) -> list[str]:
        out = [r.log() for r in self.replicas]
        events = retrying(lambda: self.work.core.list_namespaced_event(self.namespace)).items
        out += [e.message or "" for e in events]
        for job in self.work.list_jobs():
            for cond in (job.get("status") or {}).get("conditions") or []:
                out.append(cond.get("message", ""))
        return out

    def finish(self, *, converge: bool = True, extra_expect: dict[str, int] | None = None
               ) -> dict[str, Any]:
        """Wait for convergence, check every invariant, clean up, write the record."""
        self.work.start_sampling()
        outcome = self.work.wait_converged(self.ctx.converge_timeout) if converge else None
        self.work.sample_workers()
        self.work.stop_sampling()
        names = sorted(self.work.plans)
        plans = dict(self.work.plans)
        terminal = {j["metadata"]["name"]: Workload.terminal(j) for j in self.work.list_jobs()}
        key_lines = self.ssh_key_lines(names)
        leaks = audit.leaked(self.texts(), [*self.ctx.secrets(), *key_lines])
        replicas_by_job = {p.name: p.workers for p in self.work.plans.values()}
        replicas_by_job.update(extra_expect or {})
        orphans = self.work.delete_all_and_find_orphans()
        end = audit.now()
        self.stopping.set()
        self.supervisor.join(timeout=10)
        alive = [r.alive() for r in self.replicas]
        events = audit.read_events(self.ctx.audit_log, start=self.start_wall, end=end,
                                   namespaces=[self.namespace])
        ns_events = [e for e in events if e.namespace == self.namespace]
        created = audit.creations(ns_events)
        beyond = audit.workers_beyond(ns_events, replicas_by_job)
        kinds = kind_rows(
            {n: p for n, p in plans.items() if hasattr(p, "key")}, terminal=terminal,
            created_pods=[e.name for e in ns_events if e.verb == "create"
                          and e.resource == "pods" and e.code == 201 and not e.subresource],
            duplicates=created["duplicates"], max_pods=self.work.max_pods,
            max_hpas=self.work.max_hpas, max_statefulset=self.work.max_statefulset,
            orphans=orphans)
        fault_times = [t for _, t in self.faults]
        recovery = audit.recovery_times(ns_events, fault_times)
        rec = {
            "run": self.name, "fault": self.fault, "namespace": self.namespace,
            "jobs": len(names), "workers": self.ctx.workers,
            "duration_s": round(time.monotonic() - self.started, 1),
            "converged": outcome.converged if outcome else None,
            "expected": outcome.expected if outcome else None,
            "wrong_condition": outcome.wrong if outcome else {},
            "stuck": outcome.stuck if outcome else [],
            "duplicates": created["duplicates"], "created": created["created"],
            "already_exists_409": created["already_exists"],
            "already_exists_by_resource": created["already_exists_by_resource"],
            "workers_beyond_replicas_audit": beyond,
            "workers_beyond_replicas_sampled": self.work.workers_over(),
            "orphans": orphans,
            "faults": [{"what": w, "at": round(t, 3), "recovery_s": r}
                       for (w, t), r in zip(self.faults, recovery, strict=True)],
            "recovery_s": _summary([r for r in recovery if r is not None]),
            "unplanned_restarts": self.unplanned,
            "replicas_alive_at_end": alive,
            "controller_429s": sum(1 for e in ns_events + [e for e in events if e.resource ==
                                   "leases"] if e.code == 429 and e.user in audit.CONTROLLER_USERS),
            "secret_leaks": leaks,
            "kinds": kinds,
            "sampled_hpas": dict(self.work.max_hpas),
            "sampled_statefulsets": dict(self.work.max_statefulset),
            **self.notes,
        }
        if outcome and (outcome.stuck or outcome.wrong):
            self.violations.append(f"{len(outcome.stuck)} stuck, {len(outcome.wrong)} wrong")
        if created["duplicates"]:
            self.violations.append(f"duplicate creations: {created['duplicates']}")
        if beyond or rec["workers_beyond_replicas_sampled"]:
            self.violations.append("worker pods beyond replicas")
        if orphans:
            self.violations.append(f"{len(orphans)} orphans")
        if leaks:
            self.violations.append("secret material in logs/events/status")
        for key, row in kinds.items():
            if not row["passed"]:
                self.violations.append(f"{key}: {'; '.join(row['violations'])}")
        rec["violations"] = self.violations
        rec["passed"] = not self.violations
        self.ctx.out_dir.mkdir(parents=True, exist_ok=True)
        (self.ctx.out_dir / f"{self.name}.json").write_text(json.dumps(rec, indent=2))
        self.work.delete_namespace()
        return rec


def _summary(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"count": 0, "median": None, "max": None}
    return {"count": len(values), "median": round(statistics.median(values), 2),
            "max": round(max(values), 2)}


def _own_replicas_stop(run: Run) -> None:
    """Stop replicas this run started (SIGTERM: drain, release, exit 0)."""
    if run.ctx.given:
        return
    for rep in run.replicas:
        if rep.alive():
            if rep.proc is not None:
                rep.proc.send_signal(18)  # SIGCONT, in case a run stopped it
            code = rep.stop()
            if code != 0:
                run.violations.append(f"{rep.log_path.name} exited {code} on SIGTERM")


def _workload(run: Run, *, prefix: str = "cj") -> None:
    ctx = run.ctx
    run.work.submit(plan_mixed(ctx.jobs, ctx.workers, kinds=ctx.kinds, seed=ctx.seed,
                               prefix=prefix, min_s=ctx.min_s, max_s=ctx.max_s))


# -- the fault runs ------------------------------------------------------------------------

def run_crashes(ctx: Context) -> dict[str, Any]:
    """SIGKILL the controller ``kills`` times, 2-10 s apart, restarting it each time."""
    with Run(ctx, "crashes", f"SIGKILL controller x{ctx.kills}") as run:
        def inject() -> None:
            for _ in range(ctx.kills):
                time.sleep(run.rng.uniform(2, 10))
                run.kill(run.replicas[0])
        thread = run.background(inject)
        _workload(run)
        thread.join(timeout=ctx.kills * 12 + 30)
        rec = run.finish()
        _own_replicas_stop(run)
    return _rewrite(ctx, rec, run)


def run_apiserver_restarts(ctx: Context, *, times: int = 2) -> dict[str, Any]:
    """Stop and restart kube-apiserver ``times`` times mid-run."""
    with Run(ctx, "apiserver-restarts", f"kube-apiserver restart x{times}") as run:
        def inject() -> None:
            for _ in range(times):
                time.sleep(run.rng.uniform(8, 15))
                ctx.hack("stop", "kube-apiserver")
                run.fault_at("kube-apiserver stopped (3 s down)")
                time.sleep(3)
                ctx.hack("start", "kube-apiserver")
        thread = run.background(inject)
        _workload(run)
        thread.join(timeout=times * 120)
        rec = run.finish()
        _own_replicas_stop(run)
    return _rewrite(ctx, rec, run)


def run_lost_watches(ctx: Context, *, restart_apiserver: bool = True,
                     pause: float = 10.0) -> dict[str, Any]:
    """Stop the controller (SIGSTOP: it keeps its caches and resourceVersions), delete some
    jobs, compact etcd (and restart kube-apiserver so the watch cache starts afresh), then
    continue it: its watches resume from compacted resourceVersions, get 410 and relist."""
    # Leader election is off here (when the controller is started by the run): a pause longer
    # than the 5 s renew deadline rightly ends leadership (exit 1; the failover run covers
    # that), and a fresh process lists afresh instead of resuming its watches.
    fault = ("etcd compaction" + (" + API server restart" if restart_apiserver else "")
             + " + jobs deleted while controller stopped")
    with Run(ctx, "lost-watches", fault, extra=("--no-leader-elect",)) as run:
        _workload(run)
        time.sleep(run.rng.uniform(4, 8))
        rep = run.replicas[0]
        live = [j["metadata"]["name"] for j in run.work.list_jobs()
                if not Workload.terminal(j)]
        doomed = live[: max(1, len(live) // 10)]
        with run.lock:
            rep.proc.send_signal(19)  # type: ignore[union-attr]  # SIGSTOP
            t = audit.now()
            for name in doomed:
                run.work.delete_job(name)
            time.sleep(pause / 2)
            run.notes["compacted_revision"] = int(ctx.hack("compact").split()[-1])
            if restart_apiserver:
                ctx.hack("restart", "kube-apiserver")
            time.sleep(pause / 2)
            run.fault_at("controller continued after jobs deleted and etcd compacted")
            rep.proc.send_signal(18)  # type: ignore[union-attr]  # SIGCONT
        run.notes["deleted_while_stopped"] = doomed
        rec = run.finish()
        log = rep.current_log()
        rec["watch_410_relists"] = log.count("watch expired; relisting") + log.count(
            "resourceVersion expired")
        rec["controller_lists_after_fault"] = _relists(ctx, run, t)
        _own_replicas_stop(run)
    return _rewrite(ctx, rec, run)


def _relists(ctx: Context, run: Run, after: float) -> int:
    events = audit.read_events(ctx.audit_log, start=after, end=audit.now(), settle=0)
    return audit.relists(events, after=after)


def run_failover(ctx: Context) -> dict[str, Any]:
    """Two replicas (two identities); SIGKILL the leader mid-run (restarted as a candidate),
    later SIGTERM the new leader (it drains and releases the lease; the other takes over)."""
    with Run(ctx, "failover", "SIGKILL leader, then SIGTERM new leader", replicas=2) as run:
        _workload(run)
        time.sleep(run.rng.uniform(5, 10))
        first = run.leader()
        other = next(r for r in run.replicas if r is not first)
        run.kill(first, restart=False)
        run.wait(other.leading, 60, "the other replica to take over")
        run.notes["takeover_after_kill_s"] = round(audit.now() - run.faults[-1][1], 2)
        with run.lock:
            first.start()  # back as a candidate, as a restarted pod would be
        second = other
        time.sleep(run.rng.uniform(5, 10))
        with run.lock:
            t = run.fault_at(f"SIGTERM {second.log_path.name}")
            code = second.stop()
            second.parked = True
            run.notes["sigterm_exit_code"] = code
            if code != 0:
                run.violations.append(f"new leader exited {code} on SIGTERM")
        run.wait(first.leading, 60, "the first replica to take over again")
        with run.lock:
            second.start()
        third = run.leader(timeout=60)
        run.notes["takeover_after_release_s"] = round(audit.now() - t, 2)
        run.notes["released_lease"] = "released leader lease" in second.log()
        rec = run.finish()
        events = audit.read_events(ctx.audit_log, start=run.start_wall, end=audit.now(),
                                   namespaces=[run.namespace], settle=0)
        ns_events = [e for e in events if e.namespace == run.namespace]
        over = audit.overlaps(ns_events, window=HANDOVER_WINDOW)
        # Recovery = until the successor's first write (the old leader's own in-flight
        # writes do not count).
        successor = {"SIGKILL": _user(other), "SIGTERM": _user(first)}
        users = [successor.get(f["what"].split()[0]) for f in rec["faults"]]
        times = audit.recovery_times(ns_events, [f["at"] for f in rec["faults"]], users=users)
        for f, r in zip(rec["faults"], times, strict=True):
            f["recovery_s"] = r
        rec["recovery_s"] = _summary([r for r in times if r is not None])
        rec["writer_epochs"] = over["epochs"]
        rec["handover_gaps_s"] = over["handover_gaps_s"]
        rec["leaders"] = [first.log_path.name, second.log_path.name, third.log_path.name]
        if over["violation"]:
            rec["violations"].append("writes of the two identities overlap")
        _own_replicas_stop(run)
    return _rewrite(ctx, rec, run)


def _flood(run: Run, stop: threading.Event, kubeconfig: str, *, readers: int = 4,
           writers: int = 1, pause: float = 0.1) -> list[int]:
    """Other clients competing for the API server's few in-flight slots (LISTs of every pod;
    ConfigMap updates), until ``stop``; returns [requests, 429s] (updated live)."""
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException
    counts = [0, 0]
    ns = run.namespace
    run.work.core.create_namespaced_config_map(
        ns, {"metadata": {"name": "flood"}, "data": {"n": "0"}})
    core = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))

    def loop(call: Callable[[int], object]) -> None:
        i = 0
        while not stop.is_set():
            i += 1
            counts[0] += 1
            try:
                call(i)
                time.sleep(pause)
            except ApiException as exc:
                if exc.status == 429:
                    counts[1] += 1
            except Exception:
                time.sleep(0.5)

    for _ in range(readers):
        threading.Thread(target=loop, args=(lambda i: core.list_pod_for_all_namespaces(
            _request_timeout=30),), daemon=True).start()
    for _ in range(writers):
        threading.Thread(target=loop, args=(lambda i: core.patch_namespaced_config_map(
            "flood", ns, {"data": {"n": str(i)}}, _request_timeout=30),), daemon=True).start()
    return counts


def _user(rep: Replica) -> str:
    return "mpi-controller-2" if rep.kubeconfig.endswith("-2") else "mpi-controller"


def _kubectl(ctx: Context, *args: str, check: bool = False, input: str | None = None) -> str:
    binary = Path(ctx.hack("bin-dir").strip()) / "kubectl"
    out = subprocess.run([str(binary), "--kubeconfig", ctx.kubeconfig, *args], input=input,
                         capture_output=True, text=True, check=check, timeout=60)
    return out.stdout


def _service_account_kubeconfig(ctx: Context, sa: str, role: str) -> str:
    """A kubeconfig for ServiceAccount ``mpi-operator/<sa>`` bound to ClusterRole ``role``.
    (The local cluster's user identities are in system:masters, which the API server's
    in-flight limits exempt; a ServiceAccount is limited like a deployed controller.)"""
    import yaml
    ns = ctx.lock_namespace
    _kubectl(ctx, "create", "serviceaccount", sa, "-n", ns)
    _kubectl(ctx, "create", "clusterrolebinding", f"{role}-{sa}", f"--clusterrole={role}",
             f"--serviceaccount={ns}:{sa}")
    deadline = time.monotonic() + 60  # RBAC changes reach the authorizer after a moment
    while _kubectl(ctx, "auth", "can-i", "list", "pods", "--all-namespaces",
                   f"--as=system:serviceaccount:{ns}:{sa}").strip() != "yes":
        if time.monotonic() > deadline:
            raise TimeoutError(f"ServiceAccount {sa} never got its role")
        time.sleep(0.5)
    token = _kubectl(ctx, "create", "token", sa, "-n", ns, "--duration=2h", check=True).strip()
    config = yaml.safe_load(Path(ctx.kubeconfig).read_text())
    config["users"] = [{"name": sa, "user": {"token": token}}]
    for c in config["contexts"]:
        c["context"]["user"] = sa
    path = ctx.out_dir / f"kubeconfig-{sa}"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return str(path)


FLOOD_ROLE = """apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: chaos-flood}
rules:
- {apiGroups: [""], resources: [pods], verbs: [list]}
- {apiGroups: [""], resources: [configmaps], verbs: [patch]}
"""


def run_overload(ctx: Context) -> dict[str, Any]:
    """kube-apiserver with --max-requests-inflight=5 --max-mutating-requests-inflight=2; the
    controller runs as its ServiceAccount with the deployed ClusterRole, and other clients
    compete for the few slots."""
    from tests.support import REPO
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    _kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f",
             str(REPO / "deploy/base/cluster-role.yaml"), check=True)
    _kubectl(ctx, "apply", "--server-side", "-f", "-", input=FLOOD_ROLE, check=True)
    controller_kc = _service_account_kubeconfig(ctx, "mpi-operator", "mpi-operator")
    flood_kc = _service_account_kubeconfig(ctx, "chaos-flood", "chaos-flood")
    with Run(ctx, "overload", "kube-apiserver max-requests-inflight 5 / mutating 2",
             kubeconfigs=[controller_kc]) as run:
        run.fault_at("kube-apiserver restarted with small inflight limits")
        ctx.hack("restart", "kube-apiserver", env={"KUBE_APISERVER_EXTRA_ARGS": OVERLOAD_ARGS})
        flood = threading.Event()
        try:
            floods = _flood(run, flood, flood_kc)
            _workload(run)
            rec = run.finish()
        finally:
            flood.set()
            ctx.hack("restart", "kube-apiserver")
        rec["flood_requests"], rec["flood_429s"] = floods[0], floods[1]
        log = "\n".join(r.log() for r in run.replicas)
        rec["controller_log_429s"] = log.count("TooManyRequests") + log.count("429 ")
        rec["controller_log_timeouts"] = log.count("Timeout")
        _own_replicas_stop(run)
    return _rewrite(ctx, rec, run)


@dataclass
class _Answer:
    """What the API server said to one bad job's create."""

    job: BadJob
    status: int  # 201, or the refusal's HTTP status
    message: str = ""

    @property
    def by_webhook(self) -> bool:
        return "admission webhook" in self.message


def _submit_bad(run: Run, job: BadJob) -> _Answer:
    """Create ``job`` through its own version, once (a 5xx must be seen, not retried away)."""
    from kubernetes.client.exceptions import ApiException
    try:
        run.work.custom.create_namespaced_custom_object(
            "kubeflow.org", job.version, run.namespace, job.plural, job.body)
        return _Answer(job, 201)
    except ApiException as exc:
        try:
            message = str(json.loads(exc.body or "{}").get("message", exc.body))
        except ValueError:
            message = str(exc.body)
        return _Answer(job, int(exc.status or 0), message)


def _warning_names_field(run: Run, name: str, field: str) -> bool:
    events = retrying(lambda: run.work.core.list_namespaced_event(
        run.namespace, field_selector=f"involvedObject.name={name}")).items
    return any(e.type == "Warning" and (e.reason == "ValidationError"
                                         or (e.reason or "").endswith("FailedValidation"))
               and names_field(field, e.message or "") for e in events)


def _handler_exceptions(run: Run) -> int:
    """Tracebacks in the webhook-serving and controller processes' logs."""
    procs = [*run.replicas, *(run.webhooks.procs if run.webhooks is not None else [])]
    return sum(p.log().count("Traceback") for p in procs)


def _as_bad(hostile: Any) -> BadJob:
    """An MPIJob ``v2beta1`` of :func:`generate_invalid` as a :class:`BadJob`."""
    return BadJob("mpijob-v2beta1", hostile.name, hostile.field, hostile.body)


def _judge(run: Run, answers: list[_Answer], *, phase: str) -> dict[str, Any]:
    """Refused naming the field, or admitted and told by a Warning Event naming it; no 5xx
    but, with admission unreachable, the API server's own refusal of a kind whose webhook
    fails closed. Violations are added to ``run``; the counts per kind returned."""
    admitted = [a for a in answers if a.status == 201]
    deadline = time.monotonic() + 120
    missing = admitted
    while missing and time.monotonic() < deadline:
        missing = [a for a in missing if not _warning_names_field(run, a.job.name, a.job.field)]
        if missing:
            time.sleep(2)
    closed = [a for a in answers if a.status >= 500 and phase == "unreachable"
              and ("failed calling webhook" in a.message or "conversion webhook" in a.message)]
    server_errors = [a for a in answers if a.status >= 500 and a not in closed]
    unnamed = [a for a in answers if 201 != a.status < 500 and not names_field(
        a.job.field, a.message)]
    rows: dict[str, dict[str, int]] = {}
    for a in answers:
        row = rows.setdefault(a.job.key, dict.fromkeys(
            ("submitted", "refused_by_schema", "refused_by_webhook", "webhook_unreachable",
             "admitted", "admitted_with_event", "5xx"), 0))
        row["submitted"] += 1
        if a in closed:
            row["webhook_unreachable"] += 1
        elif a.status >= 500:
            row["5xx"] += 1
        elif a.status != 201:
            row["refused_by_webhook" if a.by_webhook else "refused_by_schema"] += 1
        else:
            row["admitted"] += 1
            row["admitted_with_event"] += a not in missing
    if missing:
        run.violations.append(f"{phase}: {len(missing)} admitted bad jobs without a Warning "
                              "Event naming the field")
    if unnamed:
        run.violations.append(f"{phase}: {len(unnamed)} refusals not naming the field")
    if server_errors:
        run.violations.append(f"{phase}: {len(server_errors)} 5xx answers to bad jobs")
    for a in answers:  # invalid jobs may never terminate: keep them out of convergence
        run.work.plans.pop(a.job.name, None)
    return {"by_kind": rows,
            "refusals_not_naming_field": [(a.job.name, a.job.field, a.message[:300])
                                          for a in unnamed],
            "admitted_without_event": [(a.job.name, a.job.field) for a in missing],
            "server_errors": [(a.job.name, a.status, a.message[:300]) for a in server_errors],
            "fields": sorted({f"{a.job.key}: {a.job.field}" for a in answers})}


def _reach(run: Run, plural: str, version: str, name: str, expected: str,
           timeout: float) -> bool:
    def reached() -> bool:
        job: Any = run.work.custom.get_namespaced_custom_object(
            "kubeflow.org", version, run.namespace, plural, name)
        return any(c["type"] == expected and c["status"] == "True"
                   for c in (job.get("status") or {}).get("conditions") or [])
    try:
        run.wait(reached, timeout, f"{name} {expected}")
        return True
    except TimeoutError:
        return False


def _bad_jobs(ctx: Context, *, seed: int, prefix: str, count: int) -> list[BadJob]:
    """MPIJob ``v2beta1`` bad jobs (``count``) and every other kind's (``count // 8``, at
    least 2 each), named after ``prefix``."""
    own = ([_as_bad(h) for h in generate_invalid(count, seed=seed, prefix=prefix)]
           if "mpijob-v2beta1" in ctx.kinds else [])
    return own + generate_for_kinds(ctx.kinds, max(2, count // 8), seed=seed, prefix=prefix)


def run_hostile(ctx: Context) -> dict[str, Any]:
    """Invalid (hypothesis) jobs of every kind and version, with the validating webhooks on,
    then with them unreachable; and jobs at the limits; beside the valid workload."""
    fault = (f"{ctx.invalid} invalid MPIJobs v2beta1 and {max(2, ctx.invalid // 8)} of every "
             "other kind and version with admission on, as many with it unreachable; at-limit "
             "jobs; beside valid ones")
    with Run(ctx, "hostile", fault, admission=True) as run:
        limits = at_limits() if "mpijob-v2beta1" in ctx.kinds else []
        kind_limits = at_limit_jobs(ctx.kinds)
        starts = [r.starts for r in run.replicas]
        answers: list[_Answer] = []

        def hostile() -> None:
            answers.extend(_submit_bad(run, job) for job in _bad_jobs(
                ctx, seed=ctx.seed, prefix="bad", count=ctx.invalid))
            for lim in limits:
                answer = run.work.submit_raw(lim.body)
                if not isinstance(answer, dict):
                    run.violations.append(f"at-limit job {lim.name} rejected by the API")
            for key, what, plan in kind_limits:
                got = _submit_bad(run, BadJob(key, plan.name, "", plan.body))
                if got.status != 201:
                    run.violations.append(f"at-limit {key} job ({what}) refused: "
                                          f"{got.status} {got.message[:200]}")
        thread = run.background(hostile)
        _workload(run)
        thread.join(timeout=600)
        on = _judge(run, answers, phase="admission on")
        # Admission unreachable: every webhook replica stopped (the MPIJob v2beta1 webhook
        # fails open, the others closed as upstream's do), then served again.
        hooks = run.webhooks
        assert hooks is not None
        for proc in hooks.procs:
            proc.stop()
        off_answers = [_submit_bad(run, job) for job in _bad_jobs(
            ctx, seed=ctx.seed + 1, prefix="off", count=ctx.invalid)]
        for proc in hooks.procs:
            proc.start()
        for proc in hooks.procs:
            hooks.wait_ready(proc)
        off = _judge(run, off_answers, phase="unreachable")
        limit_state = {}
        for lim in limits:
            ok = _reach(run, "mpijobs", "v2beta1", lim.name, lim.expected, 180)
            limit_state[f"mpijob-v2beta1: {lim.what}"] = lim.expected if ok else "not reached"
            if not ok:
                run.violations.append(f"at-limit job {lim.name} never {lim.expected}")
        for key, what, plan in kind_limits:
            spec = KINDS[key]
            ok = _reach(run, spec.plural, spec.read_version, plan.name, plan.expected, 180)
            limit_state[f"{key}: {what}"] = plan.expected if ok else "not reached"
            if not ok:
                run.violations.append(f"at-limit {key} job ({what}) never {plan.expected}")
        restarts = [r.starts - s for r, s in zip(run.replicas, starts, strict=True)]
        if any(restarts) or run.unplanned:
            run.violations.append(f"controller restarted during hostile input: {restarts}")
        exceptions = _handler_exceptions(run)
        if exceptions:
            run.violations.append(f"{exceptions} tracebacks in the controller/webhook logs")
        mpi_admitted = [a for a in answers + off_answers
                        if a.job.key == "mpijob-v2beta1" and a.status == 201]
        mpi_missing = {tuple(x) for x in on["admitted_without_event"]
                       + off["admitted_without_event"]}
        run.notes.update({
            "invalid_submitted": len(answers) + len(off_answers),
            "invalid_admitted": len(mpi_admitted),
            "validation_events_naming_field": len(
                [a for a in mpi_admitted if (a.job.name, a.job.field) not in mpi_missing]),
            "admission_on": on, "admission_unreachable": off, "at_limits": limit_state,
            "handler_tracebacks": exceptions})
        expect = {lim.name: lim.workers for lim in limits}
        expect.update({plan.name: plan.workers for _, _, plan in kind_limits})
        rec = run.finish(extra_expect=expect)
        _own_replicas_stop(run)
    return _rewrite(ctx, rec, run)


def _rewrite(ctx: Context, rec: dict[str, Any], run: Run) -> dict[str, Any]:
    rec["violations"] = run.violations
    rec["passed"] = not run.violations
    (ctx.out_dir / f"{rec['run']}.json").write_text(json.dumps(rec, indent=2))
    return rec


FUNCTIONS: dict[str, Callable[[Context], dict[str, Any]]] = {
    "crashes": run_crashes, "apiserver-restarts": run_apiserver_restarts,
    "lost-watches": run_lost_watches, "failover": run_failover, "overload": run_overload,
    "hostile": run_hostile,
    "webhook-kills-2": lambda ctx: webhook_runs.run_webhook_kills(ctx, replicas=2),
    "webhook-kills-1": lambda ctx: webhook_runs.run_webhook_kills(ctx, replicas=1),
    "webhook-restarts-2": lambda ctx: webhook_runs.run_webhook_kills(ctx, replicas=2,
                                                                     graceful=True),
    "cert-rotation": webhook_runs.run_cert_rotation,
    "secret-deleted": webhook_runs.run_secret_deleted,
}


def webhook_table(records: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of the webhook runs."""
    lines = ["| run | fault injected | replicas | client requests through v1/v1alpha2 | failed "
             "(share; in flight at a kill) | 5xx in the audit log | conversion failures in "
             "kube-apiserver's log | outages (longest, total s) | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        if "requests" not in r:
            lines.append(f"| {r['run']} | {r['fault']} | | | | | | | "
                         f"FAIL: {'; '.join(r['violations'])} |")
            continue
        out = r["outage_s"]
        outage = "0" if not r["outages"] else f"{r['outages']} ({out['max']}, {out['total']})"
        lines.append(
            f"| {r['run']} | {r['fault']} | {r['replicas']} | {r['requests']} | {r['failed']} "
            f"({r['failed_share']}; {r.get('failed_in_flight_at_kill', 0)}) | {r['audit_5xx']} | "
            f"{r['apiserver_log_conversion_failures']} | {outage} | "
            f"{'pass' if r['passed'] else 'FAIL: ' + '; '.join(r['violations'])} |")
    return "\n".join(lines) + "\n"


def table(records: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of the fault runs."""
    lines = ["| run | fault injected | jobs converged | duplicates (409s) | workers > replicas "
             "| orphans | recovery median / max (s) | unplanned restarts | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        rec = r["recovery_s"]
        recovery = "-" if not rec["count"] else f"{rec['median']} / {rec['max']} (n={rec['count']})"
        beyond = len(r["workers_beyond_replicas_audit"]) + len(
            r["workers_beyond_replicas_sampled"])
        lines.append(
            f"| {r['run']} | {r['fault']} | {r['converged']}/{r['expected']} | "
            f"{len(r['duplicates'])} ({r['already_exists_409']}) | {beyond} | "
            f"{len(r['orphans'])} | {recovery} | {len(r['unplanned_restarts'])} | "
            f"{'pass' if r['passed'] else 'FAIL: ' + '; '.join(r['violations'])} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", metavar="RUN", help=f"some of {', '.join(RUNS)}")
    parser.add_argument("--cluster-dir", required=True, type=Path)
    parser.add_argument("--out", type=Path, default=Path("chaos-results"))
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--invalid", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--kinds", default="all",
                        help=f"all, or some of {', '.join(KINDS)} (comma-separated; 'mpijob': "
                             "its three versions)")
    parser.add_argument("--webhook-seconds", type=float, default=90,
                        help="how long the webhook runs' clients run")
    args = parser.parse_args(argv)
    try:
        kinds = parse_kinds(args.kinds)
    except ValueError as err:
        parser.error(str(err))
    if unknown := set(args.runs) - set(RUNS):
        parser.error(f"unknown runs {sorted(unknown)}; choose from {', '.join(RUNS)}")
    args.runs = args.runs or list(RUNS)
    d = args.cluster_dir
    ctx = Context(kubeconfig=str(d / "kubeconfig"),
                  controller_kubeconfigs=(str(d / "kubeconfig-controller"),
                                          str(d / "kubeconfig-controller-2")),
                  audit_log=d / "logs" / "audit.log", out_dir=args.out, jobs=args.jobs,
                  workers=args.workers, kills=args.kills, seed=args.seed,
                  converge_timeout=args.timeout, invalid=args.invalid, kinds=kinds,
                  webhook_seconds=args.webhook_seconds,
                  cluster_env={"MPI_CONTROLLER_CLUSTER_DIR": str(d)})
    subprocess.run([str(Path(ctx.hack("bin-dir").strip()) / "kubectl"), "--kubeconfig",
                    ctx.kubeconfig, "create", "namespace", ctx.lock_namespace],
                   capture_output=True, check=False, timeout=60)
    records = []
    for name in args.runs:
        started = time.monotonic()
        print(f"[chaos] {name} ...", flush=True)
        try:
            rec = FUNCTIONS[name](ctx)
        except Exception as exc:
            rec = {"run": name, "fault": name, "converged": None, "expected": None,
                   "duplicates": {}, "already_exists_409": 0, "orphans": [],
                   "workers_beyond_replicas_audit": [], "workers_beyond_replicas_sampled": {},
                   "recovery_s": {"count": 0}, "unplanned_restarts": [],
                   "violations": [f"run crashed: {exc!r}"], "passed": False}
            (ctx.out_dir / f"{name}.json").write_text(json.dumps(rec, indent=2))
        ctx.out_dir.mkdir(parents=True, exist_ok=True)
        (ctx.out_dir / f"{name}.json").write_text(json.dumps(rec, indent=2))
        records.append(rec)
        print(f"[chaos] {name}: {'pass' if rec['passed'] else 'FAIL'} in "
              f"{time.monotonic() - started:.0f}s {rec['violations']}", flush=True)
    done = {r["run"]: r for r in records}
    for name in RUNS:  # earlier runs' records in the same directory join the table
        path = ctx.out_dir / f"{name}.json"
        if name not in done and path.exists():
            done[name] = json.loads(path.read_text())
    faults = [done[n] for n in FAULT_RUNS if n in done]
    hooks = [done[n] for n in WEBHOOK_RUNS if n in done]
    summary = ""
    if faults:
        summary += f"## Fault runs\n\n{table(faults)}\n## Per kind\n\n{kind_table(faults)}"
    if hooks:
        summary += f"\n## Webhook runs\n\n{webhook_table(hooks)}"
    (ctx.out_dir / "summary.md").write_text(summary)
    print(summary)
    return 0 if all(r["passed"] for r in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
