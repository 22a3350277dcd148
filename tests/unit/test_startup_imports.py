"""What ``mpi-controller run`` imports before it starts: none of the modules an idle controller
does not need (each was measured in docs/performance.md, "Memory"), so that they are not
imported again at start by a later change without notice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

NOT_AT_START = (
    "aiohttp",  # the client's fallback path only (a proxy, pools disabled)
    "cryptography",  # keys and certificates are made when a Secret or the webhook needs them
    "importlib.metadata",  # the version, read only by `version` and `--version`
    "kubernetes_asyncio",  # its configuration and auth modules are loaded under other names
    "multidict",  # aiohttp's, as yarl below
    "mpi_controller.trainjob.build",  # the TrainJob kind's, when --enable-scheme names it
    "mpi_controller.trainjob.from_v1",  # `convert` and `render` only
    "mpi_controller.trainjob.kind",
    "mpi_controller.trainjob.render",
    "mpi_controller.trainjob.schemas",  # the CRDs' schemas: hack/gen-crd.py only
    "mpi_controller.trainjob.validation",  # the webhooks' checks: on the first review
    "urllib3",  # kubernetes_asyncio's basic-auth helper, deferred until used
    "yarl",
)

# The steps of `mpi-controller run` up to its first request: the command line, the app, the
# client from a kubeconfig (no request is made).
SCRIPT = r"""
import asyncio, json, sys
from mpi_controller import cli
from mpi_controller.options import options_from_args
args = cli.build_parser().parse_args(["run", "--kubeConfig", sys.argv[1]])
options_from_args(args)
from mpi_controller import app
from mpi_controller.runtime.rest import RestClient

async def main():
    kube, _ = await RestClient.connect(sys.argv[1])
    await kube.close()

asyncio.run(main())
print(json.dumps(sorted(sys.modules)))
"""


def test_run_imports_none_of_the_modules_an_idle_controller_does_not_need(
        tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443",
                                               "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(kubeconfig)], check=True,
                          capture_output=True, text=True, cwd=REPO)
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "mpi_controller.app" in loaded
    assert [m for m in loaded
            if any(m == n or m.startswith(f"{n}.") for n in NOT_AT_START)] == []
