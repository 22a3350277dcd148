"""Hostile input for every kind and version: hypothesis-generated jobs with one bad field each,
for MPIJob ``v1`` and ``v1alpha2`` (created through those versions) and each training-operator
kind; MPIJob ``v2beta1`` has its own generator (:func:`e2e.chaos.hostile.generate_invalid`).

Each :class:`BadJob` carries the field path that must be named, either by the API server's
refusal (the CRD's schema or the validating webhook) or, when the object is admitted, by a
Warning Event on the job: the kind's validation event (``ValidationError``,
``<Kind>FailedValidation``) or the admitted-problem event
(:mod:`mpi_controller.engine.admitted`). Generation checks each job against the kind's own
pure validation first, so a generator that stops producing bad input fails loudly.

:func:`names_field` is the check (pure): the path as Kubernetes prints it, with a map key
either as ``[Key]`` or as ``.Key`` (the schema's messages use the latter).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from e2e.chaos.hostile import _set as hostile_set
from e2e.chaos.kinds import KINDS

__all__ = ["BadJob", "at_limit_jobs", "generate_for_kinds", "names_field"]

_PACKAGES = {"tfjob": "tensorflow", "pytorchjob": "pytorch", "xgboostjob": "xgboost",
             "paddlejob": "paddle", "jaxjob": "jax"}
_MANAGED_BY_UNCHECKED = {"jaxjob"}  # JAXJob's webhook does not look at managedBy (upstream)
_NEGATIVE = st.integers(min_value=-(2**31), max_value=-1)
_TEXT = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x2FF),
                min_size=1, max_size=20)
_TYPE_NAME = st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True)


@dataclass
class BadJob:
    key: str          # the chaos kind (e2e.chaos.kinds.KINDS)
    name: str
    field: str        # the path the refusal or the Warning Event must name
    body: dict[str, Any]

    @property
    def version(self) -> str:
        return KINDS[self.key].create_version

    @property
    def plural(self) -> str:
        return KINDS[self.key].plural


def names_field(field: str, message: str) -> bool:
    """``message`` names ``field`` (a map key as ``[Key]`` or ``.Key``)."""
    dotted = field.replace("[", ".").replace("]", "")
    return field in message or dotted in message


Mutation = Callable[[dict[str, Any]], None]


def _set(path: tuple[str, ...], value: Any) -> Mutation:
    """Sets ``value`` at ``path`` of a body (:func:`e2e.chaos.hostile._set`)."""
    setter: Mutation = hostile_set(path, value)
    return setter


# -- training-operator kinds ------------------------------------------------------------------


def _training_base(key: str, name: str) -> dict[str, Any]:
    from tests.trainingjobs import small_job, training_plugins
    plugin = next(p for p in training_plugins() if p.kind == KINDS[key].kind)
    return small_job(plugin, name, replicas=2)


def _specs_field(body: dict[str, Any]) -> str:
    return str(next(k for k in body["spec"] if k.endswith("ReplicaSpecs")))


@st.composite
def _training_change(draw: st.DrawFn, key: str) -> tuple[str, Mutation | None, str | None]:
    """(field, mutation, a name instead of the default) for one bad field of a ``key`` job."""
    base = _training_base(key, "x")
    field = _specs_field(base)
    rtype = "Worker"
    path = f"spec.{field}[{rtype}]"
    choices = ["name-dot", "image", "container-name", "negative-replicas", "unknown-type",
               "clean-pod-policy", "negative-run-policy"]
    choices += [] if key in _MANAGED_BY_UNCHECKED else ["managed-by"]
    choices += {"tfjob": ["two-chiefs"], "pytorchjob": ["elastic-min-max"]}.get(key, [])
    what = draw(st.sampled_from(choices))
    specs = ("spec", field)
    container = (*specs, rtype, "template", "spec", "containers")
    if what == "name-dot":
        left = draw(st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True))
        return "metadata.name", None, f"{left}.{draw(st.from_regex(r'[a-z]{1,6}', fullmatch=True))}"
    if what == "image":
        def no_image(body: dict[str, Any]) -> None:
            body["spec"][field][rtype]["template"]["spec"]["containers"][0]["image"] = ""
        return f"{path}.template.spec.containers[0].image", no_image, None
    if what == "container-name":
        other = draw(st.from_regex(r"[a-z]{3,10}", fullmatch=True).filter(
            lambda s: s not in ("tensorflow", "pytorch", "xgboost", "paddle", "jax")))

        def rename(body: dict[str, Any]) -> None:
            for c in body["spec"][field][rtype]["template"]["spec"]["containers"]:
                c["name"] = other
        return f"{path}.template.spec.containers", rename, None
    if what == "negative-replicas":
        return f"{path}.replicas", _set((*specs, rtype, "replicas"), draw(_NEGATIVE)), None
    if what == "unknown-type":
        new = draw(_TYPE_NAME.filter(lambda s: s not in (
            "Worker", "Master", "Chief", "Evaluator", "Ps", "Launcher")))

        def add_type(body: dict[str, Any]) -> None:
            body["spec"][field][new] = copy.deepcopy(body["spec"][field][rtype])
            body["spec"][field][new]["replicas"] = 1
        return f"spec.{field}[{new}]", add_type, None
    if what == "clean-pod-policy":
        return "spec.runPolicy.cleanPodPolicy", _set(
            ("spec", "runPolicy", "cleanPodPolicy"),
            draw(_TEXT.filter(lambda s: s not in ("All", "Running", "None")))), None
    if what == "negative-run-policy":
        name = draw(st.sampled_from(["backoffLimit", "activeDeadlineSeconds",
                                     "ttlSecondsAfterFinished"]))
        return f"spec.runPolicy.{name}", _set(("spec", "runPolicy", name), draw(_NEGATIVE)), None
    if what == "managed-by":
        return "spec.runPolicy.managedBy", _set(("spec", "runPolicy", "managedBy"),
                                                draw(_TEXT)), None
    if what == "two-chiefs":
        def chiefs(body: dict[str, Any]) -> None:
            for t in ("Chief", "Master"):
                body["spec"][field][t] = copy.deepcopy(body["spec"][field][rtype])
                body["spec"][field][t]["replicas"] = 1
        return f"spec.{field}", chiefs, None
    low = draw(st.integers(min_value=3, max_value=50))
    high = draw(st.integers(min_value=1, max_value=low - 1))
    del container
    return "spec.elasticPolicy.minReplicas", _set(
        ("spec", "elasticPolicy"), {"minReplicas": low, "maxReplicas": high}), None


def _training_problems(key: str, body: dict[str, Any]) -> list[str]:
    """The fields the controller's own checks name for ``body`` (errors and admitted)."""
    from mpi_controller.engine.training.validation import negative_replicas, run_policy_problems
    module = importlib.import_module(f"mpi_controller.{_PACKAGES[key]}.v1")
    job = module.set_defaults(copy.deepcopy(body))
    admitted = getattr(module, "admitted_problems",
                       lambda j: negative_replicas(j, _specs_field(j)))
    validate = getattr(module, "validate_sync", module.validate)  # what the controller runs
    return [e.field for e in [*validate(job), *admitted(job), *run_policy_problems(job)]]


