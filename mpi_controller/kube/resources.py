"""Where a kind of object lives in the API (:class:`Resource`), and the built-in resources the
controller reads and writes. Pure: no I/O.

A :class:`Resource` names ``/api[s]/{group}/{version}/[namespaces/{ns}/]{plural}``; the
runtime's clients, informers and the in-memory API take one for every request. Job kinds name
their own (``MPIJOBS``, a PyTorchJob's HPA) beside their code.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CONFIGMAPS",
    "EVENTS",
    "JOBS",
    "LEASES",
    "NAMESPACES",
    "PODS",
    "PRIORITY_CLASSES",
    "ROLES",
    "ROLE_BINDINGS",
    "SECRETS",
    "SERVICES",
    "SERVICE_ACCOUNTS",
    "STATEFUL_SETS",
    "Resource",
]


@dataclass(frozen=True, slots=True)
class Resource:
    """Where a kind of object lives in the API: ``/api[s]/{group}/{version}/.../{plural}``."""

    group: str
    version: str
    plural: str
    namespaced: bool = True
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``plural.group`` as the API server names it in messages (``pods`` for core)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            if not name:
                raise ValueError(f"empty name for {self.group_resource}")
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


PODS = Resource("", "v1", "pods", kind="Pod")
SERVICES = Resource("", "v1", "services", kind="Service")
CONFIGMAPS = Resource("", "v1", "configmaps", kind="ConfigMap")
SECRETS = Resource("", "v1", "secrets", kind="Secret")
EVENTS = Resource("", "v1", "events", kind="Event")
NAMESPACES = Resource("", "v1", "namespaces", namespaced=False, kind="Namespace")
LEASES = Resource("coordination.k8s.io", "v1", "leases", kind="Lease")
JOBS = Resource("batch", "v1", "jobs", kind="Job")
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", kind="ServiceAccount")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", kind="Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", kind="RoleBinding")
STATEFUL_SETS = Resource("apps", "v1", "statefulsets", kind="StatefulSet")
PRIORITY_CLASSES = Resource(
    "scheduling.k8s.io", "v1", "priorityclasses", namespaced=False, kind="PriorityClass"
)
