"""The MPI ML policy (Trainer v2.3.0 ``pkg/runtime/framework/plugins/mpi/mpi.go``) and the pod
network of the JobSet plugin (``plugins/jobset/jobset.go`` ``IdentifyPodNetwork``) its hostfile
lists. DeepSpeed and MLX run on it.

:func:`enforce_mpi`, on a runtime with ``mlPolicy.mpi``:

* the pod set named ``node`` gets the TrainJob's ``trainer.numNodes`` pods, one less (at least
  1) when the launcher is a node too (``runLauncherAsNode``);
* slots per node: the TrainJob's ``trainer.numProcPerNode``, else the policy's, which, when 1,
  becomes the GPUs per node if more than one;
* the pod sets ``node`` and ``launcher`` get the volume ``mpi-ssh-auth`` (the Secret
  ``<trainjob>-mpi-ssh-auth``: ``id_rsa`` 0640, ``id_rsa.pub`` and ``authorized_keys`` 0644,
  default mode 0400) mounted at ``sshAuthMountPath`` in their ``node`` container; the
  launcher also the volume ``mpi-hostfile`` (the ConfigMap ``<trainjob>-mpi-hostfile``, key
  ``hostfile``, 0444) at ``/etc/mpi`` and, for OpenMPI, ``OMPI_MCA_orte_default_hostfile``,
  ``OMPI_MCA_orte_keep_fqdn_hostnames``, ``OMPI_MCA_orte_set_default_slots`` and
  ``OMPI_MCA_plm_rsh_args``. Another implementation is an error.

:func:`hostfile_configmap`: one ``<endpoint> slots=<n>`` line per pod of the ``node`` pod set
(and of the launcher's when it is a node), in the template's order; an endpoint is
``<trainjob>-<job>-<replica>-<pod>.<subdomain>`` (the subdomain: the JobSet's
``network.subdomain``, else the TrainJob's name). :func:`ssh_auth_secret`: an immutable
``kubernetes.io/ssh-auth`` Secret with a fresh ECDSA P-521 key (SEC1 PEM and its
``authorized_keys`` line), made once.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mpi_controller.trainjob import constants
from mpi_controller.trainjob.apply import upsert_env, upsert_volume_mounts, upsert_volumes
from mpi_controller.trainjob.info import PodSet, RuntimeInfo
from mpi_controller.trainjob.torch import gpus_per_node, node_resources

if TYPE_CHECKING:  # cryptography's bindings cost ~8 MB of RSS: imported when a key is made
    from cryptography.hazmat.primitives.asymmetric import ec

__all__ = ["HOSTFILE_SUFFIX", "LAUNCHER", "SSH_SUFFIX", "endpoints", "enforce_mpi",
           "hostfile_configmap", "owner_reference", "ssh_auth_secret"]

LAUNCHER = "launcher"
SSH_SUFFIX = "-mpi-ssh-auth"
SSH_VOLUME = "mpi-ssh-auth"
HOSTFILE_SUFFIX = "-mpi-hostfile"
HOSTFILE_VOLUME = "mpi-hostfile"
HOSTFILE_DIR = "/etc/mpi"
HOSTFILE = "hostfile"
Obj = dict[str, Any]


def _policy(info: RuntimeInfo) -> Obj | None:
    policy: Obj | None = (info.ml_policy or {}).get("mpi")
    return policy


def enforce_mpi(info: RuntimeInfo, trainjob: Mapping[str, Any]) -> None:
    """Apply the MPI policy to ``info`` (module doc); changes ``info.ml_policy``'s slots."""
    policy = _policy(info)
    if policy is None:
        return
    name = trainjob["metadata"]["name"]
    trainer = (trainjob.get("spec") or {}).get("trainer")
    launcher_node = bool(policy.get("runLauncherAsNode"))
    node_set = info.by_name(constants.NODE)
    if trainer and trainer.get("numNodes") is not None and node_set is not None:
        nodes = int(trainer["numNodes"])
        node_set.count = max(nodes - 1, 1) if launcher_node else nodes
    if trainer and trainer.get("numProcPerNode") is not None:
        policy["numProcPerNode"] = trainer["numProcPerNode"]
    elif policy.get("numProcPerNode", 1) == 1:
        resources = node_resources(info) or {}
        if trainer and trainer.get("resourcesPerNode") is not None:
            resources = trainer["resourcesPerNode"]
        if gpus_per_node(resources) > 1:
            policy["numProcPerNode"] = gpus_per_node(resources)
    for pod_set in info.pod_sets:
        if pod_set.name not in (constants.NODE, LAUNCHER):
            continue
        _volumes(pod_set, name, launcher=pod_set.name == LAUNCHER)
        for container in pod_set.containers:
            if container.get("name") != constants.NODE:
                continue
            upsert_volume_mounts(container.setdefault("volumeMounts", []), [
                {"name": SSH_VOLUME, "mountPath": policy.get("sshAuthMountPath", "/root/.ssh")}])
            if pod_set.name == LAUNCHER:
                _launcher_container(container, policy)


