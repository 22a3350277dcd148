"""The environment a kind's cluster spec gives a pod (upstream's ``setPodEnv`` of PyTorchJob,
XGBoostJob, PaddleJob, JAXJob), pure:

* :func:`env_var`: one variable ``{name, value}``, the value as text (``str(value)``);
* :func:`add_pod_env`: a list of variables appended to the ``env`` of **every** container of a
  pod template (init containers excepted), after those the template sets (one the template
  already sets is not replaced: upstream's follows it); each container gets its own copies
  (``valueFrom`` included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpi_controller.kube.jsonvalue import as_list, as_record, json_copy

__all__ = ["add_pod_env", "env_var"]


def env_var(name: str, value: object) -> dict[str, str]:
    """``{"name": name, "value": str(value)}``."""
    return {"name": name, "value": str(value)}


def add_pod_env(template: dict[str, Any], env: Sequence[Mapping[str, Any]]) -> None:
    """Append ``env`` to the env of every container of the pod template (in place)."""
    for container in as_list(as_record(template.get("spec")).get("containers")):
        if isinstance(container, dict):
            container["env"] = [*as_list(container.get("env")), *(json_copy(dict(v)) for v in env)]
