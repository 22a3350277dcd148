"""The mixed workload of the fault runs: which job kinds (``--kinds``), how a small job of each
is made, and the per-kind invariants, checked by pure functions over what the run saw.

Kinds (keys): ``mpijob-v2beta1``; ``mpijob-v1`` (created through ``v1``: the conversion
webhook; kubectl-exec mode); ``mpijob-v1alpha2`` (created through ``v1alpha2``: a worker
StatefulSet and a launcher Job); ``tfjob``; ``pytorchjob`` (every third one elastic, with an
HPA); ``xgboostjob``; ``paddlejob``; ``jaxjob``. A job's name says its kind
(``<prefix>-<short>-NNN``), so every child object (named ``<job>-...``) is attributed to a
kind by its name.

Invariants per kind (:func:`kind_rows`): converged (every job reached the condition planned),
no pod created with an index beyond its replica type's ``replicas`` (elastic: its
``maxReplicas``) nor seen running beyond it, no object created twice (Services, HPAs, pods,
...), at most one HPA per job, a ``v1alpha2`` job's StatefulSet never scaled past its
workers, no orphans once the jobs are deleted.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONVERSION_KINDS",
    "KINDS",
    "KindSpec",
    "MixedPlan",
    "attribute",
    "index_beyond",
    "kind_rows",
    "kind_table",
    "parse_kinds",
    "plan_mixed",
    "sampled_beyond",
]

DURATION = "sim.mpi-controller.io/duration"
EXIT_CODE = "sim.mpi-controller.io/exit-code"
_POD_RE = re.compile(r"^(?P<job>.+)-(?P<rtype>[a-z]+)-(?P<index>\d+)$")


@dataclass(frozen=True)
class KindSpec:
    """A kind of the mixed workload: created through ``create_version``, read (listed,
    deleted) through ``read_version``."""

    key: str
    kind: str
    plural: str
    create_version: str
    read_version: str
    short: str
    group: str = "kubeflow.org"

    @property
    def conversion(self) -> bool:
        """Created through a version the conversion webhook serves."""
        return self.create_version != self.read_version


KINDS: dict[str, KindSpec] = {s.key: s for s in (
    KindSpec("mpijob-v2beta1", "MPIJob", "mpijobs", "v2beta1", "v2beta1", "mpi"),
    KindSpec("mpijob-v1", "MPIJob", "mpijobs", "v1", "v2beta1", "mv1"),
    KindSpec("mpijob-v1alpha2", "MPIJob", "mpijobs", "v1alpha2", "v2beta1", "ma2"),
    KindSpec("tfjob", "TFJob", "tfjobs", "v1", "v1", "tf"),
    KindSpec("pytorchjob", "PyTorchJob", "pytorchjobs", "v1", "v1", "pt"),
    KindSpec("xgboostjob", "XGBoostJob", "xgboostjobs", "v1", "v1", "xgb"),
    KindSpec("paddlejob", "PaddleJob", "paddlejobs", "v1", "v1", "pd"),
    KindSpec("jaxjob", "JAXJob", "jaxjobs", "v1", "v1", "jax"),
)}
CONVERSION_KINDS = tuple(k for k, s in KINDS.items() if s.conversion)


def parse_kinds(text: str) -> tuple[str, ...]:
    """``--kinds``: ``all``, or keys separated by commas (``mpijob`` alone: the three MPIJob
    versions)."""
    if text.strip() in ("", "all"):
        return tuple(KINDS)
    out: list[str] = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        found = [k for k in KINDS if k == word or k.split("-")[0] == word]
        if not found:
            raise ValueError(f"unknown kind {word!r}; choose from all, {', '.join(KINDS)}")
        out += [k for k in found if k not in out]
    return tuple(out)


@dataclass
class MixedPlan:
    """One job of the mixed workload: its body, what it should end as, and the most pods of
    each replica type (lower case) it may ever have."""

    name: str
    key: str
    expected: str
    body: dict[str, Any]
    limits: dict[str, int]
    hpa: bool = False
    statefulset: int | None = None  # v1alpha2: its worker StatefulSet's replicas
    workers: int = field(init=False)

    def __post_init__(self) -> None:
        self.workers = self.limits.get("worker", 0)

    @property
    def spec(self) -> KindSpec:
        return KINDS[self.key]


def _mpi_v2beta1(name: str, workers: int, runs: str, fail: bool) -> MixedPlan:
    from tests.mpijobs import small_job
    body = small_job(name, workers=workers, launcher_runs=runs, run_policy={"backoffLimit": 0})
    if fail:
        meta = body["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["metadata"]
        meta["annotations"][EXIT_CODE] = "1"
    return MixedPlan(name, "mpijob-v2beta1", "Failed" if fail else "Succeeded", body,
                     {"worker": workers})


def _mpi_older(key: str, name: str, workers: int, runs: str) -> MixedPlan:
    from tests.mpijobs import older_generation_job
    generation = KINDS[key].create_version
    body = older_generation_job(generation, name, launcher_runs=runs, stored=False)
    body["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = workers
    for spec in body["spec"]["mpiReplicaSpecs"].values():  # no GPUs, CPUs or memory asked
        for c in spec["template"]["spec"]["containers"]:
            c.pop("resources", None)
    return MixedPlan(name, key, "Succeeded", body, {"worker": workers},
                     statefulset=workers if generation == "v1alpha2" else None)


def _training(key: str, name: str, workers: int, runs: str, elastic: bool) -> MixedPlan:
    from tests.pytorchjobs import CPU_METRIC, pytorchjob, replica
    from tests.trainingjobs import small_job, training_plugins
    annotations = {DURATION: runs}
    if elastic:
        body = pytorchjob(name, {"Worker": replica(workers, annotations=annotations)},
                          elastic={"minReplicas": 1, "maxReplicas": workers + 1,
                                   "metrics": [CPU_METRIC]})
        return MixedPlan(name, key, "Succeeded", body, {"worker": workers + 1}, hpa=True)
    plugin = next(p for p in training_plugins() if p.kind == KINDS[key].kind)
    body = small_job(plugin, name, annotations=annotations, replicas=workers)
    limits = {rtype.lower(): int(spec.get("replicas", 1))
              for rtype, spec in body["spec"][plugin.replica_specs].items()}
    return MixedPlan(name, key, "Succeeded", body, limits)


def plan_mixed(count: int, workers: int, *, kinds: Sequence[str] = tuple(KINDS), seed: int = 1,
               fail_every: int = 10, min_s: int = 10, max_s: int = 30,
               prefix: str = "cj") -> list[MixedPlan]:
    """``count`` jobs, the kinds taken in turn; every ``fail_every``-th MPIJob ``v2beta1``
    launcher exits 1 (backoffLimit 0: Failed); every third PyTorchJob is elastic (an HPA,
    ``maxReplicas`` one above its workers)."""
    rng = random.Random(seed)
    plans = []
    seen: dict[str, int] = {}
    for i in range(count):
        key = kinds[i % len(kinds)]
        n = seen[key] = seen.get(key, -1) + 1
        name = f"{prefix}-{KINDS[key].short}-{n:03d}"
        runs = f"{rng.randint(min_s, max_s)}s"
        if key == "mpijob-v2beta1":
            fail = bool(fail_every) and i % fail_every == fail_every - 1
            plans.append(_mpi_v2beta1(name, workers, runs, fail))
        elif key in ("mpijob-v1", "mpijob-v1alpha2"):
            plans.append(_mpi_older(key, name, workers, runs))
        else:
            plans.append(_training(key, name, workers, runs,
                                   elastic=key == "pytorchjob" and n % 3 == 0))
    return plans


# -- invariants (pure) ---------------------------------------------------------------------

def attribute(name: str, jobs: Iterable[str]) -> str | None:
    """The job that a child object ``name`` belongs to (``<job>`` or ``<job>-...``; the
    longest such job name), or None."""
    best = None
    for job in jobs:
        if (name == job or name.startswith(job + "-")) and (best is None or len(job) > len(best)):
            best = job
    return best


def index_beyond(pod_names: Iterable[str], plans: Mapping[str, MixedPlan]) -> list[str]:
    """Pods named ``<job>-<type>-<index>`` with an index at or beyond the job's limit for that
    replica type (replica types a plan has no limit for are not checked: a batch Job's
    launcher pod, ``<job>-launcher-<random>``)."""
    bad = []
    for pod in pod_names:
        m = _POD_RE.match(pod)
        if not m:
            continue
        plan = plans.get(m["job"])
        if plan is None or m["rtype"] not in plan.limits:
            continue
        if int(m["index"]) >= plan.limits[m["rtype"]]:
            bad.append(pod)
    return bad


def sampled_beyond(max_seen: Mapping[tuple[str, str], int],
                   plans: Mapping[str, MixedPlan]) -> dict[str, int]:
    """``"<job>/<type>" -> excess`` where more live pods of a replica type were seen at once
    than its limit."""
    out = {}
    for (job, rtype), n in max_seen.items():
        plan = plans.get(job)
        if plan is not None and rtype in plan.limits and n > plan.limits[rtype]:
            out[f"{job}/{rtype}"] = n - plan.limits[rtype]
    return out


def _by_kind(names: Iterable[str], plans: Mapping[str, MixedPlan]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name in names:
        job = attribute(name.rsplit("/", 1)[-1], plans)
        if job is not None:
            out.setdefault(plans[job].key, []).append(name)
    return out


def kind_rows(plans: Mapping[str, MixedPlan], *, terminal: Mapping[str, str | None],
              created_pods: Iterable[str], duplicates: Mapping[str, int],
              max_pods: Mapping[tuple[str, str], int], max_hpas: Mapping[str, int],
              max_statefulset: Mapping[str, int], orphans: Iterable[str]
              ) -> dict[str, dict[str, Any]]:
    """One row per kind of ``plans``: ``terminal`` is each job's last terminal condition
    (None: never), ``created_pods`` every pod name created (the audit log), ``duplicates``
    ``"<resource>/<ns>/<name>" -> creations`` (more than one), ``max_pods`` the most live pods
    seen per (job, replica type), ``max_hpas`` the most HPAs seen per job, ``max_statefulset``
    the highest ``spec.replicas`` seen per StatefulSet (by name), ``orphans`` ``kind/name``
    left after the jobs were deleted."""
    rows: dict[str, dict[str, Any]] = {}
    for key in dict.fromkeys(p.key for p in plans.values()):
        mine = {n: p for n, p in plans.items() if p.key == key}
        converged = sum(1 for n, p in mine.items() if terminal.get(n) == p.expected)
        rows[key] = {
            "jobs": len(mine), "converged": converged,
            "stuck": sorted(n for n in mine if not terminal.get(n)),
            "wrong": {n: terminal[n] for n, p in mine.items()
                      if terminal.get(n) and terminal[n] != p.expected},
            "pods_beyond_replicas": index_beyond(created_pods, mine)
            + [f"{k} (+{v} live)" for k, v in sampled_beyond(max_pods, mine).items()],
            "duplicates": {}, "services_twice": [], "hpa_duplicated": [],
            "statefulset_beyond_workers": {}, "orphans": []}
    for key, names in _by_kind(duplicates, plans).items():
        rows[key]["duplicates"] = {n: duplicates[n] for n in names}
        rows[key]["services_twice"] = [n for n in names if n.startswith("services/")]
        rows[key]["hpa_duplicated"] = [n for n in names
                                       if n.startswith("horizontalpodautoscalers/")]
    for job, n in max_hpas.items():
        if job in plans and n > 1:
            rows[plans[job].key]["hpa_duplicated"].append(f"{job}: {n} at once")
    for name, n in max_statefulset.items():
        job = attribute(name, plans)
        if job is not None and plans[job].statefulset is not None \
                and n > (plans[job].statefulset or 0):
            rows[plans[job].key]["statefulset_beyond_workers"][name] = n
    for key, names in _by_kind(orphans, plans).items():
        rows[key]["orphans"] = names
    for row in rows.values():
        row["violations"] = _violations(row)
        row["passed"] = not row["violations"]
    return rows


def _violations(row: Mapping[str, Any]) -> list[str]:
    out = []
    if row["converged"] != row["jobs"]:
        out.append(f"{len(row['stuck'])} stuck, {len(row['wrong'])} wrong")
    checks = (("pods_beyond_replicas", "pods beyond replicas"),
              ("duplicates", "created twice"), ("hpa_duplicated", "HPA duplicated"),
              ("statefulset_beyond_workers", "StatefulSet past its workers"),
              ("orphans", "orphans"))
    for field_name, what in checks:
        if row[field_name]:
            out.append(f"{what}: {len(row[field_name])}")
    return out


def kind_table(records: Sequence[Mapping[str, Any]]) -> str:
    """A Markdown table: one row per run and kind (records without ``kinds`` are skipped)."""
    lines = ["| run | kind | jobs converged | pods beyond replicas | created twice "
             "(Services) | HPA duplicated | StatefulSet > workers | orphans | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    for rec in records:
        for key, row in (rec.get("kinds") or {}).items():
            lines.append(
                f"| {rec['run']} | {key} | {row['converged']}/{row['jobs']} | "
                f"{len(row['pods_beyond_replicas'])} | {len(row['duplicates'])} "
                f"({len(row['services_twice'])}) | {len(row['hpa_duplicated'])} | "
                f"{len(row['statefulset_beyond_workers'])} | {len(row['orphans'])} | "
                f"{'pass' if row['passed'] else 'FAIL: ' + '; '.join(row['violations'])} |")
    return "\n".join(lines) + "\n"
