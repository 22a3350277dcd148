#!/usr/bin/env python3
"""tf_cnn_benchmarks: a synthetic-data Horovod benchmark, at the path the MPI Operator's
tensorflow-benchmarks example runs (``python scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py
--model=resnet101 --batch_size=64 --variable_update=horovod`` under ``mpirun``).

Standing in for tensorflow/benchmarks' program (not on PyPI), with the same flags and the same
kind of output: each rank trains the Keras model named by ``--model`` (``resnet50``,
``resnet101``, ``resnet152``, ``vgg16``; random weights) on random images of
``--image_size`` pixels (default 32 on a CPU-only machine: 224 would take minutes per step
here) and labels generated once, Horovod averaging the gradients of every step across the
ranks (``DistributedGradientTape``; after the first step every rank takes rank 0's variables). After
``--num_warmup_batches`` steps it times ``--num_batches`` steps and prints, one line each:

* ``rank <r> of <n>: horovod <version>, mpi <bool>, model <model>, batch <b>, image <s>``
* ``Step <i> <r> images/sec: <rate>`` every ``--display_every`` timed steps (this rank's)
* ``rank <r> images/sec: <rate>`` (this rank's, over the timed steps)
* on rank 0: ``total images/sec: <sum of the ranks' rates>`` (an allreduce)

and exits 0 when every rank ran every step with finite losses.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

MODELS = {"resnet50": "ResNet50", "resnet101": "ResNet101", "resnet152": "ResNet152",
          "vgg16": "VGG16"}


def say(line: str) -> None:
    print(line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="resnet50", choices=sorted(MODELS))
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--variable_update", default="horovod", choices=["horovod"])
    parser.add_argument("--image_size", type=int, default=32)
    parser.add_argument("--num_batches", type=int, default=3)
    parser.add_argument("--num_warmup_batches", type=int, default=1)
    parser.add_argument("--display_every", type=int, default=1)
    args = parser.parse_args()

    import horovod
    import horovod.tensorflow as hvd
    import tensorflow as tf

    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    say(f"rank {rank} of {size}: horovod {horovod.__version__}, mpi {hvd.mpi_enabled()}, "
        f"model {args.model}, batch {args.batch_size}, image {args.image_size}")

    tf.random.set_seed(rank)
    model = getattr(tf.keras.applications, MODELS[args.model])(
        weights=None, input_shape=(args.image_size, args.image_size, 3), classes=1000)
    optimizer = tf.keras.optimizers.SGD(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
    images = tf.random.uniform((args.batch_size, args.image_size, args.image_size, 3))
    labels = tf.random.uniform((args.batch_size,), maxval=1000, dtype=tf.int64)

    # Eagerly, op by op: tracing and optimizing ResNet-101's graph took longer on this 2-CPU
    # machine than the few steps run here (no step within 8 minutes, two ranks and other work).
    def step() -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    # After the first step, which creates the optimizer's variables, every rank takes rank 0's
    # model and optimizer.
    losses = [float(step())]
    hvd.broadcast_variables(model.variables, root_rank=0)
    hvd.broadcast_variables(optimizer.variables(), root_rank=0)
    for _ in range(args.num_warmup_batches - 1):
        losses.append(float(step()))
    start = time.perf_counter()
    for i in range(1, args.num_batches + 1):
        t = time.perf_counter()
        losses.append(float(step()))
        if i % args.display_every == 0:
            say(f"Step {i} {rank} images/sec: {args.batch_size / (time.perf_counter() - t):.2f}")
    rate = args.batch_size * args.num_batches / (time.perf_counter() - start)
    say(f"rank {rank} images/sec: {rate:.2f}")
    total = float(hvd.allreduce(tf.constant(rate), op=hvd.Sum))
    if rank == 0:
        say(f"total images/sec: {total:.2f}")
    return 0 if all(math.isfinite(v) for v in losses) else 1


if __name__ == "__main__":
    sys.exit(main())
