"""TF_CONFIG (training-operator v1.9 tensorflow.go, with its own tests' exact strings)."""

from __future__ import annotations

import json

from mpi_controller.tensorflow import is_distributed, parse_tfjob, set_defaults, tf_config
from tests.tfjobs import replica, tfjob


def test_dense_includes_the_evaluator_with_sorted_keys() -> None:
    """Upstream's TestClusterSpec string, byte for byte."""
    job = parse_tfjob(set_defaults({**tfjob("test-tfjob", {
        "Worker": replica(1), "PS": replica(1), "Evaluator": replica(1)}),
        "metadata": {"name": "test-tfjob", "namespace": "ns3"}}))
    assert tf_config(job, "Worker", 0) == (
        '{"cluster":{"evaluator":["test-tfjob-evaluator-0.ns3.svc:2222"],'
        '"ps":["test-tfjob-ps-0.ns3.svc:2222"],"worker":["test-tfjob-worker-0.ns3.svc:2222"]},'
        '"task":{"type":"worker","index":0},"environment":"cloud"}')


def test_ports_per_type_chief_and_cluster_domain() -> None:
    job = parse_tfjob(set_defaults({**tfjob("j", {
        "Chief": replica(1, port=1000), "Worker": replica(2)}),
        "metadata": {"name": "j", "namespace": "n"}}))
    assert json.loads(tf_config(job, "Chief", 0, "cluster.local") or "") == {
        "cluster": {"chief": ["j-chief-0.n.svc.cluster.local:1000"],
                    "worker": ["j-worker-0.n.svc.cluster.local:2222",
                               "j-worker-1.n.svc.cluster.local:2222"]},
        "task": {"type": "chief", "index": 0}, "environment": "cloud"}


def test_a_single_replica_job_is_not_distributed() -> None:
    single = parse_tfjob(set_defaults(tfjob("j", {"Worker": replica(None)})))
    assert not is_distributed(single)
    assert tf_config(single, "Worker", 0) is None
    zero = parse_tfjob(set_defaults(tfjob("j", {"Worker": replica(0)})))
    assert is_distributed(zero)


def test_sparse_for_dynamic_workers() -> None:
    body = tfjob("j", {"PS": replica(2), "Worker": replica(2), "Evaluator": replica(1)},
                 enableDynamicWorker=True)
    body["metadata"]["namespace"] = "n"
    job = parse_tfjob(set_defaults(body))
    assert tf_config(job, "Worker", 1) == (
        '{"cluster":{"worker":{"1":"j-worker-1.n.svc:2222"},'
        '"ps":["j-ps-0.n.svc:2222","j-ps-1.n.svc:2222"]},"task":{"type":"worker","index":1}}')
    assert tf_config(job, "PS", 1) == (
        '{"cluster":{"worker":{},"ps":["j-ps-1.n.svc:2222"]},"task":{"type":"ps","index":1}}')
    assert tf_config(job, "Evaluator", 0) == (
        '{"cluster":{"worker":{},"ps":[]},"task":{"type":"evaluator","index":0}}')
    no_ps = tfjob("j", {"Worker": replica(2)}, enableDynamicWorker=True)
    no_ps["metadata"]["namespace"] = "n"
    assert tf_config(parse_tfjob(set_defaults(no_ps)), "Worker", 0) == (
        '{"cluster":{"worker":{"0":"j-worker-0.n.svc:2222"},"ps":null},'
        '"task":{"type":"worker","index":0}}')
