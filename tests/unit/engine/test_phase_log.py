"""One info line per job phase change, with the kind and the job key (the engine's status
write, every kind)."""

from __future__ import annotations

import structlog

from mpi_controller.kube.conditions import phase_of
from tests.engine_harness import EngineHarness
from tests.unit.mpi.test_kind import NS, add_launcher_pod, finish_launcher, set_pod, started


def _phase_lines(logs: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(e["log_level"], e["kind"], e["job"], e["phase"], e["previous"])
            for e in logs if e["event"] == "job phase changed"]


async def test_each_phase_change_is_logged_once_with_the_job_key() -> None:
    """Created, then Running once the workers and the launcher run, then Failed; a sync that
    changes no phase logs nothing."""
    with structlog.testing.capture_logs() as logs:
        async with EngineHarness() as h:
            await started(h)
            set_pod(h, "pi-worker-0", "Running", ready=True)
            set_pod(h, "pi-worker-1", "Running", ready=True)
            add_launcher_pod(h, "Running")
            await h.sync("pi")
            await h.sync("pi")
            finish_launcher(h, "Failed")
            set_pod(h, "pi-launcher-x", "Failed")
            await h.sync("pi")
            await h.sync("pi")
    assert _phase_lines(logs) == [
        ("info", "MPIJob", f"{NS}/pi", "Created", None),
        ("info", "MPIJob", f"{NS}/pi", "Running", "Created"),
        ("info", "MPIJob", f"{NS}/pi", "Failed", "Running"),
    ]


def test_the_phase_is_the_first_true_condition_of_the_ordered_list() -> None:
    def status(*true: str) -> dict[str, object]:
        return {"conditions": [{"type": t, "status": "True"} for t in true]
                + [{"type": "Failed", "status": "False"}]}

    assert phase_of({}) == ""
    assert phase_of(status("Created")) == "Created"
    assert phase_of(status("Created", "Running")) == "Running"
    assert phase_of(status("Created", "Running", "Succeeded")) == "Succeeded"
    assert phase_of(status("Created", "Suspended")) == "Suspended"
