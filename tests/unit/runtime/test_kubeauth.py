"""The controller's client authenticates through kubernetes_asyncio's kubeconfig loader (here an
``exec`` credential plugin) without importing the library's generated models and APIs, and
leaves the package importable as usual in the same process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

SCRIPT = r"""
import asyncio, json, sys
import mpi_controller.app  # everything `mpi-controller run` imports
from mpi_controller.runtime.rest import RestClient

async def main():
    kube, target = await RestClient.connect(sys.argv[1])
    headers = await kube._headers(None)
    await kube.close()
    loaded = sorted(m for m in sys.modules if m.startswith("kubernetes_asyncio"))
    from kubernetes_asyncio import client  # a normal import afterwards loads the whole package
    return {"auth": headers.get("authorization"), "host": kube.host, "loaded": loaded,
            "api_after": hasattr(client, "CoreV1Api"),
            "shared_class": type(kube.api_client.configuration) is client.Configuration}

print(json.dumps(asyncio.run(main())))
"""

CREDENTIAL = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
              "status": {"token": "from-exec-plugin"}}


def _kubeconfig(path: Path) -> None:
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443",
                                               "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "users": [{"name": "u", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
            "args": ["-c", f"print({json.dumps(json.dumps(CREDENTIAL))})"]}}}],
    }))


def test_the_runtime_authenticates_without_the_generated_models(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    _kubeconfig(kubeconfig)
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(kubeconfig)], check=True,
                          capture_output=True, text=True, cwd=REPO)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"auth": "Bearer from-exec-plugin", "host": "https://127.0.0.1:6443",
                   "loaded": [], "api_after": True, "shared_class": False}


def test_with_the_package_already_imported_its_classes_are_used() -> None:
    from kubernetes_asyncio import client

    from mpi_controller.runtime.kubeauth import _from_package

    assert _from_package().Configuration is client.Configuration


RACE = """
import threading
from mpi_controller.runtime.kubeauth import kube_auth
start = threading.Barrier(16)
errors = []
def first_load():
    start.wait()
    try:
        kube_auth().Configuration
    except Exception as err:
        errors.append(repr(err))
threads = [threading.Thread(target=first_load) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(errors), errors[:1])
"""


def test_the_first_load_from_many_threads_at_once_is_safe() -> None:
    """Sixteen threads, each about to make a client with its own event loop, ask for the
    pieces at the same moment in a new interpreter: none sees a half-imported module (without
    the lock, two runs in three had threads fail with ``module 'kubernetes_asyncio.client' has
    no attribute 'Configuration'``)."""
    for _ in range(4):
        done = subprocess.run([sys.executable, "-c", RACE], check=True, capture_output=True,
                              text=True, timeout=120)
        assert done.stdout == "0 []\n", done.stdout + done.stderr


BASIC_AUTH = r"""
import json, sys
from mpi_controller.runtime.kubeauth import kube_auth
cfg = kube_auth().Configuration()
before = "urllib3" in sys.modules
cfg.username, cfg.password = "u", "p"
token = cfg.get_basic_auth_token()
import urllib3
print(json.dumps({"before": before, "token": token,
                  "real": sys.modules["urllib3"] is urllib3 and hasattr(urllib3, "PoolManager")}))
"""


def test_urllib3_is_imported_only_when_the_basic_auth_helper_runs() -> None:
    done = subprocess.run([sys.executable, "-c", BASIC_AUTH], check=True, capture_output=True,
                          text=True, cwd=REPO)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "before": False, "token": "Basic dTpw", "real": True}


def test_a_stand_in_used_while_it_is_in_place_imports_the_real_module(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Should a loaded source module use a deferred module (urllib3, aiohttp) as it loads,
    the real one is imported then, instead of the stand-in finding itself forever."""
    from mpi_controller.runtime.kubeauth import _Deferred

    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    stand_in = _Deferred("colorsys")
    monkeypatch.setitem(sys.modules, "colorsys", stand_in)
    assert stand_in.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    assert sys.modules["colorsys"] is not stand_in
