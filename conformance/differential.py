"""The differential run: a corpus of jobs through the reference operator and through ours.

For each flag group of the corpus, and for each side in turn (the reference operator first,
then ours; never both at once), on the same cluster and with the same flags:

1. install that side's CRD (as its users would), and the group's extra CRDs (PodGroups);
   for a kind ours serves through conversion (``KindSpec.conversion``) the CRD installed
   before is deleted first, and ours serves its conversion webhook (:func:`webhook_flags`);
2. create a fresh namespace and start recording it (:class:`conformance.kube.Recorder`);
3. start the operator scoped to that namespace, wait until it is ready (for a conversion
   kind, the recording starts once the operator is ready: the webhook's start changes the
   CRD, which ends every watch of its objects);
4. create every job of the group, run each case's steps, then wait until the namespace has
   been quiet for a while;
5. stop the operator (and remove its leader-election Lease, which the reference operator does
   not release).

Then every case is compared (:func:`compare_case`): the set of objects that belong to the job
(its ownership chain leads to it), each object as first created and as last seen (with whether
it was deleted), the job's own object (status included), the Events on the job, create errors
and step timeouts; all normalized (:mod:`conformance.normalize`). The two CRDs are compared
too, without descriptions. :mod:`conformance.intended` sorts the differences.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conformance import operators
from conformance.corpus import Case, Corpus, Group, Step
from conformance.diff import MISSING, Difference, compare
from conformance.kinds import KindSpec, crd_as_v1, pod_group_crd
from conformance.kube import ApiError, Kube, Recorder, Resource, Seen
from conformance.normalize import Context, build_context, normalize, summarize_events
from tests.processes import free_port

Obj = dict[str, Any]
SIDES = ("go", "ours")
LOCK_NAMESPACE = "mpi-operator"
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{LOCK_NAMESPACE}/leases/mpi-operator"
# mpi-operator v0.2.3's leader-election lock (client-go's Endpoints lock, as then)
ENDPOINTS_LOCK = f"/api/v1/namespaces/{LOCK_NAMESPACE}/endpoints/mpi-operator"


def release_locks(kube: Kube) -> None:
    """Remove the leader-election locks the operators leave behind (neither reference operator
    releases its lock on exit), so the next one leads at once."""
    kube.delete(LEASE)
    kube.delete(ENDPOINTS_LOCK)


def log(msg: str) -> None:
    print(f"[conformance {time.strftime('%H:%M:%S')}] {msg}", flush=True)


@dataclass
class SideRun:
    """What one operator did with one group's jobs."""

    side: str
    namespace: str
    objects: dict[tuple[str, str], Seen]
    create_errors: dict[str, str]
    step_errors: dict[str, str]
    ready_s: float
    wall_s: float
    exit_code: int | None
    recorder_errors: list[str] = field(default_factory=list)


@dataclass
class Settings:
    kube: Kube
    controller_kubeconfig: Path
    out: Path
    step_timeout: float = 120.0
    quiet: float = 5.0
    settle_timeout: float = 90.0


def wait(probe: Any, *, timeout: float, what: str, interval: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            value = probe()
            if value:
                return value
        except ApiError as err:
            last = err
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}"
                       + (f" (last error: {last})" if last else ""))


def install_crd(kube: Kube, crd: Obj) -> None:
    """Create or replace a CRD and wait until it is Established with its names accepted.

    A replaced CRD is Established already; when its names changed (one side's CRD has short
    names, the other's none), the API server's naming controller accepts the new ones a moment
    later, and the resource's storage is rebuilt then, which ends its watches with "too old
    resource version": a recording started before that would miss the first sight of a job."""
    kube.create_or_replace(crd)
    name = crd["metadata"]["name"]

    def ready() -> bool:
        got = kube.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        status = got.get("status") or {}
        conds = status.get("conditions") or []
        return (any(c["type"] == "Established" and c["status"] == "True" for c in conds)
                and status.get("acceptedNames") == got["spec"]["names"])

    wait(ready, timeout=60, what=f"CRD {name} Established with its names accepted")


