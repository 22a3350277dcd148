#!/usr/bin/env python3
"""peers: checks the wiring a training job's pod is given by connecting to every peer it names.

Contract: ``peers tf`` reads ``TF_CONFIG`` (a TFJob pod); ``peers pytorch`` reads
``MASTER_ADDR``, ``MASTER_PORT``, ``RANK`` and ``WORLD_SIZE`` (a PyTorchJob pod). Every process
listens on its own port and connects to every other process of the job, each connection a
one-line handshake (``HELLO <me>`` answered by the peer's own name, which must be the name
expected there). It exits 0 once it has reached every peer and been reached by every peer,
else 1 after ``$PEERS_TIMEOUT`` seconds (default 180); a malformed environment exits 2 with the
variable and problem named. What it sees is printed, one line each:

* ``me <name> listening on <port>``
* ``reached <peer> at <host>:<port> (<ip>)``: this process connected to the peer there;
* ``reached by <peer> from <ip>``: the peer connected to this process;
* ``all <n> peers reached`` at the end (or ``missing ...`` lines and exit 1).

TF: the names are ``<type>-<index>`` and the addresses those of ``TF_CONFIG.cluster``; the
process listens on the port of its own address (``task.type``, ``task.index``).

PyTorch (as torch.distributed's rendezvous): every rank listens on ``MASTER_PORT``. Rank 0 (at
``MASTER_ADDR``) collects one ``JOIN <rank> <world size>`` from every other rank, checks that
the ranks are exactly 1..WORLD_SIZE-1 and agree on WORLD_SIZE, and answers each with the table
of every rank's IP address (``TABLE 0=<ip> 1=<ip> ...``); then every rank connects to every
other at its address, the names being ``rank-<r>``. Prints ``joined rank-0 at
<MASTER_ADDR>:<MASTER_PORT> (<ip>)`` (ranks > 0) and ``table rank-0=<ip> ...``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable

Address = tuple[str, int]


class BadEnv(Exception):
    """The environment names no usable wiring (the message names the variable)."""


def say(line: str) -> None:
    print(line, flush=True)


def read_line(conn: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(1024)
        if not chunk:
            break
        data += chunk
    return data.decode().strip()


class Mesh:
    """One process's listener and its connections to its peers (name -> address)."""

    def __init__(self, me: str, port: int, deadline: float) -> None:
        self.me, self.port, self.deadline = me, port, deadline
        self.peers: dict[str, Address] = {}
        self.reached: set[str] = set()
        self.reached_by: set[str] = set()
        self.peers_known = threading.Event()
        self.done = threading.Condition()
        self.on_join: Callable[[socket.socket, list[str]], None] | None = None
        self.server = socket.create_server(("", port), reuse_port=False, backlog=64)
        say(f"me {me} listening on {port}")

    def serve(self) -> None:
        """Accepts connections until the process exits (a thread)."""
        while True:
            conn, (ip, _) = self.server.accept()
            threading.Thread(target=self.handle, args=(conn, ip), daemon=True).start()

    def handle(self, conn: socket.socket, ip: str) -> None:
        conn.settimeout(max(1.0, self.deadline - time.monotonic()))
        words = read_line(conn).split()
        if words[:1] == ["JOIN"] and self.on_join is not None:
            self.on_join(conn, words)  # keeps the connection open until the table is sent
            return
        if len(words) == 2 and words[0] == "HELLO":
            self.peers_known.wait(max(0.0, self.deadline - time.monotonic()))
            peer = words[1]
            if peer in self.peers:
                conn.sendall(f"{self.me}\n".encode())
                with self.done:
                    if peer not in self.reached_by:
                        say(f"reached by {peer} from {ip}")
                    self.reached_by.add(peer)
                    self.done.notify_all()
            else:
                say(f"refused {' '.join(words)} from {ip}: not a peer")
        conn.close()

    def reach(self, peer: str, address: Address) -> None:
        """Connects to ``peer`` until it answers with its name or the deadline passes (a thread).
        Names that do not resolve yet and refused connections are retried."""
        host, port = address
        last = ""
        while time.monotonic() < self.deadline:
            try:
                with socket.create_connection(address, timeout=2) as conn:
                    conn.settimeout(max(1.0, self.deadline - time.monotonic()))
                    conn.sendall(f"HELLO {self.me}\n".encode())
                    answer = read_line(conn)
                    ip = conn.getpeername()[0]
                if answer == peer:
                    with self.done:
                        say(f"reached {peer} at {host}:{port} ({ip})")
                        self.reached.add(peer)
                        self.done.notify_all()
                    return
                last = f"{host}:{port} ({ip}) answered {answer!r}"
            except OSError as err:
                last = f"{host}:{port}: {err}"
            time.sleep(0.5)
        say(f"could not reach {peer}: {last}")

    def run(self, peers: dict[str, Address]) -> int:
        """Reaches every peer and waits to be reached by each; the exit code."""
        self.peers = peers
        self.peers_known.set()
        for peer, address in sorted(peers.items()):
            threading.Thread(target=self.reach, args=(peer, address), daemon=True).start()
        names = set(peers)
        with self.done:
            while (self.reached != names or self.reached_by != names) \
                    and time.monotonic() < self.deadline:
                self.done.wait(max(0.0, min(1.0, self.deadline - time.monotonic())))
            if self.reached == names and self.reached_by == names:
                say(f"all {len(names)} peers reached")
                return 0
            for peer in sorted(names - self.reached):
                say(f"missing: did not reach {peer}")
            for peer in sorted(names - self.reached_by):
                say(f"missing: not reached by {peer}")
            return 1


