#!/usr/bin/env python3
"""pytorch-mnist: trains a small MNIST classifier with DistributedDataParallel over gloo.

The program of examples/pytorch-simple.yaml (``python3 /opt/pytorch-mnist/mnist.py
--epochs=1``), standing in for the Kubeflow guide's kubeflowkatib/pytorch-mnist image: the same
network (two convolutions, two fully connected layers), trained on generated MNIST-shaped data
(28x28 grey images of 10 classes: a fixed random prototype per class plus noise, seeded, so
nothing is downloaded and every pod generates the same set).

Contract: reads ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK`` (what
training-operator v1.9 gives a PyTorchJob's pods: the master is rank 0) and nothing else; joins
the process group with ``init_process_group("gloo")`` from them (rank 0 serves the store on
``MASTER_PORT``), wraps the model in ``DistributedDataParallel`` (gradients all-reduced at every
step) and trains each rank on its shard of the data (``DistributedSampler``). It prints, one line
each:

* ``rank <r> of <n>: master <MASTER_ADDR>:<MASTER_PORT>``
* ``joined: backend gloo, rank <r>, world size <n>``
* ``Train Epoch: <e> [<seen>/<shard>] step <s> loss=<loss>`` every ``LOG_EVERY`` steps and at the
  epoch's last step (the loss of this rank's batch)
* ``epoch <e>: mean loss <first batches> -> <last batches>`` (mean over the first and last
  ``LOG_EVERY`` steps of the epoch)
* ``accuracy=<a> on <k> test images``
* ``parameters <sha256 prefix> identical on <n> ranks`` (all-gathered digests of the weights:
  DDP keeps every replica equal)

and exits 0 when the ranks agree and the loss fell; 1 otherwise, 2 on a malformed environment
(at once, through ``os._exit``: see the end of :func:`main`).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

SAMPLES = 4096       # training images, across all ranks
TEST = 1024
BATCH = 32           # per rank
LOG_EVERY = 10


class BadEnv(Exception):
    """The environment names no usable process group (the message names the variable)."""


def say(line: str) -> None:
    print(line, flush=True)


def env_int(name: str) -> int:
    value = os.environ.get(name, "")
    if not value.isdigit():
        raise BadEnv(f"{name} is {value!r}, not a non-negative integer")
    return int(value)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()
    try:
        master = os.environ.get("MASTER_ADDR", "")
        if not master:
            raise BadEnv("MASTER_ADDR is not set")
        port, world, rank = (env_int(n) for n in ("MASTER_PORT", "WORLD_SIZE", "RANK"))
        if not rank < world:
            raise BadEnv(f"RANK {rank} is not below WORLD_SIZE {world}")
    except BadEnv as err:
        print(f"pytorch-mnist: {err}", file=sys.stderr)
        return 2
    say(f"rank {rank} of {world}: master {master}:{port}")

    import datetime

    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(minutes=5))
    say(f"joined: backend {dist.get_backend()}, rank {dist.get_rank()}, "
        f"world size {dist.get_world_size()}")
    ok = (dist.get_rank(), dist.get_world_size()) == (rank, world)

    gen = torch.Generator().manual_seed(0)
    prototypes = torch.rand(10, 1, 28, 28, generator=gen)

    def images(count: int) -> TensorDataset:
        labels = torch.randint(0, 10, (count,), generator=gen)
        x = prototypes[labels] + 0.8 * torch.randn(count, 1, 28, 28, generator=gen)
        return TensorDataset((x - 0.5) / 0.5, labels)

    train, test = images(SAMPLES), images(TEST)

    class Net(nn.Module):  # the network of the guide's mnist.py
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 20, 5, 1)
            self.conv2 = nn.Conv2d(20, 50, 5, 1)
            self.fc1 = nn.Linear(4 * 4 * 50, 500)
            self.fc2 = nn.Linear(500, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = F.max_pool2d(F.relu(self.conv1(x)), 2, 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2, 2)
            x = F.relu(self.fc1(x.view(-1, 4 * 4 * 50)))
            return F.log_softmax(self.fc2(x), dim=1)

    torch.manual_seed(1)
    model = DistributedDataParallel(Net())
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.5)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(train, batch_size=BATCH, sampler=sampler)
    fell = True
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        losses = []
        for step, (x, y) in enumerate(loader, 1):
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if step % LOG_EVERY == 0 or step == len(loader):
                say(f"Train Epoch: {epoch} [{min(step * BATCH, len(sampler))}/{len(sampler)}] "
                    f"step {step} loss={loss.item():.4f}")
        first = sum(losses[:LOG_EVERY]) / len(losses[:LOG_EVERY])
        last = sum(losses[-LOG_EVERY:]) / len(losses[-LOG_EVERY:])
        say(f"epoch {epoch}: mean loss {first:.4f} -> {last:.4f}")
        fell &= last < first

    model.eval()
    with torch.no_grad():
        x, y = test.tensors
        correct = int((model(x).argmax(dim=1) == y).sum())
    say(f"accuracy={correct / TEST:.4f} on {TEST} test images")

    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes()
                                     for p in model.module.parameters())).hexdigest()[:16]
    digests: list[str | None] = [None] * world
    dist.all_gather_object(digests, digest)
    if len(set(digests)) == 1:
        say(f"parameters {digest} identical on {world} ranks")
    else:
        say(f"parameters differ across ranks: {digests}")
        ok = False
    # Leaving: once the barrier returns every rank is past the last collective. The process
    # then ends with os._exit, without destroy_process_group or the interpreter's finalization:
    # in rank 0, which serves the TCPStore, torch's c10d teardown sometimes aborts after its
    # peer has left ("terminate called without an active exception", SIGSEGV, exit code 139;
    # once in 15 runs on the busy real node). With restartPolicy OnFailure the kubelet then
    # starts the master again, alone: it waits for a peer that has finished (DistStoreError,
    # "1/2 clients joined") and the job never succeeds.
    dist.barrier()
    return 0 if ok and fell else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
