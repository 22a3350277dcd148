"""The environment of each PyTorchJob pod (training-operator v1.9 envvar.go, master.go,
elastic.go): every variable, its value and upstream's order, and the workers' init container
(initcontainer.go)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mpi_controller.pytorch import InitContainerTemplate, parse_pytorchjob, pod_env, set_defaults
from mpi_controller.pytorch.envvars import nproc_per_node_int
from mpi_controller.pytorch.initcontainer import DEFAULT_TEMPLATE
from tests.pytorchjobs import init_container, master_env, pytorchjob, replica


def env(body: dict[str, Any], rtype: str, index: int) -> list[tuple[str, str]]:
    job = parse_pytorchjob(set_defaults(body))
    return [(v["name"], v["value"]) for v in pod_env(job, rtype, index)]


def test_upstreams_example_one_master_two_workers() -> None:
    """The reference's example: job ``pt``, 1 Master and 2 Workers, on worker-1."""
    body = pytorchjob("pt", {"Master": replica(1), "Worker": replica(2)})
    assert env(body, "Worker", 1) == [
        ("PYTHONUNBUFFERED", "1"), ("MASTER_PORT", "23456"), ("PET_MASTER_PORT", "23456"),
        ("MASTER_ADDR", "pt-master-0"), ("PET_MASTER_ADDR", "pt-master-0"),
        ("WORLD_SIZE", "3"), ("RANK", "2"), ("PET_NODE_RANK", "2"),
        ("PET_NPROC_PER_NODE", "auto"), ("PET_NNODES", "3")]
    assert env(body, "Master", 0) == [
        (e["name"], e["value"]) for e in master_env("pt", rank=0, world=3, nnodes="3")]


def test_nproc_per_node_multiplies_the_world_size_and_every_rank() -> None:
    body = pytorchjob("pt", {"Master": replica(1), "Worker": replica(3)}, nprocPerNode="4")
    ranks = [("Master", 0, 0)] + [("Worker", i, i + 1) for i in range(3)]
    for rtype, index, rank in ranks:
        assert env(body, rtype, index) == [
            (e["name"], e["value"])
            for e in master_env("pt", rank=rank, world=16, nnodes="4", nproc="4")]


@pytest.mark.parametrize(("text", "value"), [
    ("auto", 1), ("cpu", 1), ("gpu", 1), ("8", 8), ("+2", 2), ("-3", -3), ("007", 7),
    (" 4", 1), ("4.0", 1), ("4_0", 1), ("99999999999999999999", 1), (None, 1)])
def test_nproc_per_node_reads_as_go_atoi(text: str | None, value: int) -> None:
    body = pytorchjob("pt", {"Worker": replica(1)})
    if text is not None:
        body["spec"]["nprocPerNode"] = text
    job = parse_pytorchjob(body)
    assert nproc_per_node_int(job) == value


def test_a_custom_master_port() -> None:
    body = pytorchjob("pt", {"Master": replica(1, port=3000), "Worker": replica(1, port=4000)})
    assert env(body, "Worker", 0)[1:3] == [("MASTER_PORT", "3000"), ("PET_MASTER_PORT", "3000")]


def test_workers_only_get_no_master_variables() -> None:
    body = pytorchjob("pt", {"Worker": replica(2)})
    assert env(body, "Worker", 1) == [("PYTHONUNBUFFERED", "1"), ("PET_NPROC_PER_NODE", "auto"),
                                      ("PET_NNODES", "2")]


def test_elastic_defaults() -> None:
    body = pytorchjob("pt", {"Worker": replica(2, port=29400)},
                      elastic={"minReplicas": 1, "maxReplicas": 3})
    assert env(body, "Worker", 0) == [
        ("PYTHONUNBUFFERED", "1"), ("PET_NPROC_PER_NODE", "auto"),
        ("PET_RDZV_ENDPOINT", "pt-worker-0:29400"), ("PET_RDZV_BACKEND", "c10d"),
        ("PET_NNODES", "1:3")]


