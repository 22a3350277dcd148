#!/usr/bin/env python3
"""cuda_stubs.py ROOT: stand-ins for the NVIDIA libraries PyPI's torch wheel links to, so that
torch installed without its CUDA dependencies (``pip install --no-deps``) imports and runs on CPU.

Why: PyPI serves one torch wheel for Linux x86_64, built with CUDA: ``libtorch_cpu.so``,
``libtorch_cuda.so`` and ``libtorch_python.so`` name ``libcudart.so.13``, ``libcublas.so.13``,
``libcudnn.so.9``, ``libnccl.so.2``... in ``DT_NEEDED``, so ``import torch`` fails without them
(``OSError: libcudart.so.13: cannot open shared object file``), and the NVIDIA wheels that carry
them add about 3 GB (torch 2.9.1: 3.9 GB of wheels in all). The CPU-only wheels are on PyTorch's
own index, which this machine does not reach.

What: for every library a torch shared object under ROOT needs that neither torch nor the system
has (the C library, libstdc++, libgcc_s, libgomp, libz, libquadmath), one shared object of that
``SONAME`` is compiled with the host's C compiler into torch's ``lib`` directory (on torch's own
``$ORIGIN`` rpath). It defines exactly the symbols torch's objects take from it, with the symbol
versions they ask for (``readelf`` on torch's objects), plus the unversioned ones nothing else
defines. Each function returns 100 (``cudaErrorNoDevice``, ``CUDA_ERROR_NO_DEVICE``; a non-zero
status for the other libraries), ``*GetErrorString``/``*GetErrorName`` a fixed message: torch
sees a machine with no GPU (``torch.cuda.is_available()`` is False) and never calls them on the
CPU paths (gloo, the CPU kernels). The stubs use no C library (``-nostdlib``), so the host's
compiler and glibc do not leak into the image.

Prints one line per stub: its name and how many symbols it defines.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# What the image's system provides (Debian's libc6, libstdc++6, libgcc-s1, libgomp1, zlib1g,
# libquadmath0, besides torch's own copies of libgomp and libgfortran).
SYSTEM = re.compile(r"^(libc|libm|libdl|librt|libpthread|libutil|libstdc\+\+|libgcc_s|libgomp"
                    r"|libz|libquadmath|libgfortran|ld-linux-x86-64)\.so")
SYSTEM_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64")
SYSTEM_LIBS = ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1",
               "ld-linux-x86-64.so.2")


def readelf(*args: str) -> str:
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True,
                          text=True).stdout


def needed(path: Path) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf("-d", str(path)))


def version_files(path: Path) -> dict[str, str]:
    """Version name -> the library file it is needed from (``readelf -V``'s verneed part)."""
    out: dict[str, str] = {}
    current = ""
    for line in readelf("-V", str(path)).splitlines():
        if m := re.search(r"File: (\S+)", line):
            current = m[1]
        elif (m := re.search(r"Name: (\S+)\s+Flags", line)) and current:
            out[m[1]] = current
    return out


def symbols(path: Path) -> list[tuple[str, str, str, bool]]:
    """(name, version or "", type, undefined) for each global dynamic symbol."""
    out = []
    for line in readelf("--dyn-syms", str(path)).splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].rstrip(":").isdigit() or f[4] == "LOCAL":
            continue
        name, _, version = f[7].partition("@")
        undefined = f[6] == "UND"
        if undefined and f[4] == "WEAK":
            continue  # may stay unresolved
        out.append((name, version.lstrip("@").split(" ")[0], f[3], undefined))
    return out


def system_symbols() -> set[str]:
    names: set[str] = set()
    for lib in SYSTEM_LIBS:
        for d in SYSTEM_DIRS:
            if os.path.exists(f"{d}/{lib}"):
                names.update(n for n, _, _, undefined in symbols(Path(d, lib)) if not undefined)
                break
    return names


def stub_source(functions: set[str], objects: set[str]) -> str:
    lines = ['static const char message[] = "no CUDA here: a CPU-only stand-in (cuda_stubs.py)";']
    for name in sorted(functions):
        if name.endswith(("GetErrorString", "GetErrorName")):
            lines.append(f"const char *{name}(void) {{ return message; }}")
        else:
            lines.append(f"long {name}(void) {{ return 100; }}")
    lines += [f"char {name}[256];" for name in sorted(objects)]
    return "\n".join(lines) + "\n"


def main() -> int:
    [lib_dir] = {p.parent for p in Path(sys.argv[1]).rglob("libtorch_cpu.so")}
    torch_dir = lib_dir.parent
    objects = [p for p in torch_dir.rglob("*.so*") if p.is_file() and not p.is_symlink()]
    present = {p.name for p in objects}
    defined: set[str] = set()
    wanted: dict[str, dict[str, set[str]]] = {}  # soname -> version -> symbols
    kinds: dict[str, str] = {}
    unversioned: set[str] = set()
    missing: set[str] = set()
    for obj in objects:
        missing.update(n for n in needed(obj) if n not in present and not SYSTEM.match(n))
        files = version_files(obj)
        for name, version, kind, undefined in symbols(obj):
            if not undefined:
                defined.add(name)
                continue
            kinds[name] = kind
            if version:
                wanted.setdefault(files.get(version, ""), {}).setdefault(version, set()).add(name)
            elif not name.startswith(("Py", "_Py", "_py")):
                unversioned.add(name)
    unversioned -= defined | system_symbols()
    with tempfile.TemporaryDirectory() as tmp:
        for soname in sorted(missing):
            versions = wanted.get(soname, {})
            names = set().union(*versions.values()) | unversioned
            src, script = Path(tmp, "stub.c"), Path(tmp, "stub.map")
            src.write_text(stub_source({n for n in names if kinds.get(n) != "OBJECT"},
                                       {n for n in names if kinds.get(n) == "OBJECT"}))
            args = ["cc", "-shared", "-fPIC", "-nostdlib", "-O0", f"-Wl,-soname,{soname}",
                    "-o", str(lib_dir / soname), str(src)]
            if versions:
                first, *rest = sorted(versions)
                body = [f"{first} {{ global: {'; '.join(sorted(versions[first] | unversioned))}; "
                        "local: *; };"]
                body += [f"{v} {{ global: {'; '.join(sorted(versions[v]))}; }};" for v in rest]
                script.write_text("\n".join(body) + "\n")
                args.append(f"-Wl,--version-script={script}")
            subprocess.run(args, check=True)
            print(f"{soname}: {len(names)} symbols")
    return 0


if __name__ == "__main__":
    sys.exit(main())
