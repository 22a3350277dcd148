"""Kubeconfig selection (client-go's order) and the one-line reasons a kubeconfig is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpi_controller.runtime.kubeconfig import (
    ConfigError,
    KubeconfigSource,
    Target,
    inspect_kubeconfig,
    kubeconfig_source,
)

GOOD = """\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443/"}
contexts:
- name: x
  context: {cluster: c, user: u, namespace: team}
current-context: x
users:
- name: u
  user: {token: abc}
"""


def _file(tmp_path: Path, text: str, name: str = "config") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_an_explicit_path_wins_over_kubeconfig(tmp_path: Path) -> None:
    env = {"KUBECONFIG": _file(tmp_path, GOOD, "env")}
    assert kubeconfig_source("/flag", environ=env) == KubeconfigSource(
        ("/flag",), "--kubeConfig /flag")


def test_kubeconfig_lists_skip_missing_files(tmp_path: Path) -> None:
    good = _file(tmp_path, GOOD)
    env = {"KUBECONFIG": f"/missing:{good}"}
    assert kubeconfig_source("", environ=env).paths == (good,)
    with pytest.raises(ConfigError, match=r"^\$KUBECONFIG=/a:/b: no such file$"):
        kubeconfig_source("", environ={"KUBECONFIG": "/a:/b"})


def test_in_a_pod_without_a_kubeconfig_the_source_is_in_cluster() -> None:
    assert kubeconfig_source("", environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1"}) == \
        KubeconfigSource((), "in-cluster")


def test_the_target_names_server_context_and_namespace(tmp_path: Path) -> None:
    source = KubeconfigSource((_file(tmp_path, GOOD),), "--kubeConfig k")
    assert inspect_kubeconfig(source) == Target("https://10.0.0.1:6443", "x", "team",
                                                "--kubeConfig k")
    assert inspect_kubeconfig(source, master="http://m:8080").server == "http://m:8080"


def test_merged_files_first_current_context_and_first_definition_win(tmp_path: Path) -> None:
    other = GOOD.replace("10.0.0.1", "10.9.9.9").replace("current-context: x", "")
    paths = (_file(tmp_path, other, "a"), _file(tmp_path, GOOD, "b"))
    assert inspect_kubeconfig(KubeconfigSource(paths, "$KUBECONFIG")).server == \
        "https://10.9.9.9:6443"


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty file, not a kubeconfig"),
    ("just a hostname\n", "not a kubeconfig (expected clusters, contexts and current-context; "
                          "got plain text)"),
    ("- a\n- b\n", "not a kubeconfig (expected clusters, contexts and current-context; got a "
                   "list)"),
    ("apiVersion: v1\nkind: Config\n  bad: indent\n",
     "not a kubeconfig: invalid YAML at line 3: mapping values are not allowed here"),
    (GOOD.replace("current-context: x", ""), "no current-context set (kubectl config "
                                             "use-context NAME)"),
    (GOOD.replace("current-context: x", "current-context: y"),
     "context 'y' is not defined (contexts: x)"),
    (GOOD.replace("cluster: c,", "cluster: d,"),
     "context 'x' names cluster 'd', which is not defined"),
    (GOOD.replace('{server: "https://10.0.0.1:6443/"}', "{}"), "cluster 'c' has no server"),
])
def test_a_bad_kubeconfig_is_one_line_naming_the_problem(
        tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        inspect_kubeconfig(KubeconfigSource((path,), f"--kubeConfig {path}"))
    assert str(err.value) == f"--kubeConfig {path}: {message}"


def test_missing_files_and_directories(tmp_path: Path) -> None:
    for path, message in ((str(tmp_path / "none"), "no such file"),
                          (str(tmp_path), "is a directory, not a kubeconfig file")):
        with pytest.raises(ConfigError) as err:
            inspect_kubeconfig(KubeconfigSource((path,), f"--kubeConfig {path}"))
        assert str(err.value) == f"--kubeConfig {path}: {message}"
