"""The environment the kinds' cluster specs add (``engine/training/env.py``): upstream's
``setPodEnv`` appends to every container of the pod, after the template's own variables, never
to init containers, and each container gets its own copy."""

from __future__ import annotations

from typing import Any

from mpi_controller.engine.training.env import add_pod_env, env_var


def test_a_variable_is_its_name_and_its_value_as_text() -> None:
    assert env_var("WORLD_SIZE", 3) == {"name": "WORLD_SIZE", "value": "3"}
    assert env_var("PET_STANDALONE", "") == {"name": "PET_STANDALONE", "value": ""}


def test_every_container_gets_the_variables_after_its_own() -> None:
    template: dict[str, Any] = {"spec": {
        "initContainers": [{"name": "init"}],
        "containers": [{"name": "side", "env": [env_var("A", "0")]}, {"name": "main"},
                       "not a container"]}}
    add_pod_env(template, [env_var("A", 1), env_var("B", 2)])
    assert template["spec"] == {
        "initContainers": [{"name": "init"}],
        "containers": [{"name": "side", "env": [env_var("A", "0"), env_var("A", "1"),
                                                env_var("B", "2")]},
                       {"name": "main", "env": [env_var("A", "1"), env_var("B", "2")]},
                       "not a container"]}


def test_each_container_gets_its_own_copy_of_each_variable() -> None:
    variables = [{"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    template: dict[str, Any] = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
    add_pod_env(template, variables)
    first, second = (c["env"][0] for c in template["spec"]["containers"])
    assert first == second == variables[0]
    assert first is not second
    assert first is not variables[0]
    assert first["valueFrom"] is not second["valueFrom"]
    assert first["valueFrom"] is not variables[0]["valueFrom"]


def test_a_template_without_containers_is_left_alone() -> None:
    templates: list[dict[str, Any]] = [{}, {"spec": {}}, {"spec": {"containers": None}}]
    for template in templates:
        before = dict(template)
        add_pod_env(template, [env_var("A", 1)])
        assert template == before
