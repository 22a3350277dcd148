"""``mpi-controller run`` never imports aiohttp (nor its ``multidict``, ``yarl``...: ~26 MB of
RSS and ~0.3 s of CPU), with its webhooks or without: the API requests and watches go through
the lean HTTP/1.1 client, ``/metrics``, ``/healthz`` and ``/readyz`` through the small server of
``runtime/httpserve.py``, and the webhooks through ``runtime/https.py``. The whole command
runs, every kind enabled, against a stub API server (every list empty, every watch held open,
no WatchList) until it is ready (with webhooks: serving them, from a certificate directory)
and has served ``/metrics``; then it is stopped with SIGTERM and reports what it imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client import CONTENT_TYPE_LATEST

from tests.processes import free_port, stub_api_server
from tests.unit.runtime.test_https import self_signed

REPO = Path(__file__).resolve().parents[2]
AIOHTTP = ("aiohttp", "multidict", "yarl", "frozenlist", "aiosignal", "propcache")

DRIVER = r"""
import json, os, signal, sys, threading, time, urllib.request
from mpi_controller.cli import main

kubeconfig, health, monitoring = sys.argv[1:4]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
seen = {}

def probe():
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and "metrics" not in seen:
        try:
            with opener.open(f"http://127.0.0.1:{health}/readyz", timeout=5) as resp:
                seen["readyz"] = [resp.status, resp.read().decode()]
            with opener.open(f"http://127.0.0.1:{monitoring}/metrics", timeout=5) as resp:
                body = resp.read().decode()
                seen["metrics"] = [resp.status, resp.headers["Content-Type"],
                                   "workqueue_depth" in body]
        except OSError:  # not listening yet, or not ready (500)
            time.sleep(0.1)
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=probe, daemon=True).start()
kinds = ["mpijob", "tfjob", "pytorchjob", "xgboostjob", "paddlejob", "jaxjob", "trainjob"]
webhooks = (["--webhooks", "on", "--webhook-cert-dir", sys.argv[5], "--webhook-server-port",
             sys.argv[6]] if len(sys.argv) > 5 else ["--webhooks", "off"])
rc = main(["run", "--kubeConfig", kubeconfig, "--no-leader-elect", *webhooks,
           "--health-port", health, "--monitoring-port", monitoring,
           *(arg for kind in kinds for arg in ("--enable-scheme", kind))])
prefixes = tuple(sys.argv[4].split(","))
print(json.dumps({"rc": rc, "seen": seen,
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in prefixes)}))
"""

STUB = '''
import http.server, json, sys, time
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if "sendInitialEvents=true" in self.path:  # no WatchList here: the client lists
            self.send_response(422)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"kind": "Status", "apiVersion": "v1", "code": 422,
                                         "reason": "Invalid"}).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if "watch=true" in self.path:
            self.wfile.flush()
            time.sleep(60)  # a watch that sees nothing happen; the process ends first
            return
        self.wfile.write(json.dumps({"kind": "List", "apiVersion": "v1",
                                     "metadata": {"resourceVersion": "1"},
                                     "items": []}).encode())
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
'''


@pytest.mark.parametrize("webhooks", [False, True], ids=["without-webhooks", "with-webhooks"])
def test_run_never_imports_aiohttp(tmp_path: Path, webhooks: bool) -> None:
    extra = []
    if webhooks:
        certs = tmp_path / "certs"
        certs.mkdir()
        cert, key = self_signed(1)
        (certs / "tls.crt").write_bytes(cert)
        (certs / "tls.key").write_bytes(key)
        extra = [str(certs), str(free_port())]
    with stub_api_server(tmp_path, STUB, user="{token: t}") as kubeconfig:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, str(kubeconfig), str(free_port()),
             str(free_port()), ",".join(AIOHTTP), *extra],
            capture_output=True, text=True, timeout=180, check=False, cwd=REPO)
    assert done.stdout, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"rc": 0, "loaded": [], "seen": {
        "readyz": [200, "ok"],
        "metrics": [200, CONTENT_TYPE_LATEST, True]}}, done.stderr[-3000:]
    assert ("https server listening" in done.stderr) == webhooks, done.stderr[-3000:]


def test_importing_the_app_imports_no_aiohttp() -> None:
    script = ("import json, sys\nimport mpi_controller.app, mpi_controller.cli\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
              f"{AIOHTTP!r})))\n")
    done = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                          text=True, cwd=REPO)
    assert json.loads(done.stdout) == []
