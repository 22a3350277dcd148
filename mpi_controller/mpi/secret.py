"""The SSH Secret ``<job>-ssh`` (type ``kubernetes.io/ssh-auth``).

``ssh-privatekey`` is the PEM ``EC PRIVATE KEY`` (SEC1) of an ECDSA P-521 key and
``ssh-publickey`` its OpenSSH ``authorized_keys`` line (``ecdsa-sha2-nistp521 AAAA...\\n``),
as upstream ``newSSHAuthSecret`` generates them. Key generation is the only impure step:
pass ``key=`` (see :func:`ssh_key_pair_from_private_key`) for deterministic output.

On reconcile the Secret is regenerated only when its *key names* differ from
``[ssh-privatekey, ssh-publickey]`` (values are never compared).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mpi_controller.kube.jsonvalue import as_dict, json_copy
from mpi_controller.mpi import naming
from mpi_controller.mpi.v2beta1.types import parse_mpi_job

if TYPE_CHECKING:  # cryptography's bindings cost ~8 MB of RSS: imported when a key is made
    from cryptography.hazmat.primitives.asymmetric import ec

__all__ = [
    "SSH_AUTH_SECRET_TYPE",
    "SSHKeyPair",
    "generate_ssh_key_pair",
    "new_ssh_auth_secret",
    "ssh_key_pair_from_private_key",
    "ssh_secret_needs_update",
    "update_ssh_auth_secret",
]

SSH_AUTH_SECRET_TYPE = "kubernetes.io/ssh-auth"


@dataclass(frozen=True)
class SSHKeyPair:
    """A PEM private key and the matching OpenSSH public key line (both bytes)."""

    private_pem: bytes
    public_openssh: bytes


def ssh_key_pair_from_private_key(key: ec.EllipticCurvePrivateKey) -> SSHKeyPair:
    """Serialize ``key`` the way upstream does (SEC1 PEM, OpenSSH public line + newline)."""
    from cryptography.hazmat.primitives import serialization

    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return SSHKeyPair(private, public + b"\n")


def generate_ssh_key_pair() -> SSHKeyPair:
    """A fresh ECDSA P-521 key pair (impure: uses the OS random source)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    return ssh_key_pair_from_private_key(ec.generate_private_key(ec.SECP521R1()))


def _secret_data(key: SSHKeyPair) -> dict[str, str]:
    return {
        naming.SSH_PRIVATE_KEY: base64.b64encode(key.private_pem).decode(),
        naming.SSH_PUBLIC_KEY: base64.b64encode(key.public_openssh).decode(),
    }


def new_ssh_auth_secret(job: Mapping[str, Any], *, key: SSHKeyPair | None = None) -> dict[str, Any]:
    """The Secret for ``job``; ``data`` values are base64 as the API expects."""
    view = parse_mpi_job(job)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": naming.ssh_secret_name(view.name),
            "namespace": view.namespace,
            "labels": {"app": view.name},
            "ownerReferences": [naming.controller_ref(job)],
        },
        "type": SSH_AUTH_SECRET_TYPE,
        "data": _secret_data(key or generate_ssh_key_pair()),
    }


def ssh_secret_needs_update(existing: Mapping[str, Any]) -> bool:
    """True if the sorted key names of ``existing.data`` are not exactly the two SSH keys."""
    expected = sorted((naming.SSH_PRIVATE_KEY, naming.SSH_PUBLIC_KEY))
    return sorted(as_dict(existing.get("data"))) != expected


def update_ssh_auth_secret(
    existing: Mapping[str, Any], *, key: SSHKeyPair | None = None
) -> dict[str, Any]:
    """A copy of ``existing`` whose ``data`` is a newly generated pair (or ``key``)."""
    out = json_copy(dict(existing))
    out["data"] = _secret_data(key or generate_ssh_key_pair())
    return out