# -- MPIJob v1 and v1alpha2 -------------------------------------------------------------------


def _mpi_base(key: str, name: str) -> dict[str, Any]:
    from tests.mpijobs import older_generation_job
    return older_generation_job(KINDS[key].create_version, name, stored=False)


@st.composite
def _mpi_change(draw: st.DrawFn, key: str) -> tuple[str, Mutation | None, str | None]:
    specs = ("spec", "mpiReplicaSpecs")
    if key == "mpijob-v1":
        what = draw(st.sampled_from(["launcher-replicas", "image", "unknown-type"]))
        if what == "launcher-replicas":
            n = draw(st.integers(min_value=2, max_value=2**31 - 1))
            return ("spec.mpiReplicaSpecs[Launcher].replicas",
                    _set((*specs, "Launcher", "replicas"), n), None)
        if what == "image":
            def no_image(body: dict[str, Any]) -> None:
                body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][
                    0]["image"] = ""
            return ("spec.mpiReplicaSpecs[Worker].template.spec.containers[0].image",
                    no_image, None)
        new = draw(_TYPE_NAME.filter(lambda s: s not in ("Launcher", "Worker")))

        def add_type(body: dict[str, Any]) -> None:
            body["spec"]["mpiReplicaSpecs"][new] = copy.deepcopy(
                body["spec"]["mpiReplicaSpecs"]["Worker"])
        return f"spec.mpiReplicaSpecs[{new}]", add_type, None
    what = draw(st.sampled_from(["launcher-replicas", "worker-replicas", "slots",
                                 "containers"]))
    if what == "launcher-replicas":
        n = draw(st.integers(min_value=2, max_value=2**31 - 1))
        return ("spec.mpiReplicaSpecs.Launcher.replicas",
                _set((*specs, "Launcher", "replicas"), n), None)
    if what == "worker-replicas":
        return ("spec.mpiReplicaSpecs.Worker.replicas",
                _set((*specs, "Worker", "replicas"), draw(_NEGATIVE | st.just(0))), None)
    if what == "slots":
        return "spec.slotsPerWorker", _set(("spec", "slotsPerWorker"),
                                           draw(_NEGATIVE | st.just(0))), None
    return ("spec.mpiReplicaSpecs[Worker].template.spec.containers",
            _set((*specs, "Worker", "template", "spec", "containers"), []), None)