def test_elastic_everything_set_in_upstreams_order() -> None:
    body = pytorchjob("pt", {"Master": replica(1), "Worker": replica(2)}, elastic={
        "minReplicas": 2, "maxReplicas": 4, "rdzvBackend": "etcd-v2", "rdzvPort": 2379,
        "rdzvHost": "etcd.svc", "rdzvId": "run-1", "maxRestarts": 3, "nProcPerNode": 8,
        "rdzvConf": [{"key": "timeout", "value": "900"}, {"key": "k", "value": "v"}],
        "standalone": True})
    assert env(body, "Worker", 0) == [
        ("PYTHONUNBUFFERED", "1"), ("MASTER_PORT", "23456"), ("PET_MASTER_PORT", "23456"),
        ("MASTER_ADDR", "pt-master-0"), ("PET_MASTER_ADDR", "pt-master-0"),
        ("WORLD_SIZE", "3"), ("RANK", "1"), ("PET_NODE_RANK", "1"),
        ("PET_RDZV_ENDPOINT", "etcd.svc:2379"), ("PET_RDZV_BACKEND", "etcd-v2"),
        ("PET_NNODES", "2:4"), ("PET_MAX_RESTARTS", "3"), ("PET_NPROC_PER_NODE", "8"),
        ("PET_RDZV_ID", "run-1"), ("PET_RDZV_CONF", "timeout=900,k=v"),
        ("PET_STANDALONE", "")]


def test_elastic_edge_cases() -> None:
    """standalone false and an empty rdzvConf add nothing (upstream panics on the empty
    list); without defaults, unset min and max give the Worker replicas."""
    body = pytorchjob("pt", {"Worker": replica(2)},
                      elastic={"standalone": False, "rdzvConf": []})
    assert [n for n, _ in env(body, "Worker", 0)] == [
        "PYTHONUNBUFFERED", "PET_NPROC_PER_NODE", "PET_RDZV_ENDPOINT", "PET_RDZV_BACKEND",
        "PET_NNODES"]
    raw = parse_pytorchjob(pytorchjob("pt", {"Worker": replica(5, port=1)}, elastic={}))
    assert pod_env(raw, "Worker", 0)[-1] == {"name": "PET_NNODES", "value": "5"}


def test_a_missing_port_fails_like_upstream() -> None:
    job = parse_pytorchjob(pytorchjob("pt", {"Master": replica(1), "Worker": replica(1)}))
    with pytest.raises(ValueError, match="port not found"):
        pod_env(job, "Worker", 0)


def test_the_default_init_container() -> None:
    assert InitContainerTemplate().containers("pt-master-0") == [init_container("pt")]
    assert DEFAULT_TEMPLATE.startswith("\n- name: init-pytorch\n")


def test_image_and_tries_are_filled_in() -> None:
    template = InitContainerTemplate(image="busybox:1", max_tries=5)
    assert template.containers("x-master-0") == [init_container("x", tries=5,
                                                                image="busybox:1")]


def test_a_template_file(tmp_path: Path) -> None:
    path = tmp_path / "initContainer.yaml"
    path.write_text("- name: wait\n  image: {{ .InitContainerImage }}\n"
                    "  args: ['{{.MasterAddr}}', '{{.MaxTries}}']\n- name: two\n  image: b\n")
    template = InitContainerTemplate.load(str(path), image="i", max_tries=3)
    assert template.containers("j-master-0") == [
        {"name": "wait", "image": "i", "args": ["j-master-0", "3"]}, {"name": "two", "image": "b"}]
    assert InitContainerTemplate.load(str(tmp_path / "missing.yaml")) == InitContainerTemplate()


def test_values_are_escaped_as_html_template_does() -> None:
    template = InitContainerTemplate(text="- name: a\n  image: \"{{.InitContainerImage}}\"\n",
                                     image="r/i<1>&'")
    assert template.containers("m")[0]["image"] == "r/i&lt;1&gt;&amp;&#39;"


@pytest.mark.parametrize(("text", "problem"), [
    ("- name: {{.Nope}}\n", "unsupported action '{{.Nope}}'"),
    ("{{range .X}}{{end}}", "unsupported action '{{range .X}}'"),
    ("name: x\n", "expected a YAML list of containers"),
    ("- [\n", "while parsing"),
])
def test_bad_templates_are_rejected_when_loaded(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"init container template {path}: .*") as err:
        InitContainerTemplate.load(str(path))
    assert problem in str(err.value)
