"""hack/images/oci_archive.py: the OCI archives the real node's images are imported from."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from tests.support import REPO

TOOL = REPO / "hack" / "images" / "oci_archive.py"


def build(*args: str) -> str:
    out = subprocess.run([sys.executable, str(TOOL), *args], check=True, capture_output=True,
                         text=True)
    return out.stdout.strip()


def blob(tar: tarfile.TarFile, digest: str) -> bytes:
    f = tar.extractfile("blobs/sha256/" + digest.removeprefix("sha256:"))
    assert f is not None
    return f.read()


def read(archive: Path) -> tuple[dict[str, Any], dict[str, Any], list[list[str]], list[int]]:
    """(index, config, file names of each layer, modes of the last layer's files)."""
    with tarfile.open(archive) as tar:
        member = tar.extractfile("index.json")
        assert member is not None
        index = json.loads(member.read())
        manifest = json.loads(blob(tar, index["manifests"][0]["digest"]))
        config = json.loads(blob(tar, manifest["config"]["digest"]))
        layers, modes = [], []
        for layer in manifest["layers"]:
            data = blob(tar, layer["digest"])
            assert layer["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert layer["mediaType"] == "application/vnd.oci.image.layer.v1.tar"
            with tarfile.open(fileobj=io.BytesIO(data)) as inner:
                members = inner.getmembers()
                layers.append([m.name for m in members])
                modes = [m.mode for m in members]
        assert config["rootfs"]["diff_ids"] == [x["digest"] for x in manifest["layers"]]
    return index, config, layers, modes


def test_same_inputs_give_the_same_archive_and_digest(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\nexec true\n")
    args = ["--ref", "localhost/x/pause:k1", "--file", f"{tmp_path}/run.sh:/usr/bin/run:0755",
            "--entrypoint", '["/usr/bin/run"]', "--env", "A=1"]
    first = build("--out", str(tmp_path / "a.tar"), *args)
    second = build("--out", str(tmp_path / "b.tar"), *args)
    assert first == second
    assert first.startswith("sha256:")
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()

    index, config, layers, modes = read(tmp_path / "a.tar")
    annotations = index["manifests"][0]["annotations"]
    assert annotations == {"io.containerd.image.name": "localhost/x/pause:k1",
                           "org.opencontainers.image.ref.name": "k1"}
    assert index["manifests"][0]["digest"] == first
    assert config["created"] == "1970-01-01T00:00:00Z"
    assert config["config"]["Entrypoint"] == ["/usr/bin/run"]
    assert config["config"]["Env"] == [
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "A=1"]
    # No directory entries: the layers below keep their directories and symlinks (/usr/bin).
    assert layers == [["usr/bin/run"]]
    assert modes == [0o755]


def test_base_keeps_its_layers_and_settings(tmp_path: Path) -> None:
    (tmp_path / "one").write_text("1")
    (tmp_path / "two").write_text("2")
    build("--out", str(tmp_path / "base.tar"), "--ref", "localhost/x/base:b",
          "--file", f"{tmp_path}/one:/etc/one:0644", "--cmd", '["sh"]', "--env", "A=1",
          "--env", "B=2", "--user", "1000")
    build("--out", str(tmp_path / "top.tar"), "--ref", "localhost/x/top:t",
          "--base", str(tmp_path / "base.tar"), "--file", f"{tmp_path}/two:/etc/two:0600",
          "--env", "B=3")
    _, config, layers, modes = read(tmp_path / "top.tar")
    assert layers == [["etc/one"], ["etc/two"]]
    assert modes == [0o600]
    assert config["config"]["Cmd"] == ["sh"]
    assert config["config"]["User"] == "1000"
    assert config["config"]["Env"][1:] == ["A=1", "B=3"]
