"""``python -m conformance``: build the reference operators, then run upstream's e2e suite and
the differential run on a local cluster; print the tables and write conformance-results/.

    .venv/bin/python -m conformance --cluster-dir ~/.cache/mpi-controller/cluster-conformance
    .venv/bin/python -m conformance --short --kubeconfig "$KUBECONFIG"     # the make test form

``--short``: upstream's e2e suite against ours only, and the differential run of the cases
marked ``short`` in the default group; the full form adds the suite against the reference
operator and every case and flag group. ``--kinds`` picks the kinds of the differential run
(default: every kind of ``conformance.kinds``); only the reference operators the chosen parts
need are built. Exits 1 when a spec fails against ours or a difference is unexplained.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance import corpus as corpus_mod
from conformance import e2e_suite, intended, operators, real_node, report
from conformance.diff import Difference
from conformance.differential import (
    LOCK_NAMESPACE,
    Differential,
    Settings,
    ensure_namespace,
    install_crd,
    log,
    read_crd,
    release_locks,
)
from conformance.kinds import KINDS, MPIJOB_V2BETA1
from conformance.kube import Kube

REPO = operators.REPO


def cluster_kubeconfig(args: argparse.Namespace, addons: list[str] | None = None) -> Path:
    """The admin kubeconfig: ``--kubeconfig``, or the local cluster in ``--cluster-dir``
    (started, and built, if it is not running), with ``addons`` (started where missing)."""
    if args.kubeconfig:
        return Path(args.kubeconfig)
    env = {"MPI_CONTROLLER_CLUSTER_DIR": str(args.cluster_dir)}
    extra = ["--addons", ",".join(addons)] if addons else []
    out = subprocess.run(["bash", str(REPO / "hack" / "local-cluster.sh"), "up", *extra],
                         check=True, text=True, stdout=subprocess.PIPE,
                         env={**_environ(), **env})
    return Path(out.stdout.strip().splitlines()[-1])


def _environ() -> dict[str, str]:
    return dict(os.environ)


def controller_kubeconfig(admin: Path) -> Path:
    """The local cluster's controller identity (its requests are in the audit log)."""
    path = admin.with_name("kubeconfig-controller")
    return path if path.exists() else admin


E2E_BINARY = "mpi-operator-e2e.test"
Specs = Callable[[Path, Path], list[e2e_suite.SpecResult]]


def run_e2e(kube: Kube, admin: Path, controller: Path, sides: list[str], out: Path,
            specs: Specs | None = None, label: str = "e2e"
            ) -> dict[str, list[e2e_suite.SpecResult]]:
    """Upstream's e2e suite against each operator of ``sides`` in turn (``specs(binary,
    log_dir)``: what to run of it; default every spec, :func:`e2e_suite.run_suite`)."""
    binary = Path(operators.reference("bin-dir", "mpi-operator")) / E2E_BINARY
    run = specs or (lambda b, logs: e2e_suite.run_suite(b, admin, logs))
    results = {}
    flags = ["--kube-api-qps", "50", "--kube-api-burst", "100"]
    for side in sides:
        install_crd(kube, read_crd(MPIJOB_V2BETA1.crds[side]()))
        ensure_namespace(kube, LOCK_NAMESPACE)
        release_locks(kube)
        log_path = out / "logs" / f"{label}-{side}-operator.log"
        log_path.unlink(missing_ok=True)
        factory = operators.ours if side == "ours" else operators.reference_factory(
            "mpi-operator")
        proc = factory(controller, flags, log_path)
        proc.start()
        try:
            proc.wait_ready()
            start = time.monotonic()
            results[side] = run(binary, out / "logs" / f"{label}-{side}")
            log(f"upstream {label} against {side}: {time.monotonic() - start:.0f}s")
        finally:
            proc.stop()
            release_locks(kube)
    return results


