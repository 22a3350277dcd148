"""Upstream's own e2e suite (mpi-operator v0.8.2 ``test/e2e``) against an operator on the local
cluster.

The suite is the test binary ``hack/reference-operators.sh`` builds (``go test -c``). With
``USE_EXISTING_CLUSTER=true`` and ``USE_EXISTING_OPERATOR=true`` it needs only ``KUBECONFIG``.
Its specs are listed with a dry run; each is then run on its own (``-ginkgo.focus`` on its exact
text), so every spec gets its own verdict and time.

Where each spec runs: on the KWOK cluster against the operator as a process (:func:`run_suite`),
or, for the specs of :data:`REAL_NODE` (a real MPI process, or the operator's Deployment
reconfigured by the spec), on the real node against the operator as a Deployment
(:mod:`conformance.real_node`); :func:`merge` puts the two parts' verdicts together in the
suite's order. Specs that could run nowhere here would be skipped with the reason
(:data:`SKIPS`, empty), never dropped: they appear in the table.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

# Spec text pattern -> why it cannot run anywhere here (reported skipped with the reason). Every
# spec of mpi-operator v0.8.2's suite runs now (on the KWOK nodes or on the real node), so none.
SKIPS: tuple[tuple[str, str], ...] = ()

_REDEPLOYS = ("scales the operator's Deployment (mpi-operator/mpi-operator) to 0, appends {flag} "
              "to its container's args and scales it to 1: the operator must run as that "
              "Deployment, on a node that runs its pod")
# Spec text pattern -> why it runs on the real node (conformance.real_node: a cluster with a
# real kubelet, the operator as a Deployment, Volcano's and scheduler-plugins' schedulers)
# rather than on the KWOK nodes, where pods only seem to run.
REAL_NODE: tuple[tuple[str, str], ...] = (
    (r"has malformed command", "needs a real MPI process to fail (mpirun as root without "
     "--allow-run-as-root); KWOK's simulated launcher exits 0"),
    (r"with scheduler-plugins", _REDEPLOYS.format(flag="--gang-scheduling=scheduler-plugins-"
                                                  "scheduler") + "; needs the scheduler-plugins "
     "scheduler (Coscheduling) and controller"),
    (r"with volcano-scheduler", _REDEPLOYS.format(flag="--gang-scheduling=volcano")
     + "; needs Volcano's scheduler"),
    (r"with custom cluster-domain", _REDEPLOYS.format(flag="--cluster-domain=cluster.local")
     + "; the launcher, as a worker, reaches its hosts by <pod>.<job>.<ns>.svc.cluster.local"),
)
REAL_NODE_OUTCOME = "real-node"
"""The outcome of a spec in the KWOK part's results that the real-node part runs."""
NOT_RUN = "not run"
"""The outcome of a real-node spec in a run that left the real-node part out."""

_LOCATION = re.compile(r"\.go:\d+\s*$")


@dataclass
class SpecResult:
    text: str
    outcome: str          # passed, failed, skipped
    seconds: float
    reason: str = ""
    output: str = ""


def skip_reason(text: str) -> str | None:
    return next((reason for pattern, reason in SKIPS if re.search(pattern, text)), None)


def real_node_reason(text: str) -> str | None:
    """Why spec ``text`` runs on the real node (``None``: it runs on the KWOK nodes)."""
    return next((reason for pattern, reason in REAL_NODE if re.search(pattern, text)), None)


def _env(kubeconfig: Path) -> dict[str, str]:
    return {**os.environ, "KUBECONFIG": str(kubeconfig), "USE_EXISTING_CLUSTER": "true",
            "USE_EXISTING_OPERATOR": "true"}


def list_specs(binary: Path, kubeconfig: Path) -> list[str]:
    """Every spec's full text, from a verbose dry run (nothing is executed)."""
    out = subprocess.run([str(binary), "-ginkgo.dryRun", "-ginkgo.v", "-ginkgo.noColor"],
                         capture_output=True, text=True, env=_env(kubeconfig), timeout=120,
                         check=False)
    return parse_spec_texts(out.stdout)


def parse_spec_texts(output: str) -> list[str]:
    """Spec texts from Ginkgo v1's verbose output: each spec is a line of container texts
    followed by indented lines (the spec text), then its indented ``file.go:line``."""
    specs: list[str] = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if not line or line.startswith((" ", "-", "=", "•", "S", "Ran ", "Will run", "Random")):
            continue
        parts = [line.strip()]
        for follow in lines[i + 1:]:
            if not follow.startswith("  ") or _LOCATION.search(follow):
                break
            parts.append(follow.strip())
        if len(parts) > 1 and _LOCATION.search(lines[i + len(parts)] if i + len(parts) <
                                               len(lines) else ""):
            text = " ".join(parts)
            if text not in specs:
                specs.append(text)
    return specs


CONFLICT = "the object has been modified; please apply your changes to the latest version"
"""The API server's 409 message. The suspended-on-creation spec updates the MPIJob with the
object its Create returned (mpi-operator v0.8.2 ``test/e2e/mpi_job_test.go``, ``resumeJob``), so
when the operator's first status write lands in between (the spec lists pods between the two,
longer on a loaded machine) the spec fails on a conflict of its own making, against either
operator. Measured on the test cluster with two busy processes beside it (create a suspended
MPIJob, read the audit log): the first status write is done 17-22 ms after the create returns
for ours, 21-53 ms for mpi-operator, whose first request comes 5-8 ms later than ours."""

RUN_ALONE = (r"when suspended on creation",)
"""Specs run one at a time before the others, while the operator has nothing else to do
(:data:`CONFLICT`: with other specs beside it, or their namespaces being cleaned up, the machine
is busier and the window wider)."""


