#!/usr/bin/env python3
"""jax-psum: starts JAX's distributed runtime from a JAXJob pod's environment and sums across it.

Contract: reads ``COORDINATOR_ADDRESS``, ``COORDINATOR_PORT``, ``NUM_PROCESSES`` and
``PROCESS_ID`` (what training-operator v1.9 gives every JAXJob pod) and nothing else; calls
``jax.distributed.initialize`` with them alone (JAX's own detection of the cluster it runs in
off; process 0 hosts the coordination service on the port, every process reaches it at the
address, the Service of process 0), then runs one collective over all the processes' CPU
devices: each process contributes the value ``PROCESS_ID + 1`` and a ``psum`` under
``shard_map`` over a mesh of every device returns the sum to all of them. It prints, one line
each:

* ``process <id> of <n>: coordinator <address>:<port>``
* ``initialized: process_index <i>, process_count <n>, devices <global> global, <local> local``
* ``processes <ids> took part`` (an all-gather of every process's ``PROCESS_ID``)
* ``psum <value> expected <n(n+1)/2>``

and exits 0 when every check holds (the runtime agrees with the environment, the ids are 0..n-1,
the sum is exact), 1 otherwise, 2 on a malformed environment (the variable named).
"""

from __future__ import annotations

import os
import sys


class BadEnv(Exception):
    """The environment names no usable coordinator (the message names the variable)."""


def say(line: str) -> None:
    print(line, flush=True)


def env_int(name: str) -> int:
    value = os.environ.get(name, "")
    if not value.isdigit():
        raise BadEnv(f"{name} is {value!r}, not a non-negative integer")
    return int(value)


def main() -> int:
    try:
        address = os.environ.get("COORDINATOR_ADDRESS", "")
        if not address:
            raise BadEnv("COORDINATOR_ADDRESS is not set")
        port, count, me = (env_int(n) for n in ("COORDINATOR_PORT", "NUM_PROCESSES", "PROCESS_ID"))
        if not me < count:
            raise BadEnv(f"PROCESS_ID {me} is not below NUM_PROCESSES {count}")
    except BadEnv as err:
        print(f"jax-psum: {err}", file=sys.stderr)
        return 2
    say(f"process {me} of {count}: coordinator {address}:{port}")

    import jax
    import numpy as np
    from jax.experimental import multihost_utils
    from jax.sharding import NamedSharding, PartitionSpec

    # Only these four values: JAX's own detection of the cluster (Kubernetes, Slurm, MPI...)
    # stays off.
    jax.distributed.initialize(coordinator_address=f"{address}:{port}", num_processes=count,
                               process_id=me, cluster_detection_method="deactivate",
                               initialization_timeout=240)
    say(f"initialized: process_index {jax.process_index()}, process_count {jax.process_count()}, "
        f"devices {jax.device_count()} global, {jax.local_device_count()} local")
    ok = (jax.process_index(), jax.process_count()) == (me, count)

    ids = multihost_utils.process_allgather(np.array([me], dtype=np.int32)).reshape(-1)
    say("processes " + ",".join(str(i) for i in ids) + " took part")
    ok &= sorted(ids.tolist()) == list(range(count))

    mesh = jax.make_mesh((jax.device_count(),), ("p",))
    local = np.full((jax.local_device_count(),), me + 1, dtype=np.int32)
    values = jax.make_array_from_process_local_data(NamedSharding(mesh, PartitionSpec("p")), local)
    total = jax.jit(jax.shard_map(lambda x: jax.lax.psum(x, "p"), mesh=mesh,
                                  in_specs=PartitionSpec("p"), out_specs=PartitionSpec()))(values)
    value = int(np.asarray(total.addressable_data(0))[0])
    expected = sum(i + 1 for i in range(count)) * jax.local_device_count()
    say(f"psum {value} expected {expected}")
    ok &= value == expected

    jax.distributed.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
