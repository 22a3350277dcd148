#!/usr/bin/env python3
"""pytorch-elastic: a torchrun worker that keeps training while the job's workers come and go.

Run as ``python3 -m torch.distributed.run /opt/pytorch-mnist/elastic.py`` in an elastic
PyTorchJob's pods: torchrun takes its rendezvous from the controller's ``PET_*`` variables
(``PET_RDZV_ENDPOINT``, ``PET_RDZV_BACKEND=c10d``, ``PET_NNODES=<min>:<max>``,
``PET_MAX_RESTARTS``, ``PET_NPROC_PER_NODE``) and starts this program once per rendezvous round
with ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``/``MASTER_PORT`` and
``TORCHELASTIC_RESTART_COUNT``. When a worker pod joins or leaves, torchrun ends the round and
starts a new one with the new world size; this program resumes where the job was: each process
keeps its state (model, optimizer, step, first loss) in ``/tmp/elastic-state-<LOCAL_RANK>.pt`` every
``SAVE_EVERY`` steps, and at the start of a round the rank with the most advanced state
broadcasts it to the others (a newly joined pod has none).

It trains an MLP on generated MNIST-shaped data with ``DistributedDataParallel`` over gloo,
``STEP_PAUSE`` seconds between steps (the pods share the machine), until any rank sees the file
``/tmp/stop`` (``kubectl exec <pod> -- touch /tmp/stop``; the flag is all-reduced, so all ranks
stop at the same step) or ``--max-steps``. It prints, one line each:

* ``round: rank <r> of <n>, restart <k>, resumed at step <s> from rank <src>``
* ``step <s> world <n> loss=<loss>`` every ``LOG_EVERY`` steps
* ``stopped at step <s>: world <n>, loss <first> -> <recent>`` (the job's first step's loss, the
  mean of the last ``LOG_EVERY``) on rank 0

and exits 0 when stopped by the file with a loss that fell, 1 otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time

STATE = f"/tmp/elastic-state-{os.environ.get('LOCAL_RANK', '0')}.pt"  # one per local process
STOP = "/tmp/stop"
BATCH = 32
LOG_EVERY = 20
SAVE_EVERY = 10
STEP_PAUSE = 0.05


def say(line: str) -> None:
    print(line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, default=20000)
    parser.add_argument("--lr", type=float, default=0.02)
    args = parser.parse_args()

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.5)
    step, first = 0, 0.0
    if os.path.exists(STATE):
        saved = torch.load(STATE)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        step, first = saved["step"], saved["first"]
    # The most advanced state wins (lowest rank among equals); everyone takes it from there.
    best = torch.tensor([step])
    dist.all_reduce(best, op=dist.ReduceOp.MAX)
    src = torch.tensor([rank if step == int(best) else world])
    dist.all_reduce(src, op=dist.ReduceOp.MIN)
    src_rank = int(src)
    state = [{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
              "first": first}]
    dist.broadcast_object_list(state, src=src_rank)
    model.load_state_dict(state[0]["model"])
    optimizer.load_state_dict(state[0]["optimizer"])
    step, first = state[0]["step"], state[0]["first"]
    say(f"round: rank {rank} of {world}, restart "
        f"{os.environ.get('TORCHELASTIC_RESTART_COUNT', '?')}, resumed at step {step} "
        f"from rank {src_rank}")

    ddp = DistributedDataParallel(model)
    gen = torch.Generator().manual_seed(0)
    prototypes = torch.rand(10, 784, generator=gen)
    gen.manual_seed(1000 + rank + 100 * step)
    recent: list[float] = []
    stopped = False
    while step < args.max_steps:
        flag = torch.tensor([1 if os.path.exists(STOP) else 0])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if int(flag):
            stopped = True
            break
        labels = torch.randint(0, 10, (BATCH,), generator=gen)
        x = prototypes[labels] + 0.8 * torch.randn(BATCH, 784, generator=gen)
        optimizer.zero_grad()
        loss = F.cross_entropy(ddp(x), labels)
        loss.backward()
        optimizer.step()
        step += 1
        if step == 1:
            first = loss.item()
        recent = [*recent, loss.item()][-LOG_EVERY:]
        if step % LOG_EVERY == 0:
            say(f"step {step} world {world} loss={loss.item():.4f}")
        if step % SAVE_EVERY == 0:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "step": step, "first": first}, STATE + ".tmp")
            os.replace(STATE + ".tmp", STATE)
        time.sleep(STEP_PAUSE)
    mean = sum(recent) / len(recent) if recent else first
    if rank == 0:
        say(f"stopped at step {step}: world {world}, loss {first:.4f} -> {mean:.4f}")
    dist.destroy_process_group()
    return 0 if stopped and mean < first else 1


if __name__ == "__main__":
    sys.exit(main())