def crd_path(name: str) -> str:
    return f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"


def replace_crd(kube: Kube, crd: Obj, *, timeout: float = 180) -> None:
    """Delete the CRD of ``crd``'s name and wait until it is gone (its objects with it), then
    install ``crd``: a CRD whose stored version the new one does not serve cannot be replaced
    in place."""
    path = crd_path(crd["metadata"]["name"])
    kube.delete(path)

    def gone() -> bool:
        try:
            kube.get(path)
        except ApiError as err:
            if err.status == 404:
                return True
            raise
        return False

    wait(gone, timeout=timeout, what=f"CRD {crd['metadata']['name']} to be deleted")
    install_crd(kube, crd)


WEBHOOK_CONFIGURATION = "conformance-mpi-controller"


def webhook_flags(port: int) -> list[str]:
    """Ours serving its webhooks on ``127.0.0.1:<port>`` (the local cluster's API server runs on
    this machine), its certificate Secret in the lock namespace and its validating webhooks
    in :data:`WEBHOOK_CONFIGURATION`, which :func:`no_admission` empties: the conversion
    webhook is what the run needs, and the controllers' own validation is what it compares
    (training-operator has no MPIJob webhook)."""
    return ["--webhooks", "on", "--webhook-server-port", str(port),
            "--webhook-url", f"https://127.0.0.1:{port}",
            "--webhook-namespace", LOCK_NAMESPACE,
            "--webhook-configuration-name", WEBHOOK_CONFIGURATION]