def _mpi_problems(key: str, body: dict[str, Any]) -> list[str]:
    if key == "mpijob-v1":
        from mpi_controller.mpi import v1
        return [e.field for e in v1.validate(v1.set_defaults(copy.deepcopy(body)))]
    from mpi_controller.mpi import v1alpha2
    return [e.field for e in v1alpha2.validate(v1alpha2.set_defaults(copy.deepcopy(body)))]


# -- every kind -------------------------------------------------------------------------------


def _change(key: str) -> st.SearchStrategy[tuple[str, Mutation | None, str | None]]:
    return _mpi_change(key) if key.startswith("mpijob-") else _training_change(key)


Change = tuple[str, Mutation | None, str | None]


def _draw(strategy: st.SearchStrategy[Change], count: int, seed: int) -> list[Change]:
    """``count`` examples of ``strategy``, reproducible from ``seed``."""
    drawn: list[Change] = []

    @settings(max_examples=count * 3, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), deadline=None)
    @given(change=strategy)
    def collect(change: Change) -> None:
        if len(drawn) < count:
            drawn.append(change)

    collect._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    collect()
    return drawn


def generate_for_kinds(kinds: tuple[str, ...], per_kind: int, *, seed: int = 7,
                       prefix: str = "bad") -> list[BadJob]:
    """``per_kind`` bad jobs of each kind of ``kinds`` (but ``mpijob-v2beta1``), reproducible
    from ``seed``, named after ``prefix``; each checked against the kind's pure validation
    (module doc)."""
    out: list[BadJob] = []
    for key in kinds:
        if key == "mpijob-v2beta1":
            continue
        drawn = _draw(_change(key), per_kind, seed)
        short = KINDS[key].short
        for i, (field, mutate, name) in enumerate(drawn):
            job_name = (f"{prefix}-{short}-{i:03d}" if name is None
                        else f"{prefix[0]}{short}{i:03d}{name}")
            body = (_mpi_base if key.startswith("mpijob-") else _training_base)(key, job_name)
            if mutate is not None:
                mutate(body)
            found = (_mpi_problems if key.startswith("mpijob-") else _training_problems)(
                key, body)
            assert field in found, (key, field, found)
            out.append(BadJob(key, job_name, field, body))
    return out


def at_limit_jobs(kinds: tuple[str, ...], *, prefix: str = "lim") -> list[tuple[str, str, Any]]:
    """(chaos kind, what, plan) of valid training-kind jobs at the limits, each expected to
    succeed: the longest name whose pods' host names still fit 63 characters, 1 MiB of env
    on the workers, unicode in annotations and env; and one suspended with 3000 workers."""
    from e2e.chaos.kinds import DURATION, MixedPlan
    out: list[tuple[str, str, Any]] = []
    for key in kinds:
        if key not in _PACKAGES:
            continue
        short = KINDS[key].short
        longest = f"{prefix}-{short}-" + "l" * 63
        longest = longest[:63 - len("-worker-0") - 1]
        body = _training_base(key, longest)
        out.append((key, "longest name", _plan(MixedPlan, key, longest, body, "Succeeded")))
        env_name = f"{prefix}-{short}-env"
        body = _training_base(key, env_name)
        specs = body["spec"][_specs_field(body)]
        chunk = "x" * (64 * 1024)
        text = "ünïcødé ✓ 日本語 🚀 \u202e"
        for spec in specs.values():
            spec.setdefault("template", {}).setdefault("metadata", {}).setdefault(
                "annotations", {}).update({DURATION: "3s", "note": text})
        worker = specs["Worker"]["template"]["spec"]["containers"][0]
        worker["env"] = [{"name": f"BIG_{i}", "value": chunk} for i in range(16)] + [
            {"name": "GREETING", "value": text}]
        body["metadata"]["annotations"] = {"description": text * 10}
        out.append((key, "1 MiB of env and unicode", _plan(MixedPlan, key, env_name, body,
                                                          "Succeeded")))
        many_name = f"{prefix}-{short}-many"
        body = _training_base(key, many_name)
        body["spec"][_specs_field(body)]["Worker"]["replicas"] = 3000
        body["spec"]["runPolicy"] = {"suspend": True}
        out.append((key, "3000 workers (suspended)", _plan(MixedPlan, key, many_name, body,
                                                          "Suspended", workers=3000)))
    return out


def _plan(make: Any, key: str, name: str, body: dict[str, Any], expected: str, *,
          workers: int | None = None) -> Any:
    specs = body["spec"][_specs_field(body)]
    limits = {rtype.lower(): int(spec.get("replicas", 1)) for rtype, spec in specs.items()}
    if workers is not None:
        limits["worker"] = workers
    return make(name, key, expected, body, limits)
