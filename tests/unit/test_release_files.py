"""Release hygiene: the license text, the changelog, project URLs, the image's build context
(.dockerignore keeps only what deploy/Dockerfile copies) and its OCI labels."""

from __future__ import annotations

import tomllib

from tests.support import REPO


def test_release_files() -> None:
    assert (REPO / "LICENSE").read_text().split()[:4] == ["Apache", "License", "Version",
                                                         "2.0,"]
    assert "## [Unreleased]" in (REPO / "CHANGELOG.md").read_text()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["urls"]
    ignored = (REPO / ".dockerignore").read_text().splitlines()
    assert ignored[ignored.index("*") + 1:][:1] == ["!pyproject.toml"]
    dockerfile = (REPO / "deploy" / "Dockerfile").read_text()
    for label in ("title", "licenses", "version", "revision", "base.name"):
        assert f"org.opencontainers.image.{label}=" in dockerfile
    copied = {word for line in dockerfile.splitlines() if line.startswith("COPY ")
              and "--from" not in line for word in line.split()[1:-1]}
    assert copied == {"pyproject.toml", "constraints.txt", "README.md", "LICENSE",
                      "mpi_controller"}
    assert all(f"!{name}" in ignored for name in copied)
