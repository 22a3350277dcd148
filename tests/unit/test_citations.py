"""Docstrings and comments cite upstream files (``mpi-operator v0.8.2
pkg/controller/mpi_job_controller.go``), never notes a reader of this repository does not have:
no ``shared/reference``, no section numbers of a specification outside it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("mpi_controller", "tests", "e2e", "conformance", "bench", "hack")
OUTSIDE = re.compile(r"shared/" r"reference|spec sections?\b|\(spec [0-9]|\bspec [0-9]+\.[0-9]",
                     re.IGNORECASE)


def test_no_citation_of_notes_outside_the_repository() -> None:
    found = [f"{path.relative_to(REPO)}:{number}"
             for folder in FOLDERS for path in sorted((REPO / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), start=1)
             if OUTSIDE.search(line) and path != Path(__file__).resolve()]
    assert not found, found
