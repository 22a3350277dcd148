"""The "Using the builders" example of docs/builders.md runs as written."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_readme_reconcile_example_runs() -> None:
    page = (REPO / "docs" / "builders.md").read_text()
    section = page[page.index("# Using the builders from another controller"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    mpijob: dict[str, Any] = yaml.safe_load((REPO / "examples" / "pi.yaml").read_text())
    mpijob["metadata"].update({"namespace": "default", "uid": "u-1"})
    scope: dict[str, Any] = {"mpijob_dict": mpijob, "running_pods": [],
                             "launcher_from_api": None, "pods": [],
                             "now": datetime(2026, 1, 1, tzinfo=UTC)}
    exec(compile(code.group(1), "docs/builders.md", "exec"), scope)
    assert scope["service"]["metadata"]["name"] == "pi"
    assert scope["config"]["data"]["hostfile"] == (
        "pi-worker-0.pi.default.svc.cluster.local slots=1\n"
        "pi-worker-1.pi.default.svc.cluster.local slots=1\n")
    assert [w["metadata"]["name"] for w in scope["workers"]] == ["pi-worker-0", "pi-worker-1"]
    assert scope["launcher"]["kind"] == "Job"
    assert scope["update"].status["replicaStatuses"] == {"Worker": {}}
