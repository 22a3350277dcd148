"""README.md and docs/*.md: every relative link and every ``#anchor`` resolves, and the README
stays a short front door."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
README_MAX_LINES = 300

_FENCE = re.compile(r"^(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str, *, code_spans: bool = False) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans blanked unless
    ``code_spans``."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line if code_spans else _CODE_SPAN.sub("", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (not ``-`` or ``_``),
    spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, repeated ones numbered as GitHub does (``-1``, ...)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in _prose_lines(page.read_text(), code_spans=True):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2).replace("`", ""))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(page: Path) -> list[str]:
    """The targets of a page's links and images, outside code."""
    return [m.group(1) for line in _prose_lines(page.read_text())
            for m in _LINK.finditer(line)]


def _relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if not _relative(target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor} in "
                          f"{dest.relative_to(REPO)}")
    assert not broken, "\n".join(broken)


def test_pages_have_links_to_check() -> None:
    """The link parser finds links (a broken pattern would make the test above vacuous)."""
    readme = links(REPO / "README.md")
    assert "docs/running.md" in readme
    assert "docs/training-kinds.md#tfjob" in readme


def test_slugs_follow_github() -> None:
    assert slug("Differences from training-operator v1.9.2 (TFJob)") == (
        "differences-from-training-operator-v192-tfjob")
    assert slug("mpi-controller render: what the controller would create") == (
        "mpi-controller-render-what-the-controller-would-create")
    assert slug("Opt-ins: what the Go operator's users keep asking for") == (
        "opt-ins-what-the-go-operators-users-keep-asking-for")


def test_readme_stays_a_front_door() -> None:
    lines = (REPO / "README.md").read_text().count("\n")
    assert lines < README_MAX_LINES, (
        f"README.md has {lines} lines; move the detail to docs/ (under {README_MAX_LINES})")
