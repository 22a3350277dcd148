"""Names, labels and host names of the objects that belong to an MPIJob (upstream constants).

* Service ``<job>``, ConfigMap ``<job>-config``, Secret ``<job>-ssh``, PodGroup ``<job>``,
  launcher Job ``<job>-launcher``, worker pods ``<job>-worker-<i>``.
* Pods carry ``training.kubeflow.org/{operator-name,job-name,job-role}``; workers also
  ``training.kubeflow.org/replica-index``.
* Host FQDN: ``<host>.<job>.<ns>.svc`` plus ``.<cluster-domain>`` when one is given.
"""

from __future__ import annotations

from collections.abc import Mapping

from mpi_controller.api import constants as c

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
    "default_labels",
    "host_fqdn",
    "launcher_name",
    "matches_labels",
    "pod_group_name",
    "service_name",
    "ssh_secret_name",
    "worker_name",
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
        c.OPERATOR_NAME_LABEL: c.OPERATOR_NAME,
        c.JOB_NAME_LABEL: job_name,
        c.JOB_ROLE_LABEL: role,
    }


def worker_selector(job_name: str) -> dict[str, str]:
    """The equality label selector of an MPIJob's worker pods."""
    return default_labels(job_name, c.ROLE_WORKER)


def matches_labels(obj: Mapping[str, object], selector: Mapping[str, str]) -> bool:
    """True if ``obj``'s ``metadata.labels`` contain every ``selector`` pair."""
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if not isinstance(labels, Mapping):
        return not selector
    return all(labels.get(k) == v for k, v in selector.items())


def host_fqdn(host: str, job_name: str, namespace: str, cluster_domain: str = "") -> str:
    """``<host>.<job>.<ns>.svc`` (``.<cluster_domain>`` appended when non-empty)."""
    fqdn = f"{host}.{job_name}.{namespace}.svc"
    return f"{fqdn}.{cluster_domain}" if cluster_domain else fqdn