def split_address(text: str, where: str) -> Address:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise BadEnv(f"{where}: {text!r} is not host:port")
    return host, int(port)


def tf_mesh(deadline: float) -> tuple[Mesh, dict[str, Address]]:
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        raise BadEnv("TF_CONFIG is not set")
    try:
        config = json.loads(raw)
        cluster = config["cluster"]
        me = f"{config['task']['type']}-{int(config['task']['index'])}"
    except (ValueError, KeyError, TypeError) as err:
        raise BadEnv(f"TF_CONFIG: {err!r} in {raw}") from err
    addresses = {f"{rtype}-{i}": split_address(a, f"TF_CONFIG.cluster.{rtype}[{i}]")
                 for rtype, hosts in cluster.items() for i, a in enumerate(hosts)}
    if me not in addresses:
        raise BadEnv(f"TF_CONFIG: task {me} is not in the cluster {sorted(addresses)}")
    mesh = Mesh(me, addresses.pop(me)[1], deadline)
    return mesh, addresses


def int_env(name: str) -> int:
    value = os.environ.get(name, "")
    if not value.isdigit():
        raise BadEnv(f"{name}={value!r} is not a number")
    return int(value)


def pytorch_mesh(deadline: float) -> tuple[Mesh, dict[str, Address]]:
    master, port = os.environ.get("MASTER_ADDR", ""), int_env("MASTER_PORT")
    rank, world = int_env("RANK"), int_env("WORLD_SIZE")
    if not master:
        raise BadEnv("MASTER_ADDR is not set")
    if not 0 <= rank < world:
        raise BadEnv(f"RANK={rank} is not below WORLD_SIZE={world}")
    mesh = Mesh(f"rank-{rank}", port, deadline)
    table = join_master(mesh, master, port, world) if rank else host_rendezvous(mesh, world)
    say("table " + " ".join(f"rank-{r}={ip}" for r, ip in sorted(table.items())))
    return mesh, {f"rank-{r}": (ip, port) for r, ip in table.items() if r != rank}


def host_rendezvous(mesh: Mesh, world: int) -> dict[int, str]:
    """Rank 0: the table once every other rank has joined (sent to each of them)."""
    joined: dict[int, tuple[socket.socket, str]] = {}
    errors: list[str] = []
    complete = threading.Condition()

    def on_join(conn: socket.socket, words: list[str]) -> None:
        ip = conn.getpeername()[0]
        with complete:
            if len(words) != 3 or not words[1].isdigit() or words[2] != str(world):
                errors.append(f"{ip} sent {' '.join(words)!r}, expected JOIN <rank> {world}")
            elif not 0 < int(words[1]) < world or int(words[1]) in joined:
                errors.append(f"{ip} joined as rank {words[1]}: taken or out of range")
            else:
                joined[int(words[1])] = (conn, ip)
                say(f"rank-{words[1]} joined from {ip}")
            complete.notify_all()

    mesh.on_join = on_join
    threading.Thread(target=mesh.serve, daemon=True).start()
    with complete:
        while len(joined) < world - 1 and not errors and time.monotonic() < mesh.deadline:
            complete.wait(max(0.0, min(1.0, mesh.deadline - time.monotonic())))
        if errors or len(joined) < world - 1:
            for line in errors or [f"only ranks {sorted(joined)} joined of {world}"]:
                say(f"rendezvous failed: {line}")
            raise SystemExit(1)
    own_ip = next(iter(joined.values()))[0].getsockname()[0] if joined else "127.0.0.1"
    table = {0: own_ip, **{r: ip for r, (_, ip) in joined.items()}}
    message = "TABLE " + " ".join(f"{r}={ip}" for r, ip in sorted(table.items())) + "\n"
    for conn, _ in joined.values():
        conn.sendall(message.encode())
        conn.close()
    return table


def join_master(mesh: Mesh, master: str, port: int, world: int) -> dict[int, str]:
    """A rank > 0: joins at MASTER_ADDR:MASTER_PORT (retried until it answers) and returns the
    table it sends."""
    threading.Thread(target=mesh.serve, daemon=True).start()
    rank = mesh.me.removeprefix("rank-")
    last = ""
    while time.monotonic() < mesh.deadline:
        try:
            with socket.create_connection((master, port), timeout=2) as conn:
                ip = conn.getpeername()[0]
                conn.settimeout(max(1.0, mesh.deadline - time.monotonic()))
                conn.sendall(f"JOIN {rank} {world}\n".encode())
                words = read_line(conn).split()
            if words[:1] == ["TABLE"]:
                say(f"joined rank-0 at {master}:{port} ({ip})")
                return {int(r): a for r, a in (w.split("=", 1) for w in words[1:])}
            last = f"answered {' '.join(words)!r}"
        except OSError as err:
            last = str(err)
        time.sleep(0.5)
    say(f"rendezvous failed: could not join rank-0 at {master}:{port}: {last}")
    raise SystemExit(1)


def main(argv: list[str]) -> int:
    if argv[1:] not in (["tf"], ["pytorch"]):
        print("usage: peers tf|pytorch", file=sys.stderr)
        return 2
    deadline = time.monotonic() + float(os.environ.get("PEERS_TIMEOUT", "180"))
    try:
        mesh, peers = (tf_mesh if argv[1] == "tf" else pytorch_mesh)(deadline)
    except BadEnv as err:
        print(f"peers: {err}", file=sys.stderr)
        return 2
    if argv[1] == "tf":
        threading.Thread(target=mesh.serve, daemon=True).start()
    return mesh.run(peers)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