def run_on_real_node(sides: list[str], out: Path, listing: Path
                     ) -> dict[str, list[e2e_suite.SpecResult]]:
    """The specs of :data:`e2e_suite.REAL_NODE` (:mod:`conformance.real_node`), on the real node
    against each operator of ``sides`` deployed as the suite expects; skipped with the reason
    when it cannot serve (``listing``: a kubeconfig for the suite's dry run that lists them)."""
    binary = Path(operators.reference("bin-dir", "mpi-operator")) / E2E_BINARY
    why = real_node.unavailable()
    if why:
        texts = real_node.real_specs(e2e_suite.list_specs(binary, listing))
        log(f"real-node specs skipped: {why}")
        return {side: real_node.skipped(texts, why) for side in sides}
    results: dict[str, list[e2e_suite.SpecResult]] = {}
    with real_node.real_node_cluster(log) as admin:
        texts = real_node.real_specs(e2e_suite.list_specs(binary, admin))
        env = real_node.suite_env(real_node.images(real_node.cluster_dir()))
        kube = Kube(admin)
        try:
            with real_node.workloads_on_the_real_node(kube):
                for side in sides:
                    logs = _mkdir(out / "logs" / f"real-node-{side}")
                    start = time.monotonic()
                    done = results[side] = []
                    try:
                        with real_node.operator_deployment(
                                side, kube, admin,
                                out / "logs" / f"real-node-{side}-operator.log", log):
                            for text in texts:
                                done.append(e2e_suite.run_spec(binary, admin, text, logs,
                                                               env=env))
                                log(f"real node, {side}: {done[-1].outcome} "
                                    f"({done[-1].seconds:g}s) {text}")
                                if not real_node.wait_rolled_out(kube):
                                    log("the operator's Deployment did not roll out in 120s")
                    except (RuntimeError, TimeoutError) as err:  # deploying or removing it
                        log(f"real node, {side}: {err}")
                        ran = {r.text for r in done}
                        done += [e2e_suite.SpecResult(t, "failed", 0.0, f"{side}'s Deployment: "
                                                      f"{err}"[:300]) for t in texts
                                 if t not in ran]
                    log(f"upstream real-node specs against {side}: "
                        f"{time.monotonic() - start:.0f}s")
        finally:
            kube.close()
    return results


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster-dir", type=Path,
                        default=Path.home() / ".cache/mpi-controller/cluster-conformance")
    parser.add_argument("--kubeconfig", help="use this cluster instead of --cluster-dir")
    parser.add_argument("--out", type=Path, default=REPO / "conformance-results")
    parser.add_argument("--short", action="store_true")
    parser.add_argument("--parts", default="",
                        help="comma-separated: e2e, differential, real-node (default: all; "
                             "with --short e2e and differential)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"differential: comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--no-build", action="store_true",
                        help="use the reference binaries already in the cache")
    parser.add_argument("--corpus", type=Path,
                        help="differential: this corpus directory instead of the kind's own")
    parser.add_argument("--only", default="",
                        help="differential: only these cases or groups (comma-separated)")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(",") if args.parts else
                ["e2e", "differential", *([] if args.short else ["real-node"])])
    if unknown := parts - {"e2e", "differential", "real-node"}:
        parser.error(f"--parts: unknown part(s) {', '.join(sorted(unknown))}")
    kinds = [k for k in args.kinds.split(",") if k]
    if unknown := set(kinds) - set(KINDS):
        parser.error(f"--kinds: unknown kind(s) {', '.join(sorted(unknown))} "
                     f"(known: {', '.join(KINDS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "logs").mkdir(exist_ok=True)
    summary: dict[str, Any] = {"short": args.short, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                               "parts": sorted(parts), "kinds": kinds}

    to_build = list(dict.fromkeys(
        (["mpi-operator"] if parts & {"e2e", "real-node"} else [])
        + ([KINDS[k].reference for k in kinds] if "differential" in parts else [])))
    summary["build_s"] = 0.0 if args.no_build or not to_build else \
        operators.build_reference(*to_build)
    log(f"reference operators ready ({', '.join(to_build)}) in {summary['build_s']}s")
    # The KWOK cluster (``--cluster-dir``) serves the e2e and differential parts; the real-node
    # part brings up a cluster of its own (it lists the suite's specs with a dry run, which
    # reaches no cluster).
    on_kwok = bool(parts & {"e2e", "differential"})
    addons = sorted({a for k in kinds for a in KINDS[k].addons}) if "differential" in parts \
        else []
    admin = cluster_kubeconfig(args, addons) if on_kwok else Path(args.kubeconfig or os.devnull)
    controller = controller_kubeconfig(admin)
    kube = Kube(admin) if on_kwok else None
    failed = False
    text: list[str] = []
    unexplained_by_kind: dict[str, list[Difference]] = {}
    counts = {"passed": 0, "failed": 0, "skipped": 0}  # e2e specs (ours) and corpus cases

    kwok: dict[str, list[e2e_suite.SpecResult]] = {}
    real: dict[str, list[e2e_suite.SpecResult]] | None = None
    sides = ["ours"] if args.short else ["ours", "go"]
    if "e2e" in parts:
        assert kube is not None
        kwok = run_e2e(kube, admin, controller, sides, args.out)
    if "real-node" in parts:
        real = run_on_real_node(sides, args.out, admin)
        (args.out / "e2e-real-node.json").write_text(json.dumps(
            {side: [r.__dict__ for r in rs] for side, rs in real.items()}, indent=1))
    if parts & {"e2e", "real-node"}:
        suite = {side: e2e_suite.merge(kwok.get(side, []), None if real is None else real[side],
                                       left_out="the real-node part was not run (--parts "
                                       "real-node runs it)")
                 for side in sides}
        places = {r.text: "real node" if e2e_suite.real_node_reason(r.text) else "KWOK"
                  for rs in suite.values() for r in rs}
        text.append(report.e2e_table(suite, places=places))
        (args.out / "e2e.json").write_text(json.dumps(
            {side: [{**r.__dict__, "runs_on": places[r.text]} for r in rs]
             for side, rs in suite.items()}, indent=1))
        failed |= any(r.outcome == "failed" for r in suite["ours"])
        for outcome in counts:
            counts[outcome] += sum(r.outcome == outcome for r in suite["ours"])
        counts["not run"] = sum(r.outcome == e2e_suite.NOT_RUN for r in suite["ours"])

    if "differential" in parts:
        assert kube is not None
        settings = Settings(kube, controller, args.out)
        for name in kinds:
            kind = KINDS[name]
            corpus = corpus_mod.load(args.corpus or kind.corpus, kind.upstream_file,
                                     replica_specs=kind.replica_specs)
            start = time.monotonic()
            diffs, info = Differential(kind, corpus, settings).run(
                short=args.short, only={x for x in args.only.split(",") if x} or None)
            info["wall_s"] = round(time.monotonic() - start, 1)
            found, unexplained = intended.classify(diffs, intended.rules_for(kind.name))
            table = report.differential_table(kind.name, info, found, unexplained)
            text.append(table)
            (args.out / f"differential-{kind.name}.json").write_text(json.dumps({
                **info, "unexplained": [d.as_dict() for d in unexplained],
                "intended": [{**d.as_dict(), "rule": r.id, "readme": r.readme}
                             for d, r in found]}, indent=1, default=str))
            failed |= bool(unexplained)
            if unexplained:
                unexplained_by_kind[kind.name] = unexplained
            bad_cases = {d.case for d in unexplained}
            counts["failed"] += len(bad_cases)
            counts["passed"] += len(set(info["cases"]) - bad_cases)

    output = "\n".join(text)
    (args.out / "summary.md").write_text(output)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(output)
    digest = report.failure_digest(suite["ours"] if parts & {"e2e", "real-node"} else [],
                                   unexplained_by_kind)
    if digest:
        print(digest)
    log(f"results in {args.out}; {'FAILED' if failed else 'passed'}")
    print(f"conformance: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped"
          + (f", {counts['not run']} e2e specs of the real node not run"
             if counts.get("not run") else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
