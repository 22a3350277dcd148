#!/usr/bin/env python3
"""paddle-allreduce: a trainer of a collective PaddleJob, started by paddle.distributed.launch.

Contract: run as ``python3 -m paddle.distributed.launch /usr/local/bin/paddle-allreduce`` in every
pod of a PaddleJob. The launcher reads what training-operator v1.9 gives the pod
(``PADDLE_MASTER``: worker 0's own address and port there, worker 0's Service and port
elsewhere; ``PADDLE_NNODES``; ``PADDLE_JOB_ID``), meets the other pods' launchers at the master
(worker 0's launcher serves the rendezvous there), and starts this program with its trainer
rank, the trainer count and every trainer's endpoint. This program then calls
``paddle.distributed.init_parallel_env`` (Gloo on CPU) and runs two collectives: an
``all_gather_object`` of every trainer's host name and an ``all_reduce`` (sum) of the value
``rank + 1``. It prints, one line each:

* ``job <PADDLE_JOB_ID>, <PADDLE_NNODES> nodes``
* ``trainer <rank> of <n> at <own endpoint>, trainers <endpoint>,<endpoint>...``
* ``hosts <host of rank 0>,<host of rank 1>...``
* ``all_reduce sum <value> expected <n(n+1)/2>``

and exits 0 when the sum is exact and the trainer count is ``PADDLE_NNODES`` (one trainer per
pod on CPU), else 1; 2 when not started by the launcher (the variable named).
"""

from __future__ import annotations

import os
import socket
import sys


def say(line: str) -> None:
    print(line, flush=True)


def main() -> int:
    needed = ("PADDLE_JOB_ID", "PADDLE_NNODES", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM",
              "PADDLE_CURRENT_ENDPOINT", "PADDLE_TRAINER_ENDPOINTS")
    missing = [n for n in needed if not os.environ.get(n)]
    if missing:
        print(f"paddle-allreduce: {', '.join(missing)} not set: run me with "
              "`python3 -m paddle.distributed.launch`", file=sys.stderr)
        return 2
    nodes = os.environ["PADDLE_NNODES"]
    say(f"job {os.environ['PADDLE_JOB_ID']}, {nodes} nodes")

    import paddle
    import paddle.distributed as dist

    paddle.set_device("cpu")
    dist.init_parallel_env()
    rank, count = dist.get_rank(), dist.get_world_size()
    say(f"trainer {rank} of {count} at {os.environ['PADDLE_CURRENT_ENDPOINT']}, "
        f"trainers {os.environ['PADDLE_TRAINER_ENDPOINTS']}")

    hosts: list[object] = []
    dist.all_gather_object(hosts, socket.gethostname())
    say("hosts " + ",".join(map(str, hosts)))

    value = paddle.to_tensor([rank + 1], dtype="int64")
    dist.all_reduce(value)
    total, expected = int(value.numpy()[0]), count * (count + 1) // 2
    say(f"all_reduce sum {total} expected {expected}")
    return 0 if total == expected and str(count) == nodes else 1


if __name__ == "__main__":
    sys.exit(main())
