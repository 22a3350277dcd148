"""Write an OCI image archive (an image layout in one tar) from root filesystem tars.

Contract: ``oci_archive.py --out FILE --ref NAME [--base ARCHIVE] [--layer TAR]...
[--file SRC:DEST:MODE]... [--entrypoint JSON] [--cmd JSON] [--env K=V]... [--user U]
[--workdir DIR]`` writes FILE, an archive that ``ctr images import`` names NAME. ``--base``
starts from another such archive (its layers and settings); each ``--layer`` tar is added
unchanged as an uncompressed layer; ``--file`` entries form one more layer (mode octal, owner
root, mtime 0); the settings given replace the base's (``--env`` per variable).
The output depends only on the inputs: fixed timestamps, sorted JSON, no host names, so equal
inputs give an equal image digest, which is printed on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar"
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
EPOCH = "1970-01-01T00:00:00Z"
DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def files_layer(specs: list[str], out: Path) -> None:
    """A layer of ``SRC:DEST:MODE`` files owned by root. It holds no directory entries, so the
    directories (and symlinks such as /bin) of the layers below keep their owners and kinds."""
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for spec in sorted(specs, key=lambda s: s.split(":")[1]):
            src, dest, mode = spec.split(":")
            info = tarfile.TarInfo(dest.strip("/"))
            info.size, info.mode, info.mtime = os.path.getsize(src), int(mode, 8), 0
            with open(src, "rb") as f:
                tar.addfile(info, f)


def add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime = len(data), 0
    tar.addfile(info, io.BytesIO(data))


def image_config(args: argparse.Namespace, base: dict[str, Any],
                 diff_ids: list[str]) -> dict[str, Any]:
    cfg: dict[str, Any] = dict(base)
    if args.entrypoint:
        cfg["Entrypoint"] = json.loads(args.entrypoint)
    if args.cmd:
        cfg["Cmd"] = json.loads(args.cmd)
    env = dict(e.split("=", 1) for e in cfg.get("Env", [DEFAULT_PATH]))
    env.update(e.split("=", 1) for e in args.env)
    cfg["Env"] = [f"{k}={v}" for k, v in env.items()]
    if args.user:
        cfg["User"] = args.user
    if args.workdir:
        cfg["WorkingDir"] = args.workdir
    return {
        "architecture": "amd64",
        "os": "linux",
        "created": EPOCH,
        "config": cfg,
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{d}" for d in diff_ids]},
    }


def read_base(archive: str, into: Path) -> tuple[list[Path], dict[str, Any]]:
    """The layer files (extracted into ``into``) and runtime settings of a base archive."""
    with tarfile.open(archive) as tar:
        def blob(digest: str) -> bytes:
            f = tar.extractfile("blobs/sha256/" + digest.removeprefix("sha256:"))
            assert f is not None, digest
            return f.read()

        index = json.loads(tar.extractfile("index.json").read())  # type: ignore[union-attr]
        manifest = json.loads(blob(index["manifests"][0]["digest"]))
        config = json.loads(blob(manifest["config"]["digest"]))
        layers = []
        for i, layer in enumerate(manifest["layers"]):
            path = into / f"base-{i}.tar"
            src = tar.extractfile("blobs/sha256/" + layer["digest"].removeprefix("sha256:"))
            assert src is not None
            with path.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            layers.append(path)
    return layers, config.get("config", {})


def write_archive(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory(dir=Path(args.out).parent) as tmp:
        layers, base = read_base(args.base, Path(tmp)) if args.base else ([], {})
        layers += [Path(p) for p in args.layer]
        if args.file:
            extra = Path(tmp) / "files.tar"
            files_layer(args.file, extra)
            layers.append(extra)
        digests = [sha256_file(p) for p in layers]
        config = canonical(image_config(args, base, digests))
        manifest = canonical({
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": {"mediaType": CONFIG_TYPE, "digest": "sha256:" + sha(config),
                       "size": len(config)},
            "layers": [{"mediaType": LAYER_TYPE, "digest": f"sha256:{d}",
                        "size": p.stat().st_size} for d, p in zip(digests, layers, strict=True)],
        })
        tag = args.ref.rsplit(":", 1)[1] if ":" in args.ref.rsplit("/", 1)[-1] else "latest"
        index = canonical({
            "schemaVersion": 2,
            "manifests": [{
                "mediaType": MANIFEST_TYPE, "digest": "sha256:" + sha(manifest),
                "size": len(manifest),
                "annotations": {"io.containerd.image.name": args.ref,
                                "org.opencontainers.image.ref.name": tag},
            }],
        })
        partial = Path(args.out + ".tmp")
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
            add_bytes(tar, "oci-layout", canonical({"imageLayoutVersion": "1.0.0"}))
            add_bytes(tar, "index.json", index)
            add_bytes(tar, f"blobs/sha256/{sha(config)}", config)
            add_bytes(tar, f"blobs/sha256/{sha(manifest)}", manifest)
            for digest, path in sorted(zip(digests, layers, strict=True)):
                info = tarfile.TarInfo(f"blobs/sha256/{digest}")
                info.size, info.mtime = path.stat().st_size, 0
                with path.open("rb") as f:
                    tar.addfile(info, f)
        shutil.move(partial, args.out)
    return "sha256:" + sha(manifest)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--base")
    p.add_argument("--layer", action="append", default=[])
    p.add_argument("--file", action="append", default=[])
    p.add_argument("--entrypoint")
    p.add_argument("--cmd")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--user")
    p.add_argument("--workdir")
    args = p.parse_args()
    if not (args.base or args.layer or args.file):
        p.error("give a --base, a --layer or a --file")
    print(write_archive(args))


if __name__ == "__main__":
    main()
