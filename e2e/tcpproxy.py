"""A round-robin TCP proxy on 127.0.0.1 standing in for a Service in front of several local
controller replicas (TLS passes through untouched).

Each accepted connection goes to the next backend in turn. A connection older than
``max_age`` seconds is closed once it has been idle for ``idle`` seconds after an answer (as
a server closes an idle keep-alive connection), so a client that keeps its connections alive
(the API server's webhook client does) still spreads over the backends.
It runs in a thread of its own; ``with RoundRobinProxy([...]) as proxy:`` gives ``proxy.port``.

Each connection is piped by a thread of its own waiting on its two sockets with
:mod:`selectors` (epoll or poll), not ``select()``: the proxy works whatever the file
descriptor numbers, beyond ``select()``'s 1024 (``FD_SETSIZE``) too.
"""

from __future__ import annotations

import itertools
import selectors
import socket
import threading
import time
from collections.abc import Sequence
from types import TracebackType

__all__ = ["RoundRobinProxy"]


class RoundRobinProxy:
    def __init__(self, backends: Sequence[int], *, max_age: float = 1.0,
                 idle: float = 0.2) -> None:
        self.backends = list(backends)
        self.max_age = max_age
        self.idle = idle
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._turn = itertools.cycle(range(len(self.backends)))
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.connections = [0] * len(self.backends)

    def __enter__(self) -> RoundRobinProxy:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._listener.close()

    def _accept(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            index = next(self._turn)
            self.connections[index] += 1
            thread = threading.Thread(target=self._pipe, args=(client, self.backends[index]),
                                      daemon=True)
            thread.start()

    def _pipe(self, client: socket.socket, port: int) -> None:
        try:
            backend = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            client.close()
            return
        old_at = time.monotonic() + self.max_age
        peers = {client: backend, backend: client}
        last, answered = time.monotonic(), False
        selector = selectors.DefaultSelector()
        try:
            for sock in peers:
                selector.register(sock, selectors.EVENT_READ, sock)
            while not self._stop.is_set():
                now = time.monotonic()
                if now > old_at and answered and now - last > self.idle:
                    return
                for key, _ in selector.select(0.05):
                    sock = key.data
                    data = sock.recv(65536)
                    if not data:
                        return
                    peers[sock].sendall(data)
                    last, answered = time.monotonic(), sock is backend
        except OSError:
            return
        finally:
            selector.close()
            client.close()
            backend.close()
