"""``mpi-controller`` as a user runs it (a subprocess): every configuration or connection
mistake is one line on stderr naming what is wrong and exit 1 (usage errors: 2), never a
traceback; ``--help`` lists each flag once with its default; ``--version`` at the top level;
shell completion."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mpi_controller import __version__

ROOT = Path(__file__).resolve().parents[2]


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBEFLOW_NAMESPACE")}
    base.update(PYTHONPATH=str(ROOT), HOME="/nonexistent-home", **(env or {}))
    return subprocess.run([sys.executable, "-m", "mpi_controller", *argv], capture_output=True,
                          text=True, env=base, timeout=60, check=False)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _kubeconfig(tmp_path: Path, server: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(f"""\
apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{server}"}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
users: [{{name: u, user: {{token: abc}}}}]
""")
    return str(path)


def _assert_one_line(result: subprocess.CompletedProcess[str], code: int, message: str) -> None:
    errors = [line for line in result.stderr.splitlines() if line.startswith("mpi-controller")]
    assert "Traceback" not in result.stderr
    assert (result.returncode, errors) == (code, [message]), result.stderr


@pytest.mark.parametrize(("argv", "message"), [
    (["--kubeConfig", "/nonexistent"], "--kubeConfig /nonexistent: no such file"),
    (["--kubeconfig", "/etc/hostname"],
     "--kubeConfig /etc/hostname: not a kubeconfig (expected clusters, contexts and "
     "current-context; got plain text)"),
    (["-kubeConfig", "/"], "--kubeConfig /: is a directory, not a kubeconfig file"),
])
def test_a_kubeconfig_that_is_not_one_exits_1(argv: list[str], message: str) -> None:
    if not Path("/etc/hostname").is_file():
        pytest.skip("no /etc/hostname")
    _assert_one_line(_cli("run", *argv), 1, f"mpi-controller run: {message}")


def test_kubeconfig_naming_no_file_exits_1() -> None:
    _assert_one_line(_cli("run", env={"KUBECONFIG": "/nonexistent"}), 1,
                     "mpi-controller run: $KUBECONFIG=/nonexistent: no such file")


def test_no_kubeconfig_outside_a_pod_exits_1() -> None:
    _assert_one_line(_cli("run"), 1,
                     "mpi-controller run: no kubeconfig: pass --kubeConfig, set "
                     "$KUBECONFIG or create ~/.kube/config (or run in a pod)")


def test_an_explicit_kubeconfig_wins_over_the_environment(tmp_path: Path) -> None:
    """client-go: the flag's file is used although $KUBECONFIG names a missing one."""
    server = f"https://127.0.0.1:{_closed_port()}"
    result = _cli("run", "--kubeConfig", _kubeconfig(tmp_path, server), "--startup-timeout",
                  "0", env={"KUBECONFIG": "/nonexistent"})
    assert result.returncode == 1
    assert f"mpi-controller run: API server {server}: unreachable (" in result.stderr


def test_an_unreachable_server_exits_1_after_the_startup_timeout(tmp_path: Path) -> None:
    port = _closed_port()
    result = _cli("run", "--kubeConfig", _kubeconfig(tmp_path, f"https://127.0.0.1:{port}"),
                  "--startup-timeout", "1")
    last = result.stderr.splitlines()[-1]
    assert "Traceback" not in result.stderr
    assert result.returncode == 1
    assert last.startswith(f"mpi-controller run: API server https://127.0.0.1:{port}: "
                           "unreachable ("), last
    assert "API server not ready; retrying" in result.stderr
    assert "context=x" in result.stderr  # the start-up line names server and context


@pytest.mark.parametrize(("argv", "message"), [
    (["--kube-api-qps", "-1"], "--kube-api-qps must not be negative, got -1"),
    (["--threadiness", "0"], "--threadiness must be greater than 0, got 0"),
    (["--enable-scheme", "foojob"], "--enable-scheme: scheme foojob is not supported yet "
     "(supported: mpijob, tfjob, pytorchjob, xgboostjob, paddlejob, jaxjob, trainjob)"),
    (["--webhook-cert-validity", "forever"],
     "--webhook-cert-validity: time: invalid duration 'forever'"),
])
def test_bad_flag_values_are_usage_errors(argv: list[str], message: str) -> None:
    result = _cli("run", *argv)
    assert (result.returncode, "Traceback" in result.stderr) == (2, False)
    assert result.stderr.startswith(f"mpi-controller run: {message}"), result.stderr


def test_unknown_flags_are_usage_errors() -> None:
    # The command's own usage and name, as for its bad values.
    result = _cli("run", "--no-such-flag", "x")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "usage: mpi-controller run [flags]",
        "mpi-controller run: error: unrecognized arguments: --no-such-flag x"]
    result = _cli("--no-such-flag")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "mpi-controller: error: unrecognized arguments: --no-such-flag")


def test_version_at_the_top_level() -> None:
    for argv in (["--version"], ["version"], ["run", "--version"]):
        result = _cli(*argv)
        assert (result.returncode, result.stdout) == (0, f"mpi-controller {__version__}\n")


def test_help_lists_each_flag_once_grouped_with_its_default() -> None:
    out = _cli("run", "--help").stdout
    assert out.count("kubeConfig") == 1
    assert "-kubeconfig" not in out
    assert "--controller-threads" not in out.split("--threadiness")[0]
    for group in ("connection:", "controller:", "observability:", "webhooks:", "MPIJob jobs:"):
        assert f"\n{group}\n" in out
    assert "--threadiness int" in out
    assert "(default 2)" in out
    assert '(default "auto")' in out
    assert "--log-level {debug,info,warning,error}" in out
    assert "--pod-update-batch" in out
    assert "KUBECONFIG " not in out
    assert "THREADINESS" not in out
    top = _cli("--help").stdout
    assert "v1alpha2" in top
    assert "TFJob" in top
    assert "completion" in top


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completion_completes_commands_flags_and_choices() -> None:
    script = _cli("completion", "bash").stdout
    assert "complete -o default -F _mpi_controller mpi-controller" in script

    def complete(*words: str) -> list[str]:
        probe = (f"{script}\nCOMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; "
                 '_mpi_controller; echo "${COMPREPLY[@]}"')
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True,
                              check=True)
        return done.stdout.split()

    assert complete("mpi-controller", "re") == ["render"]
    assert complete("mpi-controller", "run", "--kube") == [
        "--kubeConfig", "--kube-api-qps", "--kube-api-burst", "--kubectl-delivery-image"]
    assert complete("mpi-controller", "run", "--log-level", "") == [
        "debug", "info", "warning", "error"]
    assert complete("mpi-controller", "completion", "") == ["--help", "bash", "zsh"]
    # File names after the flags that take a path, and only those (a webhook configuration's
    # name is not a path).
    paths = {line.split(")")[0].strip() for line in script.splitlines()
             if "compgen -f" in line}
    assert {spelling for case in paths for spelling in case.split("|")
            if spelling.split(":")[1].startswith("--")} == {
        "run:--kubeConfig", "run:--kubeconfig", "run:--pytorch-init-container-template-file",
        "run:--webhook-cert-dir", "render:--filename", "convert:--filename"}
    assert _cli("completion", "zsh").stdout.startswith("autoload -U +X bashcompinit")
