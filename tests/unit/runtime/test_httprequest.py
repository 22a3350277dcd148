"""The server side of HTTP/1.1, pure: request heads, body lengths, answers."""

from __future__ import annotations

import pytest

from mpi_controller.runtime.httprequest import BadRequest, body_length, encode_answer, parse_head


def test_a_head_is_read_with_its_target_split_and_header_names_lower_cased() -> None:
    head = parse_head(b"POST /convert?timeout=30s HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type:  application/json \r\nX-A: 1\r\nx-a: 2")
    assert (head.method, head.path, head.query, head.http11) == (
        "POST", "/convert", "timeout=30s", True)
    assert head.headers == {"host": "x", "content-type": "application/json", "x-a": "2"}
    assert head.keep_alive
    assert not parse_head(b"POST / HTTP/1.1\r\nConnection: Close").keep_alive
    assert not parse_head(b"POST / HTTP/1.0").keep_alive
    assert parse_head(b"POST / HTTP/1.0\r\nConnection: keep-alive").keep_alive


@pytest.mark.parametrize(("head", "message"), [
    (b"POST /convert", "bad request line 'POST /convert'"),
    (b"POST /convert HTTP/2.0", "bad request line 'POST /convert HTTP/2.0'"),
    (b"post /convert HTTP/1.1", "bad request line 'post /convert HTTP/1.1'"),
    (b"POST convert HTTP/1.1", "bad request line 'POST convert HTTP/1.1'"),
    (b"POST / HTTP/1.1\r\nno colon", "bad header line 'no colon'"),
    (b"POST / HTTP/1.1\r\nName : v", "bad header line 'Name : v'"),
    (b"POST / HTTP/1.1\r\n: v", "bad header line ': v'"),
])
def test_a_malformed_head_is_a_400_naming_the_line(head: bytes, message: str) -> None:
    with pytest.raises(BadRequest) as err:
        parse_head(head)
    assert (err.value.status, str(err.value)) == (400, message)


def test_the_body_length_and_what_is_refused() -> None:
    assert body_length(parse_head(b"POST / HTTP/1.1"), 10) == 0
    assert body_length(parse_head(b"POST / HTTP/1.1\r\nContent-Length: 10"), 10) == 10
    for header, status, message in [
            (b"Content-Length: 11", 413, "the body (11 bytes) is over the 10 this server reads"),
            (b"Content-Length: -1", 400, "bad Content-Length '-1'"),
            (b"Content-Length: \xb2", 400, "bad Content-Length '\xb2'"),  # "²": a digit
            (b"Transfer-Encoding: chunked", 501, "a request body with a Transfer-Encoding is "
                                                 "not read; send its Content-Length")]:
        with pytest.raises(BadRequest) as err:
            body_length(parse_head(b"POST / HTTP/1.1\r\n" + header), 10)
        assert (err.value.status, str(err.value)) == (status, message)


def test_an_answer_on_the_wire() -> None:
    assert encode_answer(200, b"{}", "application/json", close=False) == (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    assert encode_answer(405, b"no\n", "text/plain", close=True,
                         headers=[("Allow", "POST")]) == (
        b"HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
        b"Connection: close\r\nAllow: POST\r\n\r\nno\n")
