"""A stand-in for the API client that start-up probes the CRDs with
(``mpi_controller.app._schemes_to_run``): lists succeed for the installed plurals, 404
otherwise, and every listed group-resource is recorded."""

from __future__ import annotations

import asyncio
from typing import Any

from mpi_controller import app
from mpi_controller.kube.resources import Resource
from mpi_controller.options import ServerOptions
from mpi_controller.runtime.errors import ApiError


class CrdProbeClient:
    """Lists succeed for the plurals in ``installed``, answer 404 otherwise; ``listed`` holds
    the group-resources asked for, in order."""

    def __init__(self, *installed: str) -> None:
        self.installed = installed
        self.listed: list[str] = []

    async def list(self, resource: Resource, **_: Any) -> dict[str, Any]:
        self.listed.append(resource.group_resource)
        if resource.plural not in self.installed:
            raise ApiError(404, "NotFound")
        return {"items": []}


def schemes_to_run(client: CrdProbeClient, *enabled: str) -> list[str] | None:
    """The kinds start-up would run with ``--enable-scheme`` ``enabled`` against ``client``."""
    opts = ServerOptions(enabled_schemes=enabled)
    return asyncio.run(app._schemes_to_run(client, opts))  # type: ignore[arg-type]
