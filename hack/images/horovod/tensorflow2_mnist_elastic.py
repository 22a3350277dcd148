#!/usr/bin/env python3
"""Elastic Horovod training (TensorFlow 2), at the path training-operator's elastic MPIJob
example runs (``horovodrun -np 2 --min-np 1 --max-np 3 --host-discovery-script
/etc/mpi/discover_hosts.sh python /examples/elastic/tensorflow2_mnist_elastic.py``).

Written here, trained on generated MNIST-shaped data (28x28 images whose labels a fixed random
linear map decides, so the loss can fall; nothing is downloaded): a small Keras classifier,
Horovod averaging each step's gradients over the ranks (``DistributedGradientTape``). The
training loop runs under ``hvd.elastic.run`` with a ``TensorFlowKerasState`` (the model, the
optimizer, the step and the first loss) committed every ``--commit-every`` steps: when
horovodrun's host discovery finds workers added or removed, the ranks stop at the next commit
(or at the failed collective of a rank that left), re-form the world, take rank 0's committed
state and carry on. Lines (horovodrun prefixes each with the rank that printed it):

* every rank, each time the world (re)forms: ``round: rank <r> of <n>, resumed at step <s>``
* rank 0, every ``--log-every`` steps: ``step <s> world <n> loss=<loss>``
* rank 0, at the end: ``stopped at step <s>: world <n>, loss <first> -> <last>``

It trains until ``--max-steps`` or until a rank sees the file ``--stop-file`` (its own pod's;
the ranks agree by an allreduce each step), then exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys


def say(line: str) -> None:
    print(line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--samples", type=int, default=8192)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--commit-every", type=int, default=10)
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--max-steps", type=int, default=1_000_000)
    parser.add_argument("--stop-file", default="/tmp/stop")
    args = parser.parse_args()

    import horovod.tensorflow as hvd
    import tensorflow as tf

    hvd.init()
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)

    # The same data on every rank (seeded); each rank takes its own batches of it.
    rng = tf.random.Generator.from_seed(1234)
    images = rng.uniform((args.samples, 28, 28, 1))
    teacher = rng.normal((28 * 28, 10))
    labels = tf.argmax(tf.reshape(images, (args.samples, -1)) @ teacher, axis=1)
    batches = args.samples // args.batch_size

    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28, 1)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    optimizer = tf.keras.optimizers.legacy.SGD(args.lr)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)
        # no zip(): autograph replaces it inside tf.function with one that takes no `strict`
        optimizer.apply_gradients(
            [(grads[i], v) for i, v in enumerate(model.trainable_variables)])
        return hvd.allreduce(loss)  # the mean over the ranks

    def stop_requested() -> bool:
        mine = 1.0 if os.path.exists(args.stop_file) else 0.0
        return float(hvd.allreduce(tf.constant(mine), op=hvd.Max)) > 0

    @hvd.elastic.run
    def train(state: hvd.elastic.TensorFlowKerasState) -> None:
        rank, size = hvd.rank(), hvd.size()
        say(f"round: rank {rank} of {size}, resumed at step {state.step}")
        while state.step < args.max_steps and not stop_requested():
            i = (state.step * size + rank) % batches * args.batch_size
            x = images[i:i + args.batch_size]
            y = labels[i:i + args.batch_size]
            loss = float(train_step(x, y))
            if state.first_loss < 0:
                state.first_loss = loss
            state.last_loss = loss
            state.step += 1
            if rank == 0 and state.step % args.log_every == 0:
                say(f"step {state.step} world {size} loss={loss:.4f}")
            if state.step % args.commit_every == 0:
                state.commit()  # raises HostsUpdatedInterrupt when workers came or went
        if rank == 0:
            say(f"stopped at step {state.step}: world {size}, "
                f"loss {state.first_loss:.4f} -> {state.last_loss:.4f}")

    model.build((None, 28, 28, 1))
    # The optimizer's own variables exist before the state is: a rank that joins a running
    # world takes them from rank 0 as every other rank does (zero gradients: nothing moves).
    optimizer.apply_gradients([(tf.zeros_like(v), v) for v in model.trainable_variables])
    state = hvd.elastic.TensorFlowKerasState(model, optimizer, step=0, first_loss=-1.0,
                                             last_loss=-1.0)
    train(state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
