"""The server side of HTTP/1.1, pure: request heads read, answers written, for
:mod:`~mpi_controller.runtime.https`.

Contract:

* :func:`parse_head` reads a request head (the bytes before its blank line) into a
  :class:`RequestHead`: the method, the path and query of the target, the version and the
  headers (names lower-cased; a repeated one keeps its last value). A head that is not
  HTTP/1.0 or 1.1 as RFC 9112 frames it raises :class:`BadRequest` (status 400).
* :func:`body_length` is how many body bytes follow a head: its ``Content-Length`` (0 without
  one); :class:`BadRequest` with status 400 for a malformed length, 413 for one over
  ``max_body``, 501 for a ``Transfer-Encoding`` (chunked request bodies are not read: the
  API server sends webhooks their length).
* :attr:`RequestHead.keep_alive`: HTTP/1.1 unless ``Connection: close``, HTTP/1.0 only with
  ``Connection: keep-alive``.
* :func:`encode_answer` writes an answer: status line, ``Content-Type``, ``Content-Length``,
  ``Connection: close`` when the connection ends after it, extra headers, then the body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["REASONS", "BadRequest", "RequestHead", "body_length", "encode_answer", "parse_head"]

REASONS = {100: "Continue", 200: "OK", 400: "Bad Request", 404: "Not Found",
           405: "Method Not Allowed", 413: "Content Too Large", 500: "Internal Server Error",
           501: "Not Implemented"}


class BadRequest(ValueError):
    """A request this server does not read; ``status`` is the answer's."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class RequestHead:
    method: str
    path: str
    query: str
    http11: bool
    headers: Mapping[str, str]

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        return "close" not in connection if self.http11 else "keep-alive" in connection


def parse_head(data: bytes) -> RequestHead:
    """The request head ``data`` (without the blank line that ends it); raises BadRequest."""
    text = data.decode("latin-1")
    request_line, *lines = text.split("\r\n")
    parts = request_line.split(" ")
    if (len(parts) != 3 or not parts[0].isalpha() or not parts[0].isupper()
            or parts[2] not in ("HTTP/1.1", "HTTP/1.0") or not parts[1].startswith("/")):
        raise BadRequest(400, f"bad request line {request_line[:80]!r}")
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or " " in name:
            raise BadRequest(400, f"bad header line {line[:80]!r}")
        headers[name.lower()] = value.strip()
    path, _, query = parts[1].partition("?")
    return RequestHead(parts[0], path, query, parts[2] == "HTTP/1.1", headers)


def body_length(head: RequestHead, max_body: int) -> int:
    """The length of the body after ``head``; raises BadRequest (see the module)."""
    if "transfer-encoding" in head.headers:
        raise BadRequest(501, "a request body with a Transfer-Encoding is not read; send its "
                              "Content-Length")
    length = head.headers.get("content-length")
    if length is None:
        return 0
    if not length.isdigit() or not length.isascii():
        raise BadRequest(400, f"bad Content-Length {length[:40]!r}")
    size = int(length)
    if size > max_body:
        raise BadRequest(413, f"the body ({size} bytes) is over the {max_body} this server "
                              "reads")
    return size


def encode_answer(status: int, body: bytes, content_type: str, *, close: bool,
                  headers: Sequence[tuple[str, str]] = ()) -> bytes:
    """The bytes of an answer on the wire."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}",
             f"Content-Type: {content_type}", f"Content-Length: {len(body)}",
             *(["Connection: close"] if close else []),
             *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
