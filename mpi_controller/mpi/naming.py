"""Names, labels and host names of the objects that belong to an MPIJob (upstream constants).

* Service ``<job>``, ConfigMap ``<job>-config``, Secret ``<job>-ssh``, PodGroup ``<job>``,
  launcher Job ``<job>-launcher``, worker pods ``<job>-worker-<i>``.
* Pods carry ``training.kubeflow.org/{operator-name,job-name,job-role}``; workers also
  ``training.kubeflow.org/replica-index``.
* Host FQDN: ``<host>.<job>.<ns>.svc`` plus ``.<cluster-domain>`` when one is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from mpi_controller.kube import owners
from mpi_controller.kube.jsonvalue import as_record, as_str
from mpi_controller.kube.selectors import Selector, parse_selector
from mpi_controller.mpi import constants

__all__ = [
    "CONFIG_MOUNT_PATH",
    "CONFIG_SUFFIX",
    "CONFIG_VOLUME_NAME",
    "DISCOVER_HOSTS_SCRIPT_NAME",
    "HOSTFILE_NAME",
    "LAUNCHER_SUFFIX",
    "ROOT_SSH_PATH",
    "SSH_AUTHORIZED_KEYS_FILE",
    "SSH_AUTH_SECRET_SUFFIX",
    "SSH_AUTH_VOLUME",
    "SSH_PRIVATE_KEY",
    "SSH_PRIVATE_KEY_FILE",
    "SSH_PUBLIC_KEY",
    "SSH_PUBLIC_KEY_FILE",
    "WORKER_SUFFIX",
    "config_map_name",
    "controller_ref",
    "default_labels",
    "host_fqdn",
    "launcher_name",
    "pod_group_name",
    "service_name",
    "ssh_secret_name",
    "worker_name",
    "worker_pods",
    "worker_selector",
]

CONFIG_SUFFIX = "-config"
CONFIG_VOLUME_NAME = "mpi-job-config"
CONFIG_MOUNT_PATH = "/etc/mpi"
HOSTFILE_NAME = "hostfile"
DISCOVER_HOSTS_SCRIPT_NAME = "discover_hosts.sh"
SSH_AUTH_SECRET_SUFFIX = "-ssh"
SSH_AUTH_VOLUME = "ssh-auth"
ROOT_SSH_PATH = "/root/.ssh"
LAUNCHER_SUFFIX = "-launcher"
WORKER_SUFFIX = "-worker"
SSH_PRIVATE_KEY = "ssh-privatekey"  # corev1.SSHAuthPrivateKey
SSH_PUBLIC_KEY = "ssh-publickey"
SSH_PRIVATE_KEY_FILE = "id_rsa"
SSH_PUBLIC_KEY_FILE = "id_rsa.pub"
SSH_AUTHORIZED_KEYS_FILE = "authorized_keys"


def service_name(job_name: str) -> str:
    return job_name


def pod_group_name(job_name: str) -> str:
    return job_name


def config_map_name(job_name: str) -> str:
    return job_name + CONFIG_SUFFIX


def ssh_secret_name(job_name: str) -> str:
    return job_name + SSH_AUTH_SECRET_SUFFIX


def launcher_name(job_name: str) -> str:
    return job_name + LAUNCHER_SUFFIX


def worker_name(job_name: str, index: int) -> str:
    return f"{job_name}{WORKER_SUFFIX}-{index}"


def default_labels(job_name: str, role: str) -> dict[str, str]:
    """The labels every launcher/worker pod carries (``role`` is ``launcher`` or ``worker``)."""
    return {
        constants.OPERATOR_NAME_LABEL: constants.OPERATOR_NAME,
        constants.JOB_NAME_LABEL: job_name,
        constants.JOB_ROLE_LABEL: role,
    }


def worker_selector(job_name: str) -> dict[str, str]:
    """The equality label selector of an MPIJob's worker pods."""
    return default_labels(job_name, constants.ROLE_WORKER)


def host_fqdn(host: str, job_name: str, namespace: str, cluster_domain: str = "") -> str:
    """``<host>.<job>.<ns>.svc`` (``.<cluster_domain>`` appended when non-empty)."""
    fqdn = f"{host}.{job_name}.{namespace}.svc"
    return f"{fqdn}.{cluster_domain}" if cluster_domain else fqdn


def controller_ref(job: Mapping[str, Any]) -> dict[str, Any]:
    """The controller reference every child carries to its MPIJob (``kubeflow.org/v2beta1``)."""
    return owners.controller_ref(job, api_version=constants.API_VERSION, kind=constants.KIND)


def worker_pods(
    job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The pods of ``pods`` that match ``job``'s worker selector (operator-name, job-name,
    role worker)."""
    selector = _worker_selector(as_str(as_record(job.get("metadata")).get("name")))
    return [pod for pod in pods if selector.matches_object(pod)]


@lru_cache(maxsize=1024)
def _worker_selector(job_name: str) -> Selector:
    """:func:`worker_selector` parsed (a frozen :class:`Selector`, shared)."""
    return parse_selector(worker_selector(job_name))