def no_admission(kube: Kube) -> None:
    """The ValidatingWebhookConfiguration of :func:`webhook_flags` without webhooks: ours
    creates a missing one from its registry, but only keeps the ``clientConfig`` of the
    webhooks a present one has."""
    kube.create_or_replace({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": WEBHOOK_CONFIGURATION}, "webhooks": []})


def read_crd(path: Path) -> Obj:
    """The first document of ``path``, a CRD, as ``apiextensions.k8s.io/v1``
    (:func:`conformance.kinds.crd_as_v1`)."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return crd_as_v1(dict(docs[0]))


def ensure_namespace(kube: Kube, name: str, *, wait_sa: bool = False) -> None:
    try:
        kube.create("/api/v1/namespaces", {"metadata": {"name": name}})
    except ApiError as err:
        if err.status != 409:
            raise
    if wait_sa:  # pods are refused until the namespace's default ServiceAccount exists
        wait(lambda: kube.get(f"/api/v1/namespaces/{name}/serviceaccounts/default"),
             timeout=90, what=f"ServiceAccount default in {name}")


class Differential:
    """Runs one kind's corpus (or its short form) and returns the differences."""

    def __init__(self, kind: KindSpec, corpus: Corpus, s: Settings) -> None:
        self.kind = kind
        self.corpus = corpus
        self.s = s
        self.job_path = kind.resource().path

    # -- one side -----------------------------------------------------------------------------

    def run_side(self, side: str, group: Group, cases: list[Case]) -> SideRun:
        kube = self.s.kube
        crd = read_crd(self.kind.crds[side]())
        if self.kind.conversion:
            replace_crd(kube, crd)
        else:
            install_crd(kube, crd)
        for name in group.resources:
            install_crd(kube, pod_group_crd(self.kind.optional[name]))
        namespace = f"conf-{group.name}-{side}-{uuid.uuid4().hex[:5]}"
        ensure_namespace(kube, namespace, wait_sa=True)
        ensure_namespace(kube, LOCK_NAMESPACE)
        release_locks(kube)
        resources = resources_of(self.kind, group)
        recorder = Recorder(kube, namespace, resources)
        if not self.kind.conversion:
            recorder.start()
        flags = [*self.corpus.flags, *group.flags, "--namespace", namespace]
        log_path = self.s.out / "logs" / f"{self.kind.name}-{group.name}-{side}.log"
        log_path.unlink(missing_ok=True)
        if side == "ours":
            if self.kind.conversion:
                no_admission(kube)
                flags += webhook_flags(free_port())
            proc = operators.ours(self.s.controller_kubeconfig, self.kind.ours_flags(flags),
                                  log_path)
        else:
            proc = operators.reference_factory(self.kind.reference)(
                self.s.controller_kubeconfig, flags, log_path)
        proc.env.update(group.env)
        start = time.monotonic()
        proc.start()
        try:
            ready = proc.wait_ready()
            log(f"{group.name}/{side}: {proc.name} ready after {ready}s in namespace {namespace}")
            if self.kind.conversion:
                self._wait_converting(namespace, cases)
                recorder.start()
            create_errors = self._create_all(namespace, cases)
            step_errors = self._run_steps(namespace, [c for c in cases
                                                     if c.name not in create_errors],
                                          resources)
            self._settle(recorder, group.name, side)
        finally:
            if self.kind.conversion:  # before the webhook goes: the watches need it
                recorder.stop()
            code = proc.stop()
            release_locks(kube)
            recorder.stop()
            if side == "ours" and self.kind.conversion:
                kube.delete(f"/apis/admissionregistration.k8s.io/v1/"
                            f"validatingwebhookconfigurations/{WEBHOOK_CONFIGURATION}")
        wall = round(time.monotonic() - start, 1)
        log(f"{group.name}/{side}: done in {wall}s (exit {code}); "
            f"{len(recorder.objects)} objects recorded")
        return SideRun(side, namespace, recorder.snapshot(), create_errors, step_errors,
                       ready, wall, code, list(recorder.errors))

    def _wait_converting(self, namespace: str, cases: list[Case]) -> None:
        """Until a dry-run create of the first case answers without a conversion error (the API
        server takes the webhook's new CRD ``clientConfig`` a moment after ours is ready)."""
        def converts() -> bool:
            try:
                self.s.kube.create(self.job_path(namespace), cases[0].manifest, dryRun="All")
            except ApiError as err:
                if "conversion webhook" in err.message:
                    return False
            return True

        wait(converts, timeout=60, what="the conversion webhook to answer")

    def _create_all(self, namespace: str, cases: list[Case]) -> dict[str, str]:
        errors: dict[str, str] = {}
        for case in cases:
            try:
                self.s.kube.create(self.job_path(namespace), case.manifest)
            except ApiError as err:
                errors[case.name] = err.message
        return errors

    def _run_steps(self, namespace: str, cases: list[Case], resources: list[Resource]
                   ) -> dict[str, str]:
        errors: dict[str, str] = {}

        def run(case: Case) -> None:
            for i, step in enumerate(case.steps):
                try:
                    self._step(namespace, case.name, step, resources)
                except (TimeoutError, ApiError, ValueError) as err:
                    errors[case.name] = f"steps[{i}] {step.action} {step.arg!r}: {err}"
                    return

        threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in cases]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return errors

    def _step(self, namespace: str, name: str, step: Step, resources: list[Resource]) -> None:
        path = f"{self.job_path(namespace)}/{name}"
        kube = self.s.kube
        if step.action == "patch":
            kube.merge_patch(path, step.arg)
        elif step.action == "patch-object":
            target = object_path(step.arg["object"], name, namespace, resources)
            kube.patch(target, step.arg["patch"], step.arg["type"])
        elif step.action == "sleep":
            time.sleep(step.arg)
        elif step.action == "wait-object":
            target = object_path(step.arg["object"], name, namespace, resources)
            phase = step.arg.get("phase")

            def there() -> bool:
                try:
                    obj = kube.get(target)
                except ApiError as err:
                    if err.status == 404:
                        return False
                    raise
                return phase is None or (obj.get("status") or {}).get("phase") == phase
            wait(there, timeout=self.s.step_timeout,
                 what=f"{step.arg['object']}" + (f" in phase {phase}" if phase else ""))
        elif step.action == "wait-gone":
            target = object_path(step.arg, name, namespace, resources)

            def gone() -> bool:
                try:
                    kube.get(target)
                except ApiError as err:
                    if err.status == 404:
                        return True
                    raise
                return False
            wait(gone, timeout=self.s.step_timeout, what=f"{step.arg} to be gone")
        elif step.action == "wait-condition":
            def has_condition() -> bool:
                conds = (kube.get(path).get("status") or {}).get("conditions") or []
                return any(c.get("type") == step.arg and c.get("status") == "True"
                           for c in conds)
            wait(has_condition, timeout=self.s.step_timeout,
                 what=f"condition {step.arg} on {name}")
        elif step.action == "wait-event":
            def has_event() -> bool:
                events = kube.get(f"/api/v1/namespaces/{namespace}/events",
                                  fieldSelector=f"involvedObject.name={name}")["items"]
                return any(e.get("reason") == step.arg for e in events)
            wait(has_event, timeout=self.s.step_timeout, what=f"event {step.arg} on {name}")

    def _settle(self, recorder: Recorder, group: str, side: str) -> None:
        deadline = time.monotonic() + self.s.settle_timeout
        while recorder.quiet_for() < self.s.quiet:
            if time.monotonic() > deadline:
                log(f"{group}/{side}: namespace still busy after {self.s.settle_timeout}s; "
                    "comparing what is there")
                return
            time.sleep(0.25)

    # -- the whole corpus ---------------------------------------------------------------------

    def run(self, *, short: bool, only: set[str] | None = None
            ) -> tuple[list[Difference], dict[str, Any]]:
        """Every group's cases (the short ones with ``short``; ``only`` names cases or groups
        to keep), both sides, compared; plus the two CRDs."""
        diffs: list[Difference] = []
        summary: dict[str, Any] = {"groups": {}, "cases": {}}
        if self.kind.setup is not None:
            self.kind.setup(self.s.kube, self.corpus.path)
        for group in self.corpus.groups.values():
            cases = [c for c in self.corpus.in_group(group.name, short=short)
                     if not only or c.name in only or group.name in only]
            if not cases:
                continue
            runs = {side: self.run_side(side, group, cases) for side in SIDES}
            summary["groups"][group.name] = {
                side: {"namespace": r.namespace, "ready_s": r.ready_s, "wall_s": r.wall_s,
                       "exit_code": r.exit_code, "recorder_errors": r.recorder_errors,
                       "create_errors": r.create_errors, "step_errors": r.step_errors}
                for side, r in runs.items()}
            for case in cases:
                found, compared = compare_case(self.kind, case, runs["go"], runs["ours"])
                diffs += found
                summary["cases"][case.name] = {"group": group.name, "objects": compared,
                                               "description": case.description}
            for r in runs.values():  # compared: let the namespace go (not waited for)
                self.s.kube.delete(f"/api/v1/namespaces/{r.namespace}")
        go_crd, our_crd = read_crd(self.kind.crds["go"]()), read_crd(self.kind.crds["ours"]())
        if self.kind.conversion:
            replace_crd(self.s.kube, our_crd)  # ours again, for the kinds and runs after
            go_crd, our_crd = (crd_at_version(go_crd, self.kind.version),
                               crd_at_version(our_crd, self.kind.version))
        diffs += compare_crds(go_crd, our_crd)
        return diffs, summary


# -- comparison (pure) ----------------------------------------------------------------------


def owned_by(objects: dict[tuple[str, str], Seen], root: tuple[str, str]) -> list[tuple[str, str]]:
    """Keys of ``root`` and every object whose owner chain leads to it (any owner reference)."""
    by_uid = {s.created["metadata"].get("uid"): key for key, s in objects.items()}
    root_uid = objects[root].created["metadata"].get("uid") if root in objects else None
    out = []
    for key, _seen in objects.items():
        if key[0] == "Event":
            continue
        current: tuple[str, str] | None = key
        hops = 0
        while current is not None and hops < 10:
            if current == root:
                out.append(key)
                break
            meta = objects[current].created["metadata"]
            owners = meta.get("ownerReferences") or []
            current = by_uid.get(owners[0]["uid"]) if owners else None
            if current is None and owners and owners[0]["uid"] == root_uid:
                current = root
            hops += 1
    return sorted(out)


def job_events(objects: dict[tuple[str, str], Seen], kind: str, name: str) -> list[Obj]:
    return [s.last for (k, _), s in sorted(objects.items()) if k == "Event"
            and (s.last.get("involvedObject") or {}).get("kind") == kind
            and (s.last.get("involvedObject") or {}).get("name") == name]


def _side(kind: KindSpec, case: Case, run: SideRun) -> tuple[Context, dict[str, Seen], list[Obj]]:
    root = (kind.kind, case.name)
    keys = owned_by(run.objects, root)
    objs = [run.objects[k].created for k in keys] + [run.objects[k].last for k in keys]
    ctx = build_context(run.namespace, objs)
    named = {}
    for key in keys:
        seen = run.objects[key]
        named[f"{key[0]}/{ctx.text(key[1])}"] = seen
    return ctx, named, job_events(run.objects, kind.kind, case.name)


def compare_case(kind: KindSpec, case: Case, go: SideRun, ours: SideRun
                 ) -> tuple[list[Difference], int]:
    """The differences of one case between the two runs, and how many objects were compared;
    each carries the case's contexts (comma-separated), e.g. ``running-unobserved-by-go``."""
    diffs: list[Difference] = []
    for what, go_errors, our_errors in (("create", go.create_errors, ours.create_errors),
                                        ("steps", go.step_errors, ours.step_errors)):
        ea, eb = go_errors.get(case.name, MISSING), our_errors.get(case.name, MISSING)
        if what == "create" and ea is not MISSING and eb is not MISSING:
            ea, eb = ea.replace(go.namespace, "<ns>"), eb.replace(ours.namespace, "<ns>")
        if ea != eb:
            diffs.append(Difference(case.name, what, what, "", ea, eb))
    refused = (case.name in go.create_errors, case.name in ours.create_errors)
    if refused != (case.create_error, case.create_error):  # the case no longer tests its point
        diffs.append(Difference(case.name, "create", "expected", "create_error",
                                refused[0], refused[1],
                                context=f"the corpus expects create_error={case.create_error}"))
    gctx, gobjs, gevents = _side(kind, case, go)
    octx, oobjs, oevents = _side(kind, case, ours)
    for name in sorted(set(gobjs) | set(oobjs)):
        a, b = gobjs.get(name), oobjs.get(name)
        if a is None or b is None:
            diffs.append(Difference(case.name, name, "presence", "",
                                    "present" if a else MISSING, "present" if b else MISSING))
            continue
        diffs += compare(normalize(a.created, gctx), normalize(b.created, octx),
                         case=case.name, obj=name, phase="created")
        diffs += compare(_final(a, gctx), _final(b, octx), case=case.name, obj=name,
                         phase="final")
    gsummary, osummary = summarize_events(gevents, gctx), summarize_events(oevents, octx)
    diffs += compare(gsummary, osummary, case=case.name, obj="events", phase="events")
    context = ",".join(c for c in (
        case_context(gobjs.get(f"{kind.kind}/{case.name}"), oobjs.get(f"{kind.kind}/{case.name}"))
        or created_again_context(gsummary, osummary) or recreated_context(gobjs, oobjs),
        event_burst_context(gsummary)) if c)
    if context:
        diffs = [dataclasses.replace(d, context=context) for d in diffs]
    return diffs, len(set(gobjs) & set(oobjs))


NEVER_RUNNING = "Running condition was never set."


def _running_unobserved(job: Seen | None) -> bool:
    """The job finished without its operator recording it running: mpi-operator's ``Running``
    False "... never set.", or (training-operator) no ``Running`` condition at all."""
    conds = ((job.last.get("status") or {}).get("conditions") or []) if job else []
    finished = any(c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True"
                   for c in conds)
    return any(c.get("type") == "Running" and str(c.get("message", "")).endswith(NEVER_RUNNING)
               for c in conds) or (finished and all(c.get("type") != "Running" for c in conds))


def case_context(go_job: Seen | None, our_job: Seen | None) -> str:
    """``running-unobserved-by-<side>`` when exactly one side's job finished before that
    operator saw it running (both operators then take the same documented path, so the
    differences that follow are of timing, see the differences tables in docs/)."""
    go_missed, ours_missed = _running_unobserved(go_job), _running_unobserved(our_job)
    if go_missed != ours_missed:
        return f"running-unobserved-by-{'go' if go_missed else 'ours'}"
    return ""


CREATE_EVENT = re.compile(r"Normal SuccessfulCreate(Pod|Service): ")


def created_again_context(go_events: dict[str, Obj], our_events: dict[str, Obj]) -> str:
    """``created-again-by-go`` when the reference operator created a child that ours created
    too, more often than ours did (the ``SuccessfulCreatePod``/``SuccessfulCreateService``
    counts, summarized by :func:`~conformance.normalize.summarize_events`): a reconcile that
    read a stale job put back what the job's failure had just deleted (docs/training-kinds.md,
    "Stale cache")."""
    for key, event in go_events.items():
        ours = (our_events.get(key) or {}).get("count", 0)
        if CREATE_EVENT.match(key) and 1 <= ours < event["count"]:
            return "created-again-by-go"
    return ""


def recreated_context(go: dict[str, Seen], ours: dict[str, Seen]) -> str:
    """``created-again-by-go`` when the reference operator created one of the job's objects
    again after it was deleted more often than ours did (seen by the recorder; its Events may
    have been dropped, see :func:`event_burst_context`)."""
    for name, seen in go.items():
        if name in ours and seen.recreated > ours[name].recreated:
            return "created-again-by-go"
    return ""


SPAM_BURST = 25


def event_burst_context(go_events: dict[str, Obj]) -> str:
    """``event-burst-by-go`` when the reference operator recorded at least 25 Events on the job
    (the counts summed): client-go's spam filter (a burst of 25 per source and object, one
    more every 5 minutes) drops its later Events of that job (docs/training-kinds.md, "Event spam
    filter")."""
    total = sum(int(e.get("count") or 0) for e in go_events.values())
    return "event-burst-by-go" if total >= SPAM_BURST else ""


def _final(seen: Seen, ctx: Context) -> Obj:
    return {"deleted": seen.deleted, **normalize(seen.last, ctx)}


def _strip_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_strip_descriptions(v) for v in value]
    return value


