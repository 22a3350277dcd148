"""The bench programs end on SIGTERM as on Ctrl-C: their ``finally`` blocks and context
managers run (the MPIJob CRD's conversion webhook is put back, namespaces deleted, controllers
stopped), instead of the process dying with the cluster left as the run had it."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support import REPO

sys.path.insert(0, str(Path(REPO) / "bench"))
import harness  # bench/harness.py


def _signalled(unwound: list[str]) -> None:
    """Send this process SIGTERM inside a ``try`` whose ``finally`` records that it ran."""
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this returns
        unwound.append("slept through the signal")
    finally:
        unwound.append("finally ran")


def test_sigterm_unwinds_the_program_like_ctrl_c() -> None:
    previous = signal.getsignal(signal.SIGTERM)
    unwound: list[str] = []
    try:
        harness.exit_on_sigterm()
        with pytest.raises(SystemExit) as ended:
            _signalled(unwound)
        assert ended.value.code == 143
        assert unwound == ["finally ran"]
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Stoppable:
    def __init__(self) -> None:
        self.stopped = False
        self.operator = "ours"

    def stop(self) -> None:
        self.stopped = True


class _Cluster:
    def __init__(self) -> None:
        self.deleted: list[str] = []

    def delete_namespace(self, namespace: str) -> float:
        self.deleted.append(namespace)
        return 0.1


def test_a_run_cut_short_while_its_events_settle_still_stops_and_deletes() -> None:
    """SIGTERM often lands in ``Run.__exit__`` itself (the Events settle for 5 s there): the
    controller is stopped and the namespace deleted all the same."""
    cluster, controller, observer = _Cluster(), _Stoppable(), _Stoppable()
    run = harness.Run.__new__(harness.Run)
    run.s = SimpleNamespace(cluster=cluster)  # type: ignore[assignment]
    run.workload, run.namespace, run.result = "arrival", "bench-arrival-x", {}
    run.controller = controller  # type: ignore[assignment]
    run.observer = observer  # type: ignore[assignment]

    def cut_short(ctl: object) -> dict[str, int]:
        raise SystemExit(143)

    run.event_figures = cut_short  # type: ignore[method-assign,assignment]
    with pytest.raises(SystemExit):
        run.__exit__(None, None, None)
    assert (controller.stopped, observer.stopped, cluster.deleted) == (
        True, True, ["bench-arrival-x"])
    assert run.result == {"namespace_delete_s": 0.1}
