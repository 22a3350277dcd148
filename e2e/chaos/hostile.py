"""Hostile input: hypothesis-generated MPIJobs that the CRD's schema admits but the
controller must reject (each with the field its ValidationError must name), and valid jobs at
the limits (longest name, 1 MiB of env, thousands of workers, unicode)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mpi_controller.mpi.v2beta1.defaults import set_defaults
from mpi_controller.mpi.v2beta1.validation import validate
from tests.mpijobs import small_job

INT32_MIN = -(2**31)
_VALID_TEXT = {"", "Never", "OnFailure", "All", "None", "Running", "kubeflow.org/mpi-operator",
               "kueue.x-k8s.io/multikueue"}


@dataclass
class Hostile:
    name: str
    field: str  # the field path the ValidationError event must name
    body: dict[str, Any]


@dataclass
class AtLimit:
    name: str
    what: str
    expected: str  # terminal or steady condition type ("Succeeded", "Suspended")
    workers: int
    body: dict[str, Any]


def _text() -> st.SearchStrategy[str]:
    return st.text(min_size=1, max_size=40).filter(lambda s: s not in _VALID_TEXT
                                                    and "\x00" not in s)


def _negative() -> st.SearchStrategy[int]:
    return st.integers(min_value=INT32_MIN, max_value=-1)


def _set(path: tuple[str, ...], value: Any) -> Any:
    def apply(body: dict[str, Any]) -> None:
        obj = body
        for key in path[:-1]:
            obj = obj.setdefault(key, {})
        obj[path[-1]] = value
    return apply


_SPECS = ("spec", "mpiReplicaSpecs")


@st.composite
def invalid_change(draw: st.DrawFn) -> tuple[str, Any, str | None]:
    """(field path in the event, mutation, a name override) — one invalid field per job."""
    kind = draw(st.sampled_from([
        "launcher-replicas", "worker-replicas", "restart", "containers", "slots", "clean",
        "backoff", "deadline", "ttl", "managed-by", "name-length", "name-dot"]))
    if kind == "launcher-replicas":
        n = draw(st.integers(min_value=2, max_value=2**31 - 1) | st.just(0) | _negative())
        return ("spec.mpiReplicaSpecs[Launcher].replicas",
                _set((*_SPECS, "Launcher", "replicas"), n), None)
    if kind == "worker-replicas":
        return ("spec.mpiReplicaSpecs[Worker].replicas",
                _set((*_SPECS, "Worker", "replicas"), draw(_negative() | st.just(0))), None)
    if kind == "restart":
        role = draw(st.sampled_from(["Launcher", "Worker"]))
        return (f"spec.mpiReplicaSpecs[{role}].restartPolicy",
                _set((*_SPECS, role, "restartPolicy"), draw(_text())), None)
    if kind == "containers":
        role = draw(st.sampled_from(["Launcher", "Worker"]))
        return (f"spec.mpiReplicaSpecs[{role}].template.spec.containers",
                _set((*_SPECS, role, "template", "spec", "containers"), []), None)
    if kind == "slots":
        return "spec.slotsPerWorker", _set(("spec", "slotsPerWorker"), draw(_negative())), None
    if kind == "clean":
        return ("spec.runPolicy.cleanPodPolicy",
                _set(("spec", "runPolicy", "cleanPodPolicy"), draw(_text())), None)
    if kind in ("backoff", "deadline", "ttl"):
        key = {"backoff": "backoffLimit", "deadline": "activeDeadlineSeconds",
               "ttl": "ttlSecondsAfterFinished"}[kind]
        return (f"spec.runPolicy.{key}",
                _set(("spec", "runPolicy", key), draw(_negative())), None)
    if kind == "managed-by":
        return ("spec.runPolicy.managedBy",
                _set(("spec", "runPolicy", "managedBy"), draw(_text())), None)
    if kind == "name-length":  # a valid object name whose worker host names exceed 63
        size = draw(st.integers(min_value=55, max_value=200))
        return "metadata.name", None, "n" * size
    # DNS-1123 subdomain (admitted) but not a DNS-1035 label
    left = draw(st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True))
    right = draw(st.from_regex(r"[a-z0-9]{1,10}", fullmatch=True))
    return "metadata.name", None, f"{left}.{right}"


def generate_invalid(count: int, *, seed: int = 7, prefix: str = "bad") -> list[Hostile]:
    """``count`` invalid jobs, reproducible from ``seed``, named after ``prefix``."""
    drawn: list[tuple[str, Any, str | None]] = []

    @settings(max_examples=count * 3, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(change=invalid_change())
    def collect(change: tuple[str, Any, str | None]) -> None:
        if len(drawn) < count:
            drawn.append(change)

    collect._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    collect()
    out = []
    for i, (field, mutate, name) in enumerate(drawn):
        job_name = f"{prefix}-{i:03d}" if name is None else _unique(name, i, prefix[0])
        body = small_job(job_name, workers=2, launcher_runs="2s")
        if mutate is not None:
            mutate(body)
        errors = validate(set_defaults(copy.deepcopy(body)))
        assert any(e.field == field for e in errors), (field, errors)
        out.append(Hostile(job_name, field, body))
    return out


def _unique(name: str, i: int, letter: str) -> str:
    tag = f"{letter}{i:03d}"
    return f"{tag}-{name}" if "." in name else tag + name[len(tag):]


def at_limits(*, prefix: str = "lim") -> list[AtLimit]:
    """Valid jobs at the limits; each must reach ``expected``."""
    out = []
    longest = (prefix + "-long-" + "l" * 63)[:63 - len("-worker-1")]
    out.append(AtLimit(longest, "longest name (worker host name = 63)", "Succeeded", 2,
                       small_job(longest, workers=2, launcher_runs="3s")))
    env_body = small_job(f"{prefix}-env", workers=2, launcher_runs="3s")
    chunk = "x" * (64 * 1024)
    env = [{"name": f"BIG_{i}", "value": chunk} for i in range(16)]  # 1 MiB of env
    env_body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"] = env
    out.append(AtLimit(f"{prefix}-env", "1 MiB of env on the workers", "Succeeded", 2, env_body))
    many = small_job(f"{prefix}-many", workers=5000, launcher_runs="3s",
                     run_policy={"suspend": True})
    out.append(AtLimit(f"{prefix}-many", "5000 workers requested (suspended)", "Suspended",
                       5000, many))
    uni = small_job(f"{prefix}-unicode", workers=2, launcher_runs="3s")
    text = "ünïcødé ✓ 日本語 🚀 \u202e"
    launcher = uni["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]
    launcher["metadata"]["annotations"]["note"] = text
    launcher["spec"]["containers"][0]["env"] = [{"name": "GREETING", "value": text}]
    uni["metadata"]["annotations"] = {"description": text * 10}
    out.append(AtLimit(f"{prefix}-unicode", "unicode in annotations and env", "Succeeded", 2,
                       uni))
    return out
