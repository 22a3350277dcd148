"""The init container of PyTorchJob workers (training-operator v1.9 ``initcontainer.go``).

Only a Worker pod of a job with a Master gets it: it waits until the Master's Service name
(``<job>-master-0``) resolves. Upstream renders a YAML list of containers from a Go template
with three fields, ``{{.MasterAddr}}``, ``{{.InitContainerImage}}`` (``--pytorch-init-container-
image``, default ``alpine:3.10``) and ``{{.MaxTries}}`` (``--pytorch-init-container-max-tries``,
default 100), and appends the containers to the pod's init containers. The default template
(:data:`DEFAULT_TEMPLATE`) gives::

    - name: init-pytorch
      image: alpine:3.10
      imagePullPolicy: IfNotPresent
      resources: {limits: {cpu: 100m, memory: 20Mi}, requests: {cpu: 50m, memory: 10Mi}}
      command: ['sh', '-c', 'err=1;for i in $(seq 100); do if nslookup <job>-master-0; then
                err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err']

``--pytorch-init-container-template-file`` (default ``/etc/config/initContainer.yaml``) replaces
the template when the file can be read (else the default is used, as upstream does).
:class:`InitContainerTemplate` supports the template's field references (``{{.Field}}``, with
optional spaces); values are escaped as Go's ``html/template`` escapes text (``&``, ``'``,
``<``, ``>``, ``"``, ``+``), which upstream uses. A template with other actions, unknown fields
or a result that is not a list of containers is rejected when it is loaded (:class:`ValueError`
naming the file), not at each pod.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mpi_controller.kube.jsonvalue import as_dict, as_list
from mpi_controller.pytorch.constants import (
    DEFAULT_INIT_CONTAINER_IMAGE,
    DEFAULT_INIT_CONTAINER_MAX_TRIES,
)

__all__ = ["DEFAULT_TEMPLATE", "InitContainerTemplate", "add_init_containers"]

DEFAULT_TEMPLATE = """
- name: init-pytorch
  image: {{.InitContainerImage}}
  imagePullPolicy: IfNotPresent
  resources:
    limits:
      cpu: 100m
      memory: 20Mi
    requests:
      cpu: 50m
      memory: 10Mi
  command: ['sh', '-c', 'err=1;for i in $(seq {{.MaxTries}}); do if nslookup {{.MasterAddr}}; \
then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err']"""

_ACTION = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_FIELD = re.compile(r"\s*\.(\w+)\s*")
FIELDS = ("MasterAddr", "InitContainerImage", "MaxTries")
_HTML_ESCAPES = {"\0": "\ufffd", '"': "&#34;", "&": "&amp;", "'": "&#39;", "+": "&#43;",
                 "<": "&lt;", ">": "&gt;"}


def _escape(value: str) -> str:
    return "".join(_HTML_ESCAPES.get(ch, ch) for ch in value)


@dataclass(frozen=True)
class InitContainerTemplate:
    """A checked template with the image and try count filled in at load time."""

    text: str = DEFAULT_TEMPLATE
    image: str = DEFAULT_INIT_CONTAINER_IMAGE
    max_tries: int = DEFAULT_INIT_CONTAINER_MAX_TRIES
    source: str = "the default template"

    def __post_init__(self) -> None:
        for match in _ACTION.finditer(self.text):
            field = _FIELD.fullmatch(match.group(1))
            if field is None or field.group(1) not in FIELDS:
                raise ValueError(
                    f"init container template {self.source}: unsupported action "
                    f"{match.group(0)!r} (supported: "
                    f"{', '.join('{{.' + f + '}}' for f in FIELDS)})")
        self.containers("check-master-0")

    @classmethod
    def load(cls, path: str, *, image: str = DEFAULT_INIT_CONTAINER_IMAGE,
             max_tries: int = DEFAULT_INIT_CONTAINER_MAX_TRIES) -> InitContainerTemplate:
        """The template in ``path`` when it can be read, else the default one."""
        try:
            text = Path(path).read_text() if path else None
        except (OSError, UnicodeDecodeError):
            text = None
        if text is None:
            return cls(image=image, max_tries=max_tries)
        return cls(text=text, image=image, max_tries=max_tries, source=path)

    def render(self, master_addr: str) -> str:
        values = {"MasterAddr": master_addr, "InitContainerImage": self.image,
                  "MaxTries": str(self.max_tries)}

        def substitute(match: re.Match[str]) -> str:
            field = _FIELD.fullmatch(match.group(1))
            assert field is not None
            return _escape(values[field.group(1)])

        return _ACTION.sub(substitute, self.text)

    def containers(self, master_addr: str) -> list[dict[str, Any]]:
        """The init containers for a worker of the job whose Master is ``master_addr``."""
        try:
            parsed = yaml.safe_load(self.render(master_addr))
        except yaml.YAMLError as err:
            raise ValueError(f"init container template {self.source}: {err}") from err
        if parsed is None:
            return []
        if not isinstance(parsed, list) or not all(isinstance(c, dict) for c in parsed):
            raise ValueError(f"init container template {self.source}: expected a YAML list "
                             "of containers")
        return parsed


def add_init_containers(template: dict[str, Any], containers: list[dict[str, Any]]) -> None:
    """Append ``containers`` to the pod template's init containers (in place)."""
    spec = as_dict(template.get("spec"))
    spec["initContainers"] = [*as_list(spec.get("initContainers")), *containers]