def crd_at_version(crd: Obj, version: str) -> Obj:
    """``crd`` with ``spec.versions`` cut to the entry of ``version`` (the one the kind is
    compared at; a CRD serving more versions keeps the others out of the comparison)."""
    spec = crd.get("spec") or {}
    versions = [v for v in spec.get("versions") or [] if v.get("name") == version]
    return {**crd, "spec": {**spec, "versions": versions}}


def compare_crds(go: Obj, ours: Obj) -> list[Difference]:
    """The two CRDs, descriptions aside (they are documentation, not behaviour)."""
    return compare(_strip_descriptions(go), _strip_descriptions(ours), case="(CRD)",
                   obj="CustomResourceDefinition", phase="schema")


def resources_of(kind: KindSpec, group: Group) -> list[Resource]:
    return [*kind.children, kind.resource(), *(kind.optional[n] for n in group.resources)]


def object_path(spec: str, name: str, namespace: str, resources: list[Resource]) -> str:
    """The API path of a step's ``<plural>/<name>[/<sub>]`` (``{name}``: the job's name),
    among the resources the run records."""
    plural, _, rest = spec.replace("{name}", name).partition("/")
    res = next((r for r in resources if r.plural == plural), None)
    if res is None:
        raise ValueError(f"{spec}: {plural} is not a resource of this run "
                         f"({', '.join(r.plural for r in resources)})")
    return f"{res.path(namespace)}/{rest}"
