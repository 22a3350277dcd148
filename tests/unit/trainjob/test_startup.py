"""``mpi-controller run`` and the TrainJob kind: it runs only when ``--enable-scheme trainjob``
names it (an installed ``trainjobs.trainer.kubeflow.org`` CRD, which Kubeflow Trainer may serve,
is not enough), and it exits with one line when the JobSet CRD is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mpi_controller.runtime.kubeconfig import ConfigError
from tests.processes import stub_api_server
from tests.unit.schemes_client import CrdProbeClient as _Client
from tests.unit.schemes_client import schemes_to_run as _schemes


def test_an_installed_trainjob_crd_alone_does_not_enable_the_kind() -> None:
    client = _Client("mpijobs", "trainjobs", "jobsets")
    assert _schemes(client) == ["mpijob"]
    assert "trainjobs.trainer.kubeflow.org" not in client.listed


def test_enabled_with_jobset_installed_it_runs() -> None:
    client = _Client("trainjobs", "jobsets")
    assert _schemes(client, "trainjob") == ["trainjob"]
    assert client.listed == ["trainjobs.trainer.kubeflow.org", "jobsets.jobset.x-k8s.io"]


def test_enabled_without_the_jobset_crd_it_says_so_in_one_line() -> None:
    with pytest.raises(ConfigError) as missing:
        _schemes(_Client("trainjobs", "mpijobs"), "mpijob", "trainjob")
    assert str(missing.value) == (
        "TrainJob needs the JobSet CRD jobsets.jobset.x-k8s.io (jobset.x-k8s.io/v1alpha2), "
        "which is not installed: install JobSet first, or run without --enable-scheme trainjob")


def test_the_process_exits_1_with_that_line(tmp_path: Path) -> None:
    """The whole command, against a stub API server that serves every list but JobSets."""
    with stub_api_server(tmp_path, _STUB) as kubeconfig:
        done = subprocess.run(
            [sys.executable, "-m", "mpi_controller", "run", "--kubeConfig", str(kubeconfig),
             "--enable-scheme", "trainjob", "--no-leader-elect", "--health-port", "0",
             "--monitoring-port", "0"],
            capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "mpi-controller run: TrainJob needs the JobSet CRD jobsets.jobset.x-k8s.io "
        "(jobset.x-k8s.io/v1alpha2), which is not installed: install JobSet first, or run "
        "without --enable-scheme trainjob")
    assert "Traceback" not in done.stderr


_STUB = '''
import http.server, json
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        missing = "/jobsets" in self.path
        body = json.dumps({"kind": "Status", "code": 404} if missing else
                          {"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []})
        self.send_response(404 if missing else 200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
'''
