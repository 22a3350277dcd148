"""validate, set_defaults and every builder never raise on arbitrary, malformed MPIJobs, but for
the one refusal: a job without ``metadata.namespace`` or ``metadata.uid`` (a ValueError naming
the field; the API server never returns one)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpi_controller.kube.owners import require_identity
from mpi_controller.mpi.children import initial_children
from mpi_controller.mpi.configmap import desired_config_map
from mpi_controller.mpi.decisions import plan_worker_cleanup, plan_worker_scale_down
from mpi_controller.mpi.gang import new_pod_group
from mpi_controller.mpi.launcher import new_launcher_job
from mpi_controller.mpi.secret import SSHKeyPair, new_ssh_auth_secret
from mpi_controller.mpi.service import new_job_service
from mpi_controller.mpi.status import update_mpi_job_status
from mpi_controller.mpi.v2beta1.defaults import set_defaults
from mpi_controller.mpi.v2beta1.validation import validate
from mpi_controller.mpi.worker import new_worker
from tests.unit.mpi.conftest import NOW, PI_JOB

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.sampled_from(["OpenMPI", "Intel", "MPICH", "Never", "1Gi", "All"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "containers",
                    "replicas",
                    "template",
                    "Worker",
                    "metadata",
                    "labels",
                    "resources",
                    "limits",
                    "env",
                    "x",
                ]
            ),
            children,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


def _mutations(base: dict[str, Any]) -> st.SearchStrategy[Any]:
    paths = st.lists(
        st.sampled_from(
            [
                "spec",
                "runPolicy",
                "mpiReplicaSpecs",
                "Launcher",
                "Worker",
                "template",
                "metadata",
                "containers",
                "slotsPerWorker",
                "replicas",
                "name",
                "schedulingPolicy",
                "minResources",
                "resources",
                "0",
                "env",
            ]
        ),
        min_size=1,
        max_size=5,
    )

    def mutate(path: list[str], value: Any) -> Any:
        import copy

        job: Any = copy.deepcopy(base)
        node = job
        for key in path[:-1]:
            if isinstance(node, dict):
                node = node.setdefault(key, {})
            elif isinstance(node, list) and node:
                node = node[0]
            else:
                break
        if isinstance(node, dict):
            node[path[-1]] = value
        return job

    return st.one_of(json_values, st.builds(mutate, paths, json_values))


def _exercise(job: Any) -> None:
    validate(job)
    defaulted = set_defaults(job)
    validate(defaulted)
    if not isinstance(defaulted, dict):
        return
    try:
        require_identity(defaulted)
    except ValueError as missing:
        for build in (new_job_service, lambda job: new_worker(job, 0), initial_children):
            with pytest.raises(ValueError, match=str(missing).replace(".", r"\.")):
                build(defaulted)
        return
    initial_children(defaulted, gang_scheduling="volcano", running_workers=1)
    new_job_service(defaulted)
    desired_config_map(defaulted, [defaulted, {"metadata": 1}], cluster_domain="c")
    new_ssh_auth_secret(defaulted, key=_KEY)
    for gang in ("volcano", "sp"):
        new_pod_group(defaulted, gang_scheduling=gang, priority_classes={"a": 1})
        new_worker(defaulted, 0, gang_scheduling=gang)
        new_launcher_job(defaulted, gang_scheduling=gang)
    plan_worker_scale_down(defaulted, [defaulted])
    plan_worker_cleanup(defaulted, {"pi-worker-0": defaulted})
    update_mpi_job_status(
        defaulted, launcher=defaulted, launcher_pods=[defaulted], workers=[defaulted], now=NOW
    )



_KEY = SSHKeyPair(b"private", b"public\n")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations(PI_JOB))
def test_never_raises_on_malformed_mpijobs(job: Any) -> None:
    """Bad input never takes the controller down: validation reports, builders cope."""
    _exercise(job)
