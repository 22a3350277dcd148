"""Every ``python`` code block of the library pages (``docs/library.md``, ``docs/testing.md``)
runs as written, each in a fresh namespace, so the examples cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = ("docs/library.md", "docs/testing.md")
"""The pages whose examples are executed."""


def _blocks(page: str) -> list[tuple[str, int, str]]:
    text = (REPO / page).read_text()
    return [(page, text.count("\n", 0, m.start()) + 2, m.group(1))
            for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M)]


BLOCKS = [block for page in PAGES for block in _blocks(page)]


def test_every_page_has_examples() -> None:
    assert {page for page, _, _ in BLOCKS} == set(PAGES)


@pytest.mark.parametrize(("page", "line", "code"), BLOCKS,
                         ids=[f"{page}:{line}" for page, line, _ in BLOCKS])
def test_example_runs(page: str, line: int, code: str) -> None:
    exec(compile("\n" * (line - 1) + code, str(REPO / page), "exec"), {"__name__": "__doc__"})
