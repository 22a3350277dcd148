"""The read buffer of asyncio's TLS connections, sized for a controller's many idle ones.

asyncio gives every TLS connection (``asyncio.sslproto.SSLProtocol``) a read buffer of
``max_size`` bytes, allocated and zeroed when the connection is made and held as long as it
lives: 256 KiB in CPython 3.11 to 3.13. A controller keeps one connection per watch (22 for
the six ``kubeflow.org`` kinds; aiohttp has no HTTP/2 to multiplex them) and up to its pool's
100 during a burst of writes, so those buffers were ~5.6 MB of an idle controller's ~55 MB
and up to ~25 MB at its peak.

Contract: :func:`limit_tls_read_buffer` lowers that buffer, for the connections made after the
call in this process, to ``size`` bytes (default :data:`TLS_READ_BUFFER`) and returns the size
now in force; it never raises the buffer, and does nothing (returning ``None``) on an asyncio
without the attribute. The buffer only bounds how much one ``recv`` reads from the socket
(each TLS record is at most 16 KiB anyway): reading 300 MB of LIST bodies in a loop cost ~20%
more CPU with 16 KiB than with 256 KiB, while the controller's own workloads (start-up with
2,700 cached pods, bursts of creates) used no more CPU and peaked 4-5 MB lower than with
64 KiB (docs/performance.md, "Memory").
"""

from __future__ import annotations

import asyncio.sslproto

__all__ = ["TLS_READ_BUFFER", "limit_tls_read_buffer"]

TLS_READ_BUFFER = 16 * 1024
"""16 KiB, one TLS record: ~49 KB per idle TLS connection in all (OpenSSL and aiohttp
included) instead of ~295 KB."""


def limit_tls_read_buffer(size: int = TLS_READ_BUFFER) -> int | None:
    """Lower asyncio's per-connection TLS read buffer to ``size`` bytes (see the module)."""
    protocol = asyncio.sslproto.SSLProtocol
    current = getattr(protocol, "max_size", None)
    if not isinstance(current, int):
        return None
    if size < current:
        protocol.max_size = size
    return int(protocol.max_size)
