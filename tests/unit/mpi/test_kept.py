"""What the MPIJob ``v2beta1`` mode keeps of a job between syncs: the defaulted copy, its
validation, admitted problems and typed view are made once per cached object and kept across
a status write's echo; each sync gets its own shallow copy (it sets the status); a finished
job is not kept."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.mpi import reconcile
from mpi_controller.mpi.options import MPIJOBS
from mpi_controller.mpi.v2beta1 import set_defaults, types, validate
from tests.engine_harness import EngineHarness
from tests.unit.mpi.test_kind import conditions, finish_launcher, job, set_pod


def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"set_defaults": 0, "validate": 0, "parse": 0}
    real = {"set_defaults": set_defaults, "validate": validate}

    def wrap(name: str) -> Any:
        def call(job: Any) -> Any:
            calls[name] += 1
            return real[name](job)
        return call

    real_parse = types._parse

    def parse(job: object) -> types.MPIJob:
        calls["parse"] += 1
        return real_parse(job)

    monkeypatch.setattr(reconcile, "set_defaults", wrap("set_defaults"))
    monkeypatch.setattr(reconcile, "validate", wrap("validate"))
    monkeypatch.setattr(types, "_parse", parse)
    return calls


async def test_a_job_is_defaulted_validated_and_parsed_once_while_only_its_status_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counted(monkeypatch)
    async with EngineHarness(status_counts_hold=0.0) as h:  # a count is written at once
        h.create(job())
        kind: Any = h.controller.kind
        mode = kind.modes["v2beta1"]
        await h.sync("pi")  # every child, the status
        await h.sync("pi")  # the status write's echo
        kept = mode.kept.kept("ns", "pi")
        before = copy.deepcopy(kept)
        set_pod(h, "pi-worker-0", "Running", ready=True)
        h.mark()
        await h.sync("pi")  # the same cached job: discover_hosts.sh and the worker count
        assert h.writes() == [("update", "configmaps", "ns", "pi-config"),
                              ("update", "mpijobs/status", "ns", "pi")]
        assert mode.kept.kept("ns", "pi") is kept
        assert kept == before  # the sync did not change the kept job
        await h.sync("pi")  # the status write's echo
        assert calls == {"set_defaults": 1, "validate": 1, "parse": 1}
        h.mark()
        h.api.modify(MPIJOBS, "pi", lambda j: j["spec"]["mpiReplicaSpecs"]["Worker"].update(
            replicas=3), namespace="ns")
        await h.sync("pi")
        assert calls == {"set_defaults": 2, "validate": 2, "parse": 2}
        assert ("create", "pods", "ns", "pi-worker-2") in h.writes()


async def test_a_finished_job_is_not_kept_and_a_deleted_one_is_forgotten() -> None:
    async with EngineHarness() as h:
        h.create(job())
        kind: Any = h.controller.kind
        mode = kind.modes["v2beta1"]
        await h.sync("pi")
        assert ("ns", "pi") in mode.kept
        finish_launcher(h)
        await h.sync("pi")
        assert ("Succeeded", "True", "MPIJobSucceeded") in conditions(h)
        assert ("ns", "pi") not in mode.kept
        h.create(job("other"))
        await h.sync("other")
        assert ("ns", "other") in mode.kept
        h.api.remove(MPIJOBS, "other", namespace="ns")
        await h.settle()
        assert ("ns", "other") not in mode.kept
