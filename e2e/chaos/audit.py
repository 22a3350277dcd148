"""Invariants read from the API server's audit log (Metadata level, controller identities).

Each line is a JSON audit event with ``verb``, ``objectRef`` {resource, namespace, name,
subresource}, ``user.username``, ``requestReceivedTimestamp`` and ``responseStatus.code``.
The audit backend writes in batches, so :func:`read_events` waits until the log has caught
up with the end of a run.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
SERVICE_ACCOUNT = "system:serviceaccount:mpi-operator:mpi-operator"
CONTROLLER_USERS = ("mpi-controller", "mpi-controller-2", SERVICE_ACCOUNT)
_WORKER_RE = re.compile(r"^(?P<job>.+)-worker-(?P<index>\d+)$")


@dataclass(frozen=True)
class Event:
    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    user: str
    at: float  # requestReceivedTimestamp, seconds since the epoch
    code: int

    @property
    def is_write(self) -> bool:
        return self.verb in WRITE_VERBS

    @property
    def ok(self) -> bool:
        return 200 <= self.code < 300


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def now() -> float:
    return datetime.now(UTC).timestamp()


def parse(lines: Iterable[str]) -> list[Event]:
    out = []
    for line in lines:
        try:
            raw: dict[str, Any] = json.loads(line)
        except ValueError:
            continue
        if raw.get("stage") != "ResponseComplete":
            continue
        ref = raw.get("objectRef") or {}
        out.append(Event(
            verb=raw.get("verb", ""), resource=ref.get("resource", ""),
            subresource=ref.get("subresource", ""), namespace=ref.get("namespace", ""),
            name=ref.get("name", ""), user=(raw.get("user") or {}).get("username", ""),
            at=_ts(raw["requestReceivedTimestamp"]),
            code=int((raw.get("responseStatus") or {}).get("code", 0))))
    return out


def read_events(log: Path, *, start: float, end: float, namespaces: Sequence[str] = (),
                settle: float = 45.0) -> list[Event]:
    """Events received in [start, end] (in ``namespaces`` if given, plus cluster-scoped and
    Lease ones), from ``log`` and its rotated backups; waits up to ``settle`` seconds for the
    batching backend to flush events up to ``end``."""
    deadline = time.monotonic() + settle
    while True:
        events = []
        files = sorted(log.parent.glob(log.stem + "*" + log.suffix))
        for path in files:
            with path.open(errors="replace") as fh:
                events.extend(e for e in parse(fh) if start <= e.at)
        if any(e.at >= end for e in events) or time.monotonic() > deadline:
            break
        time.sleep(2.0)
    keep = set(namespaces)
    return sorted((e for e in events if e.at <= end and (
        not keep or e.namespace in keep or e.resource == "leases")), key=lambda e: e.at)


def creations(events: Iterable[Event]) -> dict[str, Any]:
    """Duplicate creations (more than one 201 for a resource/namespace/name) and 409s."""
    created: Counter[tuple[str, str, str]] = Counter()
    conflicts: Counter[tuple[str, str, str]] = Counter()
    for e in events:
        if e.verb != "create" or e.subresource or e.resource == "events":
            continue
        key = (e.resource, e.namespace, e.name)
        if e.code == 201:
            created[key] += 1
        elif e.code == 409:
            conflicts[key] += 1
    dups = {"/".join(k): n for k, n in created.items() if n > 1}
    return {"created": sum(created.values()), "duplicates": dups,
            "already_exists": sum(conflicts.values()),
            "already_exists_by_resource": dict(Counter(k[0] for k in conflicts.elements()))}


def workers_beyond(events: Iterable[Event], replicas: dict[str, int]) -> list[str]:
    """Worker pods created with an index >= the job's replicas."""
    bad = []
    for e in events:
        if e.verb == "create" and e.resource == "pods" and e.code == 201:
            m = _WORKER_RE.match(e.name)
            if m and m["job"] in replicas and int(m["index"]) >= replicas[m["job"]]:
                bad.append(e.name)
    return bad


def controller_writes(events: Iterable[Event]) -> list[Event]:
    """Successful writes by a controller identity, other than Leases and Events."""
    return [e for e in events if e.is_write and e.ok and e.user in CONTROLLER_USERS
            and e.resource not in ("leases", "events")]


def recovery_times(events: Sequence[Event], faults: Sequence[float], *,
                   users: Sequence[str | None] = ()) -> list[float | None]:
    """For each fault time: seconds until the next successful controller write after it (by
    ``users[i]`` when given: the identity expected to take over)."""
    writes = controller_writes(events)
    out: list[float | None] = []
    for i, t in enumerate(faults):
        user = users[i] if i < len(users) else None
        nxt = next((w.at for w in writes if w.at >= t and (user is None or w.user == user)),
                   None)
        out.append(None if nxt is None else round(nxt - t, 2))
    return out


def writer_epochs(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Runs of consecutive successful controller writes by the same identity."""
    epochs: list[dict[str, Any]] = []
    for e in controller_writes(events):
        if epochs and epochs[-1]["user"] == e.user:
            epochs[-1]["last"] = e.at
            epochs[-1]["writes"] += 1
        else:
            epochs.append({"user": e.user, "first": e.at, "last": e.at, "writes": 1})
    return epochs


def overlaps(events: Sequence[Event], *, window: float) -> dict[str, Any]:
    """Whether writes of the two identities overlap in time beyond ``window`` seconds: for
    each identity, its writes form intervals [first, last] per leadership epoch; an epoch of
    one identity must not start before the other's current epoch ended minus ``window``."""
    epochs = writer_epochs(events)
    gaps = [round(b["first"] - a["last"], 2) for a, b in itertools.pairwise(epochs)]
    worst = min(gaps, default=0.0)
    return {"epochs": [{**ep, "first": round(ep["first"], 2), "last": round(ep["last"], 2)}
                       for ep in epochs],
            "handover_gaps_s": gaps, "violation": len(epochs) > 0 and (
                worst < -window or _interleaved(epochs, window))}


def _interleaved(epochs: list[dict[str, Any]], window: float) -> bool:
    """Short alternations (an identity writing again within ``window`` of handing over)."""
    by_user: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for ep in epochs:
        by_user[ep["user"]].append((ep["first"], ep["last"]))
    users = list(by_user)
    if len(users) < 2:
        return False
    for a0, a1 in by_user[users[0]]:
        for b0, b1 in by_user[users[1]]:
            if min(a1, b1) - max(a0, b0) > window:
                return True
    return False


def relists(events: Iterable[Event], *, after: float) -> int:
    """Controller LISTs (informer relists) received after ``after``."""
    return sum(1 for e in events if e.verb == "list" and e.user in CONTROLLER_USERS
               and e.at >= after)


def leaked(texts: Iterable[str], secrets: Sequence[str]) -> list[str]:
    """Snippets of ``texts`` that contain private key material or one of ``secrets``."""
    found = []
    for text in texts:
        for needle in ("PRIVATE KEY", *[s for s in secrets if len(s) >= 16]):
            i = text.find(needle)
            if i >= 0:
                found.append(text[max(0, i - 40): i + 40].replace(needle, "<redacted>"))
    return found
