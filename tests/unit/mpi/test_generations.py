"""Jobs created as kubeflow.org/v1 or v1alpha2 are stored as v2beta1 with their origin kept
(mpi_controller.mpi.conversion.generation_of); each runs in its generation's launch mode,
and v2beta1 jobs run as before."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mpi_controller.mpi.conversion import convert
from tests.engine_harness import EngineHarness

REPO = Path(__file__).resolve().parents[3]
NS = "ns"


@pytest.mark.parametrize(("example", "first"), [
    ("examples/v1/tensorflow-mnist-elastic.yaml", ("create", "serviceaccounts")),
    ("examples/v1alpha2/tensorflow-benchmarks.yaml", ("create", "configmaps"))])
async def test_a_job_of_an_older_generation_runs_in_its_own_launch_mode(
        example: str, first: tuple[str, str]) -> None:
    """Not as v2beta1 (no Service, no SSH Secret); tests/unit/mpi/test_launch_v1*.py have
    each mode's objects."""
    doc = yaml.safe_load((REPO / example).read_text())
    doc["metadata"]["namespace"] = NS
    name = doc["metadata"]["name"]
    async with EngineHarness() as h:
        h.create(convert(doc, "v2beta1"))
        h.mark()
        await h.sync(name)
        writes = [w[:2] for w in h.writes()]
        assert writes[0] == first
        assert ("create", "services") not in writes
        assert ("create", "secrets") not in writes


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
