"""Jobs created as kubeflow.org/v1 or v1alpha2 are stored as v2beta1 with their origin kept
(mpi_controller.mpi.conversion.generation_of); the v2beta1 sync leaves them to their
generation's launch mode and runs v2beta1 jobs as before."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mpi_controller.mpi.conversion import convert
from tests.engine_harness import EngineHarness

REPO = Path(__file__).resolve().parents[3]
NS = "ns"


@pytest.mark.parametrize("example", ["examples/v1/tensorflow-mnist-elastic.yaml",
                                     "examples/v1alpha2/tensorflow-benchmarks.yaml"])
async def test_a_job_of_an_older_generation_is_not_run_as_v2beta1(example: str) -> None:
    doc = yaml.safe_load((REPO / example).read_text())
    doc["metadata"]["namespace"] = NS
    name = doc["metadata"]["name"]
    async with EngineHarness() as h:
        h.create(convert(doc, "v2beta1"))
        h.mark()
        await h.sync(name)
        assert h.writes() == []
        assert h.events() == []


async def test_the_same_job_written_as_v2beta1_runs() -> None:
    doc = yaml.safe_load((REPO / "examples/pi.yaml").read_text())
    doc["metadata"]["namespace"] = NS
    async with EngineHarness() as h:
        h.create(convert(convert(doc, "v1"), "v2beta1"))  # a v2beta1 job read through v1
        h.mark()
        await h.sync("pi")
        assert [w[:2] for w in h.writes()][:3] == [("create", "services"),
                                                  ("create", "configmaps"),
                                                  ("create", "secrets")]