def run_spec(binary: Path, kubeconfig: Path, text: str, log_dir: Path,
             timeout: float = 600, env: Mapping[str, str] | None = None, *,
             conflict_retries: int = 4) -> SpecResult:
    """Run the one spec ``text`` (``env``: more environment, e.g. the suite's image
    variables). A spec that fails on the suite's own stale-object conflict (:data:`CONFLICT`)
    is run again, up to ``conflict_retries`` times; its reason then says so, and every other
    failure of any attempt stands."""
    result, attempt = _run_spec_once(binary, kubeconfig, text, log_dir, timeout, env, ""), 1
    while result.outcome == "failed" and CONFLICT in result.output and attempt <= conflict_retries:
        attempt += 1
        result = _run_spec_once(binary, kubeconfig, text, log_dir, timeout, env,
                                f"-attempt{attempt}")
    if attempt > 1:
        result.reason = "; ".join(x for x in (
            result.reason, f"attempt {attempt} of {1 + conflict_retries}: the earlier ones "
            "failed on the suite's own stale-object conflict (e2e_suite.CONFLICT)") if x)
    return result


def _run_spec_once(binary: Path, kubeconfig: Path, text: str, log_dir: Path, timeout: float,
                   env: Mapping[str, str] | None, log_suffix: str) -> SpecResult:
    start = time.monotonic()
    # Ginkgo v1 matches the focus (RE2) against the spec's full text, which has a prefix of
    # its own ("[Top Level]"): anchor the end and a word boundary; "Ran 1 of" is checked.
    focus = r"(^|\s)" + re.sub(r"([.+*?()|\[\]{}^$\\])", r"\\\1", text) + "$"
    try:
        out = subprocess.run([str(binary), "-ginkgo.focus", focus, "-ginkgo.v",
                              "-ginkgo.noColor", "-test.timeout", f"{int(timeout)}s"],
                             capture_output=True, text=True,
                             env={**_env(kubeconfig), **(env or {})},
                             timeout=timeout + 30, check=False, preexec_fn=_ahead)
        output, code = out.stdout + out.stderr, out.returncode
    except subprocess.TimeoutExpired as err:
        output, code = f"timed out after {timeout}s: {err}", -1
    seconds = round(time.monotonic() - start, 1)
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:90]
    (log_dir / f"{slug}{log_suffix}.log").write_text(output)
    ran_one = "Ran 1 of" in output
    outcome = "passed" if code == 0 and ran_one else "failed"
    reason = "" if outcome == "passed" else (_failure_reason(output) or f"exit {code}")
    return SpecResult(text, outcome, seconds, reason, output[-4000:])


def _ahead() -> None:
    """In the suite's process before it starts: a higher CPU priority where allowed (root),
    so that on a busy machine the time between a spec's own requests stays as short as on a
    quiet one (:data:`CONFLICT`); the operators under test keep theirs."""
    with contextlib.suppress(PermissionError):
        os.nice(-10)


def _failure_reason(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines()]
    for i, line in enumerate(lines):
        if line.startswith(("Expected", "Timed out", "Unexpected error")):
            return " ".join(lines[i:i + 3])[:300]
    return ""


def run_suite(binary: Path, kubeconfig: Path, log_dir: Path, *, parallel: int = 2
              ) -> list[SpecResult]:
    """Every spec of the suite: skipped ones with their reason, those of the real node listed
    (outcome :data:`REAL_NODE_OUTCOME`, with the reason), the others run (``parallel`` at a
    time, those of :data:`RUN_ALONE` one by one before them; each spec works in a namespace of its
    own)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    specs = list_specs(binary, kubeconfig)
    if not specs:
        raise RuntimeError(f"{binary}: the dry run listed no specs")
    results: dict[str, SpecResult] = {}
    to_run = []
    for text in specs:
        reason = skip_reason(text)
        elsewhere = real_node_reason(text)
        if reason:
            results[text] = SpecResult(text, "skipped", 0.0, reason)
        elif elsewhere:
            results[text] = SpecResult(text, REAL_NODE_OUTCOME, 0.0, elsewhere)
        else:
            to_run.append(text)
    alone = [t for t in to_run if any(re.search(p, t) for p in RUN_ALONE)]
    for text in alone:
        results[text] = run_spec(binary, kubeconfig, text, log_dir)
    with ThreadPoolExecutor(max(1, parallel)) as pool:
        for res in pool.map(lambda t: run_spec(binary, kubeconfig, t, log_dir),
                            [t for t in to_run if t not in alone]):
            results[res.text] = res
    return [results[t] for t in specs]


def merge(kwok: list[SpecResult], real: list[SpecResult] | None, *,
          left_out: str = "the real-node part was not run") -> list[SpecResult]:
    """One side's whole suite, in the suite's order: the KWOK part's results (``kwok``: every
    spec, as :func:`run_suite` lists them) with each real-node spec's placeholder replaced by
    the real-node part's result for it; with ``real`` ``None`` (that part not run), the
    placeholders become :data:`NOT_RUN` with ``left_out`` as the reason. Real-node results of
    specs the KWOK part did not list (it did not run) follow in their own order."""
    by_text = {r.text: r for r in real or []}
    merged = []
    for r in kwok:
        if r.outcome != REAL_NODE_OUTCOME:
            merged.append(r)
        elif real is None:
            merged.append(SpecResult(r.text, NOT_RUN, 0.0, left_out))
        else:
            merged.append(by_text.pop(r.text) if r.text in by_text else
                          SpecResult(r.text, NOT_RUN, 0.0, "not listed by the real-node part"))
    return merged + list(by_text.values())
