"""The pi example (mpi-operator v0.8.2 ``examples/v2beta1/pi/pi.yaml``): every object the Go
operator creates for it, reproduced exactly."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml
from cryptography.hazmat.primitives import serialization

from mpi_controller.mpi.configmap import desired_config_map
from mpi_controller.mpi.launcher import new_launcher_job
from mpi_controller.mpi.secret import SSHKeyPair, new_ssh_auth_secret
from mpi_controller.mpi.service import new_job_service
from mpi_controller.mpi.worker import new_worker
from tests.unit.mpi.conftest import GOLDEN, pi_job


def test_first_sync_objects_match_the_worked_example() -> None:
    """mpi-operator v0.8.2, first sync of `pi`: Service, ConfigMap, worker pods 0 and 1 and the
    launcher Job are exactly the Go operator's (the Secret is checked separately)."""
    job = pi_job()
    built = [
        new_job_service(job),
        desired_config_map(job, []),
        new_worker(job, 0),
        new_worker(job, 1),
        new_launcher_job(job),
    ]
    expected = list(yaml.safe_load_all(Path(GOLDEN / "worked_example_2_7.yaml").read_text()))
    assert built == expected


def test_ssh_secret_of_the_worked_example(ssh_key: SSHKeyPair) -> None:
    """newSSHAuthSecret: `pi-ssh`, type kubernetes.io/ssh-auth, an EC P-521 PEM private key and
    its OpenSSH `ecdsa-sha2-nistp521` public line with a trailing newline."""
    secret = new_ssh_auth_secret(pi_job(), key=ssh_key)
    assert secret["metadata"] == {
        "name": "pi-ssh",
        "namespace": "default",
        "labels": {"app": "pi"},
        "ownerReferences": [
            {
                "apiVersion": "kubeflow.org/v2beta1",
                "kind": "MPIJob",
                "name": "pi",
                "uid": "U",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert secret["type"] == "kubernetes.io/ssh-auth"
    assert sorted(secret["data"]) == ["ssh-privatekey", "ssh-publickey"]
    private = base64.b64decode(secret["data"]["ssh-privatekey"])
    public = base64.b64decode(secret["data"]["ssh-publickey"])
    assert private.startswith(b"-----BEGIN EC PRIVATE KEY-----\n")
    assert public.startswith(b"ecdsa-sha2-nistp521 AAAA")
    assert public.endswith(b"\n")
    key = serialization.load_pem_private_key(private, password=None)
    derived = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert derived + b"\n" == public


def test_generated_keys_are_fresh_and_p521() -> None:
    """Without `key=`, each Secret gets a new ECDSA P-521 key (upstream generates per Secret)."""
    first = new_ssh_auth_secret(pi_job())["data"]["ssh-privatekey"]
    second = new_ssh_auth_secret(pi_job())["data"]["ssh-privatekey"]
    assert first != second
    key = serialization.load_pem_private_key(base64.b64decode(first), password=None)
    assert key.key_size == 521  # type: ignore[union-attr]