def _volumes(pod_set: PodSet, name: str, *, launcher: bool) -> None:
    upsert_volumes(pod_set.volumes, [{"name": SSH_VOLUME, "secret": {
        "secretName": f"{name}{SSH_SUFFIX}", "defaultMode": 0o400, "items": [
            {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
            {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
            {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644}]}}])
    if launcher:
        upsert_volumes(pod_set.volumes, [{"name": HOSTFILE_VOLUME, "configMap": {
            "name": f"{name}{HOSTFILE_SUFFIX}",
            "items": [{"key": HOSTFILE, "path": HOSTFILE, "mode": 0o444}]}}])


def _launcher_container(container: Obj, policy: Mapping[str, Any]) -> None:
    upsert_volume_mounts(container.setdefault("volumeMounts", []),
                         [{"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR}])
    implementation = policy.get("mpiImplementation", "OpenMPI")
    if implementation != "OpenMPI":
        raise ValueError(f"MPI implementation for {implementation!r} doesn't supported")
    upsert_env(container.setdefault("env", []), [
        {"name": "OMPI_MCA_orte_default_hostfile", "value": f"{HOSTFILE_DIR}/{HOSTFILE}"},
        {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
        {"name": "OMPI_MCA_orte_set_default_slots",
         "value": str(policy.get("numProcPerNode", 1))},
        {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
    ])


def endpoints(info: RuntimeInfo, trainjob: Mapping[str, Any], pod_set: PodSet) -> Iterator[str]:
    """The pods' DNS names of ``pod_set`` (``IdentifyPodNetwork``)."""
    name = trainjob["metadata"]["name"]
    subdomain = (info.spec.get("network") or {}).get("subdomain") or name
    rjob: Mapping[str, Any] = next((r for r in info.spec.get("replicatedJobs") or []
                                    if r.get("name") == pod_set.name), {})
    for replica in range(int(rjob.get("replicas", 1))):
        for pod in range(pod_set.count):
            yield f"{name}-{pod_set.name}-{replica}-{pod}.{subdomain}"


def owner_reference(trainjob: Mapping[str, Any]) -> Obj:
    meta = trainjob["metadata"]
    return {"apiVersion": f"{constants.GROUP}/{constants.VERSION}", "kind": constants.KIND,
            "name": meta["name"], "uid": meta.get("uid", ""), "controller": True,
            "blockOwnerDeletion": True}


def hostfile_configmap(info: RuntimeInfo, trainjob: Mapping[str, Any]) -> Obj:
    """The hostfile ConfigMap (module doc); call after :func:`enforce_mpi`."""
    policy = _policy(info) or {}
    launcher_node = bool(policy.get("runLauncherAsNode"))
    slots = policy.get("numProcPerNode", 1)
    lines = [f"{endpoint} slots={slots}\n"
             for pod_set in info.pod_sets
             if pod_set.name == constants.NODE or (launcher_node and pod_set.name == LAUNCHER)
             for endpoint in endpoints(info, trainjob, pod_set)]
    meta = trainjob["metadata"]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{meta['name']}{HOSTFILE_SUFFIX}",
                         "namespace": meta.get("namespace", ""),
                         "ownerReferences": [owner_reference(trainjob)]},
            "data": {HOSTFILE: "".join(lines)}}


def ssh_auth_secret(trainjob: Mapping[str, Any],
                    key: ec.EllipticCurvePrivateKey | None = None) -> Obj:
    """The SSH Secret (module doc); ``key`` for a deterministic one (tests)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = key or ec.generate_private_key(ec.SECP521R1())
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH) + b"\n"
    meta = trainjob["metadata"]
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": f"{meta['name']}{SSH_SUFFIX}",
                         "namespace": meta.get("namespace", ""),
                         "ownerReferences": [owner_reference(trainjob)]},
            "type": "kubernetes.io/ssh-auth", "immutable": True,
            "data": {"ssh-privatekey": base64.b64encode(private).decode(),
                     "ssh-publickey": base64.b64encode(public).decode()}}
