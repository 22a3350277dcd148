#!/usr/bin/env python3
"""tf-dist-mnist: between-graph asynchronous training of an MNIST classifier on parameter servers.

The program of examples/tensorflow-dist-mnist.yaml (the image's command), standing in for the
Kubeflow guide's kubeflow/tf-dist-mnist-test image: TensorFlow's graph-mode distributed runtime
(``tf.distribute.Server``, ``replica_device_setter``), every process started from ``TF_CONFIG``
alone (what training-operator v1.9 gives a TFJob's pods), trained on generated MNIST-shaped
data (784 pixels, 10 classes: a fixed random prototype per class plus noise, seeded per worker),
so nothing is downloaded.

* A ``ps`` task serves its share of the variables until the job ends (``server.join()``).
* Each ``worker`` task builds the same graph, its variables placed round-robin on the parameter
  servers and its computation on itself (between-graph replication), and runs training steps
  on its own batches, each step adding one to the shared ``global_step`` (asynchronous
  updates), until the global step reaches ``--steps``. Worker 0 is the chief: it initializes
  the variables (the others wait for that). The chief's exit is the job's success, and
  ``cleanPodPolicy: Running`` then deletes every pod still Running; so the chief leaves last:
  once done it waits until every worker has counted itself finished in a shared counter on the
  parameter servers, then until each other worker's process has exited (its server at its
  ``TF_CONFIG`` address takes no connection), then ``--exit-grace`` seconds more. The grace is
  for the kubelet: it reports a pod Succeeded one to two seconds after its container exited
  (the container's terminated state first, with the pod still Running), and a worker whose pod
  is still Running when the job succeeds is deleted, its log with it.

It prints, one line each:

* ``<type> <index> of <count>: cluster <n> ps, <m> workers`` and ``server started at <address>``
* on a worker: ``step <global> loss=<loss>`` every ``LOG_EVERY`` local steps; then
  ``worker <i> done: <k> local steps, loss <first> -> <last>`` (means over the first and last
  ten local steps)
* on the chief, last: ``global step <g> after <m> workers finished``

A worker exits 0 when its loss fell (1 otherwise), 2 on a malformed ``TF_CONFIG``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Callable

LOG_EVERY = 20
BATCH = 64


def say(line: str) -> None:
    print(line, flush=True)


def serving(address: str) -> bool:
    """Whether a server accepts connections at ``host:port`` (False once its process exited,
    its pod's address or name is gone, or it does not answer within a second)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


def wait_until(done: Callable[[], bool], timeout: float) -> bool:
    """Polls ``done()`` every half second until it is true (True) or ``timeout`` seconds passed
    (False)."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=400, help="global steps to train")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--exit-grace", type=float, default=10,
                        help="seconds the chief waits after the other workers exited")
    args = parser.parse_args()
    try:
        config = json.loads(os.environ["TF_CONFIG"])
        cluster_def, task = config["cluster"], config["task"]
        kind, index = task["type"], int(task["index"])
        workers = len(cluster_def["worker"])
        ps = len(cluster_def.get("ps", []))
    except (KeyError, ValueError, TypeError) as err:
        print(f"tf-dist-mnist: no usable TF_CONFIG ({err!r})", file=sys.stderr)
        return 2
    say(f"{kind} {index} of {len(cluster_def[kind])}: cluster {ps} ps, {workers} workers")

    import numpy as np
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    cluster = tf.train.ClusterSpec(cluster_def)
    server = tf.distribute.Server(cluster, job_name=kind, task_index=index,
                                  config=tf.compat.v1.ConfigProto(
                                      intra_op_parallelism_threads=1,
                                      inter_op_parallelism_threads=1))
    say(f"server started at {cluster_def[kind][index]}")
    if kind == "ps":
        server.join()  # serves until the job ends (the clean-pod policy removes it)
        return 0

    chief = index == 0
    device = tf.compat.v1.train.replica_device_setter(
        worker_device=f"/job:worker/task:{index}", cluster=cluster)
    with tf.compat.v1.device(device):
        global_step = tf.compat.v1.train.get_or_create_global_step()
        finished = tf.compat.v1.get_variable("workers_finished", [], tf.int64,
                                             initializer=tf.compat.v1.zeros_initializer(),
                                             trainable=False)
        x = tf.compat.v1.placeholder(tf.float32, [None, 784])
        y = tf.compat.v1.placeholder(tf.int64, [None])
        hidden = tf.compat.v1.layers.dense(x, 100, activation=tf.nn.relu)
        logits = tf.compat.v1.layers.dense(hidden, 10)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.compat.v1.train.GradientDescentOptimizer(args.lr).minimize(
            loss, global_step=global_step)
        finish = finished.assign_add(1)
        init = tf.compat.v1.global_variables_initializer()

    prototypes = np.random.default_rng(0).random((10, 784), dtype=np.float32)
    rng = np.random.default_rng(1 + index)

    def batch() -> dict:
        labels = rng.integers(0, 10, BATCH)
        images = prototypes[labels] + rng.normal(0, 0.8, (BATCH, 784)).astype(np.float32)
        return {x: images, y: labels}

    session_config = tf.compat.v1.ConfigProto(
        device_filters=["/job:ps", f"/job:worker/task:{index}"],
        intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    manager = tf.compat.v1.train.SessionManager(
        ready_op=tf.compat.v1.report_uninitialized_variables(), recovery_wait_secs=1)
    if chief:
        sess = manager.prepare_session(server.target, init_op=init, config=session_config)
    else:
        sess = manager.wait_for_session(server.target, config=session_config, max_wait_secs=300)
    losses = []
    step = sess.run(global_step)
    while step < args.steps:
        _, step, value = sess.run([train, global_step, loss], feed_dict=batch())
        losses.append(float(value))
        if len(losses) % LOG_EVERY == 0:
            say(f"step {step} loss={value:.4f}")
    first = sum(losses[:10]) / max(len(losses[:10]), 1)
    last = sum(losses[-10:]) / max(len(losses[-10:]), 1)
    say(f"worker {index} done: {len(losses)} local steps, loss {first:.4f} -> {last:.4f}")
    sess.run(finish)
    if chief:
        wait_until(lambda: bool(sess.run(finished) >= workers), timeout=300)
        say(f"global step {sess.run(global_step)} after {sess.run(finished)} workers finished")
    sess.close()
    if chief:
        others = cluster_def["worker"][1:]
        wait_until(lambda: not any(map(serving, others)), timeout=120)
        time.sleep(args.exit_grace)
    return 0 if len(losses) >= 10 and last < first else 1


if __name__ == "__main__":
    sys.exit(main())
