#!/usr/bin/env python3
"""xgboost-train: trains a model across an XGBoostJob's pods with XGBoost's collective.

Contract: reads ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE``, ``RANK`` and ``WORKER_ADDRS``
(what training-operator v1.9 gives every XGBoostJob pod: the master is rank 0, worker ``i`` rank
``i + 1``) and nothing else. It first checks the names: the name its own rank has there
(``MASTER_ADDR`` for rank 0, item ``RANK - 1`` of ``WORKER_ADDRS`` otherwise) must resolve to
this pod's own address, and ``WORKER_ADDRS`` must name ``WORLD_SIZE - 1`` workers. Rank 0 then
starts XGBoost's tracker on ``MASTER_PORT`` (all interfaces); every rank joins the collective at
``MASTER_ADDR:MASTER_PORT`` with ``RANK`` as its task id (ranks are assigned by task id, so the
collective's rank is ``RANK``), generates its own shard of a regression problem (seeded by its
rank) and trains ``ROUNDS`` boosting rounds with the histogram method: the histograms, and so the
trees and the training metric, are summed across all ranks. It prints, one line each:

* ``rank <r> of <n>: tracker <MASTER_ADDR>:<MASTER_PORT>``
* ``<name> is this pod (<ip>)`` (the self-check above)
* ``joined the collective as rank <r> of <n>``
* ``rows <total> across <n> ranks`` (an allreduce of the shard sizes)
* ``round <i> train-rmse <value>`` for each round (the metric over every rank's rows)
* ``trained <k> rounds, model <sha256 prefix of the JSON model>``

and exits 0; 1 when a check fails, 2 on a malformed environment (the variable named).
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
import time

ROUNDS = 5
ROWS = 2000
FEATURES = 8


class BadEnv(Exception):
    """The environment names no usable wiring (the message names the variable)."""


def say(line: str) -> None:
    print(line, flush=True)


def env_int(name: str) -> int:
    value = os.environ.get(name, "")
    if not value.isdigit():
        raise BadEnv(f"{name} is {value!r}, not a non-negative integer")
    return int(value)


def resolve(name: str, deadline: float) -> str:
    """The IPv4 address ``name`` resolves to, retried until ``deadline`` (a pod's DNS record
    can appear a moment after it starts)."""
    while True:
        try:
            return socket.gethostbyname(name)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def main() -> int:
    try:
        master = os.environ.get("MASTER_ADDR", "")
        if not master:
            raise BadEnv("MASTER_ADDR is not set")
        port, world, rank = (env_int(n) for n in ("MASTER_PORT", "WORLD_SIZE", "RANK"))
        workers = [w for w in os.environ.get("WORKER_ADDRS", "").split(",") if w]
        if len(workers) != world - 1:
            raise BadEnv(f"WORKER_ADDRS names {len(workers)} workers, WORLD_SIZE {world} "
                         f"means {world - 1}")
        if not rank < world:
            raise BadEnv(f"RANK {rank} is not below WORLD_SIZE {world}")
    except BadEnv as err:
        print(f"xgboost-train: {err}", file=sys.stderr)
        return 2
    say(f"rank {rank} of {world}: tracker {master}:{port}")

    deadline = time.monotonic() + 120
    own = workers[rank - 1] if rank else master
    try:
        me, mine = resolve(socket.gethostname(), deadline), resolve(own, deadline)
        resolve(master, deadline)
    except OSError as err:
        say(f"a name does not resolve: {err}")
        return 1
    if me != mine:
        say(f"{own} resolves to {mine}, not this pod ({me})")
        return 1
    say(f"{own} is this pod ({me})")

    import numpy as np
    import xgboost as xgb
    from xgboost import collective
    from xgboost.tracker import RabitTracker

    tracker = None
    if rank == 0:
        tracker = RabitTracker(n_workers=world, host_ip="0.0.0.0", port=port, sortby="task",
                               timeout=300)
        tracker.start()
    ok = True
    with collective.CommunicatorContext(dmlc_tracker_uri=master, dmlc_tracker_port=port,
                                        dmlc_task_id=str(rank), dmlc_retry=30,
                                        dmlc_timeout=300):
        got, size = collective.get_rank(), collective.get_world_size()
        say(f"joined the collective as rank {got} of {size}")
        ok &= (got, size) == (rank, world)

        rng = np.random.default_rng(rank)
        x = rng.normal(size=(ROWS, FEATURES))
        y = x @ np.arange(1.0, FEATURES + 1) + 0.1 * rng.normal(size=ROWS)
        rows = collective.allreduce(np.array([ROWS], dtype=np.int64), collective.Op.SUM)
        say(f"rows {int(rows[0])} across {size} ranks")

        data = xgb.DMatrix(x, label=y)
        history: dict[str, dict[str, list[float]]] = {}
        booster = xgb.train({"objective": "reg:squarederror", "tree_method": "hist",
                             "max_depth": 4, "nthread": 1},
                            data, num_boost_round=ROUNDS, evals=[(data, "train")],
                            evals_result=history, verbose_eval=False)
        for i, rmse in enumerate(history["train"]["rmse"]):
            say(f"round {i} train-rmse {rmse:.6f}")
        digest = hashlib.sha256(booster.save_raw("json")).hexdigest()[:16]
        say(f"trained {booster.num_boosted_rounds()} rounds, model {digest}")
    if tracker is not None:
        tracker.wait_for()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
