r"""A pure, incremental parser of one HTTP/1.1 response, for :mod:`~mpi_controller.runtime.http1`.

Contract: :class:`ResponseParser` is fed bytes (:meth:`~ResponseParser.feed`) and the end of
the connection (:meth:`~ResponseParser.feed_eof`) and parses one response as RFC 9112 frames
it: status line, headers, then a body framed by ``Transfer-Encoding: chunked`` (extensions
and trailers skipped), ``Content-Length``, or the end of the connection. Interim 1xx answers
are skipped; a HEAD answer and 204/304 have no body. Header names are lower-cased (a repeated
one keeps its last value). Malformed input raises :class:`ProtocolError`; bytes past the end
of the response are malformed (the client never pipelines); a connection that ends before
the response is complete raises :class:`ConnectionClosed`. Both are ``OSError``\ s. A streamed
body (a watch) is taken as it arrives with :meth:`~ResponseParser.take_body`. No I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ConnectionClosed", "ProtocolError", "Response", "ResponseParser"]

_MAX_HEAD = 64 * 1024  # status line and headers
_NO_BODY_STATUS = frozenset({204, 304})


class ProtocolError(OSError):
    """The server's answer is not HTTP/1.1 as this client reads it."""


class ConnectionClosed(ConnectionError):
    """The server closed the connection before the answer was complete."""


@dataclass(frozen=True, slots=True)
class Response:
    """A complete answer: status, headers (names lower-cased; a repeated one keeps its last
    value), body, and whether the connection may carry another request."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    keep_alive: bool


class ResponseParser:
    """Incremental parser of one response (see the module docstring)."""

    __slots__ = ("_buf", "_chunks", "_head_request", "_remaining", "_state", "headers",
                 "keep_alive", "status")

    def __init__(self, *, head_request: bool = False) -> None:
        self._head_request = head_request
        self._buf = bytearray()
        self._chunks: list[bytes] = []
        self._state = "head"  # head, length, chunk-size, chunk-data, chunk-crlf, trailer,
        #                       until-close, done
        self._remaining = 0
        self.status = 0
        self.headers: dict[str, str] = {}
        self.keep_alive = True

    @property
    def started(self) -> bool:
        """Whether any byte of the answer has arrived."""
        return bool(self._buf) or self._state != "head" or self.status != 0

    @property
    def done(self) -> bool:
        return self._state == "done"

    def response(self) -> Response:
        return Response(self.status, self.headers, b"".join(self._chunks), self.keep_alive)

    @property
    def head_done(self) -> bool:
        """Whether the final status line and headers have been read."""
        return self.status != 0

    @property
    def body_buffered(self) -> int:
        """Bytes of body read and not yet taken."""
        return sum(map(len, self._chunks))

    def take_body(self) -> bytes:
        """The body bytes read since the last call (a streamed answer: a watch)."""
        chunks = self._chunks
        if not chunks:
            return b""
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        return data

    def feed(self, data: bytes) -> bool:
        """Take more bytes; True once the response is complete. Bytes past its end are an
        error (this client never pipelines)."""
        if not self._buf:
            if self._state == "length":  # the common case: body bytes
                return self._take_length(data)
            if self._state == "chunk-size" and self._whole_chunks(data):  # a watch's events
                return False
        self._buf += data
        while self._state != "done":
            if not self._step():
                return False
        if self._buf:
            raise ProtocolError("bytes after the end of the response")
        return True

    def feed_eof(self) -> bool:
        """The connection ended: True when that completes the response (a body read until
        the end), else :class:`ConnectionClosed`."""
        if self._state == "until-close":
            self._chunks.append(bytes(self._buf))
            self._buf.clear()
            self._state = "done"
            return True
        if self._state == "done":
            return True
        raise ConnectionClosed("the server closed the connection before the answer was "
                               "complete" if self.started else
                               "the server closed the connection without an answer")

    def _whole_chunks(self, data: bytes) -> bool:
        """Take ``data`` at once when it is whole, non-empty chunks without extensions (a
        watch sends each event as one); False (nothing taken) when it is anything else."""
        chunks, start, end = [], 0, len(data)
        while start < end:
            line = data.find(b"\r\n", start, start + 18)
            if line < 0:
                return False
            try:
                size = int(data[start:line], 16)
            except ValueError:
                return False
            first, stop = line + 2, line + 2 + size
            if size <= 0 or data[stop:stop + 2] != b"\r\n":
                return False
            chunks.append(data[first:stop])
            start = stop + 2
        self._chunks.extend(chunks)
        return True

    def _take_length(self, data: bytes) -> bool:
        if len(data) < self._remaining:
            self._chunks.append(data)
            self._remaining -= len(data)
            return False
        if len(data) > self._remaining:
            raise ProtocolError("bytes after the end of the response")
        self._chunks.append(data)
        self._remaining = 0
        self._state = "done"
        return True

    def _step(self) -> bool:
        """Advance through the buffer; False when more bytes are needed."""
        state = self._state
        if state == "head":
            return self._parse_head()
        if state == "length":
            data = bytes(self._buf)
            self._buf.clear()
            return self._take_length(data) or bool(self._buf)
        if state == "until-close":
            self._chunks.append(bytes(self._buf))
            self._buf.clear()
            return False
        if state == "chunk-data":
            take = min(self._remaining, len(self._buf))
            if take:
                self._chunks.append(bytes(self._buf[:take]))
                del self._buf[:take]
                self._remaining -= take
            if self._remaining:
                return False
            self._state = "chunk-crlf"
            return True
        line = self._line()
        if line is None:
            return False
        if state == "chunk-crlf":
            if line:
                raise ProtocolError("chunk not followed by CRLF")
            self._state = "chunk-size"
        elif state == "chunk-size":
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise ProtocolError(f"bad chunk size {line[:40]!r}") from None
            if size < 0:
                raise ProtocolError("negative chunk size")
            self._remaining = size
            self._state = "chunk-data" if size else "trailer"
        elif state == "trailer" and not line:
            self._state = "done"
        return True

    def _line(self) -> bytes | None:
        end = self._buf.find(b"\r\n")
        if end < 0:
            if len(self._buf) > _MAX_HEAD:
                raise ProtocolError("line too long")
            return None
        line = bytes(self._buf[:end])
        del self._buf[:end + 2]
        return line

    def _parse_head(self) -> bool:
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buf) > _MAX_HEAD:
                raise ProtocolError("response head too long")
            return False
        lines = bytes(self._buf[:end]).decode("latin-1").split("\r\n")
        del self._buf[:end + 4]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError(f"bad status line {lines[0][:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise ProtocolError(f"bad header line {line[:80]!r}")
            headers[name.lower()] = value.strip()
        if 100 <= status < 200:  # interim answer: the real one follows
            return True
        self.status, self.headers = status, headers
        connection = headers.get("connection", "").lower()
        self.keep_alive = ("close" not in connection if parts[0] == "HTTP/1.1"
                           else "keep-alive" in connection)
        self._state = self._body_state(status, headers)
        if self._state == "length" and self._remaining == 0:
            self._state = "done"
        return True

    def _body_state(self, status: int, headers: Mapping[str, str]) -> str:
        if self._head_request or status in _NO_BODY_STATUS:
            return "done"
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.lower() != "chunked":
                raise ProtocolError(f"unsupported transfer coding {coding!r}")
            return "chunk-size"
        length = headers.get("content-length")
        if length is None:
            self.keep_alive = False
            return "until-close"
        if not length.isdigit():
            raise ProtocolError(f"bad Content-Length {length!r}")
        self._remaining = int(length)
        return "length"
