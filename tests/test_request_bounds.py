"""`serve` and `proxy` bounded in time and memory whatever a client sends, one test a case.

A head or a body that does not come in time, a length past the cap, many bodies at once,
a body of millions of values, the heavy work of a large body (done while the event loop
answers others), the requests `serve` keeps (their headers counted), and serve's log
naming a stream a stream. Times here are generous bounds, never measured: the figures
are `bench.stall`'s.
"""

from __future__ import annotations

import asyncio
import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from aiohttp import web
from conftest import LIBRARY
from test_serve_cli import BODY, TEXT_ONLY, _whole_stream

import harness._http.bounds
import harness._http.hosting
import harness._http.proxy
import harness._replay.replayer
from harness._cassette.codec import Cassette
from harness._cassette.request import CapturedRequest
from harness._exceptions import RequestMismatchError
from harness._http.bounds import INLINE_BYTES, BodyBudget
from harness._http.hosting import MAX_BODY, TOO_MANY_VALUES, ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import KEPT_REQUEST_BYTES, CassetteServer
from harness._json import MAX_VALUES, VALUE_BYTES, held_bytes
from harness._replay.replayer import Replayer

#: What every wait here is bounded by: far more than any of them takes.
PATIENCE = 30.0
CASSETTE = {"x-harness-cassette": "text_only", "x-api-key": "any-key"}
JSON = {"content-type": "application/json"}


def _upstream_app() -> web.Application:
    """An upstream answering any POST with `text_only`'s stream, whatever its body."""

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=_whole_stream(TEXT_ONLY), content_type="text/event-stream")

    app = web.Application(client_max_size=2 * MAX_BODY)
    app.router.add_post("/{tail:.*}", answer)
    app.router.add_get("/{tail:.*}", answer)
    return app


@pytest.fixture
def upstream() -> Iterator[str]:
    with ServerThread(_upstream_app()) as url:
        yield url


def _app(name: str, upstream: str, out: Path, lines: list[str]) -> web.Application:
    if name == "serve":
        return CassetteServer([str(LIBRARY)], log=lines.append).app()
    return RecordingProxy(upstream, out, log=lines.append).app()


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=PATIENCE)


def _head(length: int, extra: bytes = b"") -> bytes:
    """The head of a streamed Messages request of `length` bytes, `extra` header lines
    first; the connection closed after its answer."""
    fields = {**CASSETTE, **JSON, "Host": "127.0.0.1", "Connection": "close"}
    lines = b"".join(f"{name}: {value}\r\n".encode() for name, value in fields.items())
    return (
        b"POST /v1/messages HTTP/1.1\r\n" + extra + lines + b"Content-Length: %d\r\n\r\n" % length
    )


def _padded(size: int) -> bytes:
    """A streamed Messages request of `size` bytes, padded by a string."""
    bare = len(json.dumps({**BODY, "pad": ""}).encode())
    return json.dumps({**BODY, "pad": "x" * (size - bare)}).encode()


def _answer(connection: socket.socket) -> tuple[int, bytes]:
    """The status and body of an answer: its `Content-Length` bytes, or (a stream) all
    until the server closes the connection."""
    answer = b""
    while b"\r\n\r\n" not in answer and (chunk := connection.recv(65536)):
        answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    while (len(body) < int(length[1]) if length else True) and (chunk := connection.recv(65536)):
        body += chunk
    return int(head.split()[1]), body


def _closed(connection: socket.socket, dribble: bytes = b"") -> bool:
    """Whether the server closes `connection` within `PATIENCE` seconds, while `dribble`
    is sent a byte every tenth of a second."""
    end = time.monotonic() + PATIENCE
    sent = 0
    while time.monotonic() < end:
        if sent < len(dribble):
            try:
                connection.send(dribble[sent : sent + 1])
            except OSError:  # a reset: closed
                return True
            sent += 1
        readable, _, _ = select.select([connection], [], [], 0.1)
        if readable:
            try:
                return connection.recv(1) == b""
            except OSError:
                return True
    return False


# -- the time a request may take ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["serve", "proxy"])
@pytest.mark.parametrize(
    "dribble",
    [b"", b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-a: " + b"b" * 1000],
    ids=["silent", "a head a byte at a time"],
)
def test_a_head_that_does_not_come_in_time_closes_the_connection(
    name: str,
    dribble: bytes,
    upstream: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(harness._http.hosting, "HEAD_TIMEOUT", 0.5)
    with ServerThread(_app(name, upstream, tmp_path, [])) as url, _connect(url) as connection:
        assert _closed(connection, dribble)


@pytest.mark.parametrize("name", ["serve", "proxy"])
def test_a_body_that_does_not_come_in_time_is_the_apis_408_and_the_connection_closes(
    name: str, upstream: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness._http.bounds, "BODY_TIMEOUT", 0.5)
    monkeypatch.setattr(harness._http.hosting, "LINGER", 0.5)
    lines: list[str] = []
    with ServerThread(_app(name, upstream, tmp_path, lines)) as url, _connect(url) as connection:
        connection.sendall(_head(1000) + b'{"model": ')  # and no more
        status, body = _answer(connection)
        assert _closed(connection)
    assert status == 408
    assert json.loads(body)["error"] == {
        "type": "timeout_error",
        "message": "harness: the request body did not arrive within 0.5 s",
    }
    assert lines == ["POST /v1/messages -> 408"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["serve", "proxy"])
def test_a_length_past_the_cap_is_the_apis_413_before_any_byte_of_the_body(
    name: str, upstream: str, tmp_path: Path
) -> None:
    with ServerThread(_app(name, upstream, tmp_path, [])) as url, _connect(url) as connection:
        connection.sendall(_head(99_999_999_999))  # and no byte of the body
        status, body = _answer(connection)
    assert status == 413
    assert json.loads(body)["error"]["type"] == "request_too_large"


# -- the memory bodies may hold -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["serve", "proxy"])
def test_a_body_waits_its_turn_while_the_bodies_held_fill_the_budget(
    name: str, upstream: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness._http.hosting, "BODIES_AT_ONCE", 100_000)
    first, second = _padded(80_000), _padded(50_000)
    with (
        ServerThread(_app(name, upstream, tmp_path, [])) as url,
        _connect(url) as holding,
        _connect(url) as waiting,
    ):
        holding.sendall(_head(len(first)) + first[:10])  # 80 000 bytes of the budget taken
        time.sleep(0.2)  # its head read first
        waiting.sendall(_head(len(second)) + second)  # whole, but 130 000 would be held
        readable, _, _ = select.select([waiting], [], [], 1.0)
        assert not readable  # not answered: its body waits, unread
        holding.sendall(first[10:])
        assert _answer(holding)[0] == 200
        assert _answer(waiting)[0] == 200


def test_a_request_without_a_body_takes_nothing_of_the_budget(
    upstream: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness._http.hosting, "BODIES_AT_ONCE", 100_000)
    first = _padded(100_000)
    with (
        ServerThread(_app("proxy", upstream, tmp_path, [])) as url,
        _connect(url) as holding,
    ):
        holding.sendall(_head(len(first)) + first[:10])  # the whole budget taken
        time.sleep(0.2)
        got = httpx2.get(f"{url}/v1/responses/resp_1?stream=true", timeout=10)
        assert got.content == _whole_stream(TEXT_ONLY)  # passed through meanwhile
        holding.sendall(first[10:])
        assert _answer(holding)[0] == 200


def test_the_budget_gives_turns_in_order_and_a_waiter_gone_gives_its_turn_on() -> None:
    async def scenario() -> list[str]:
        budget = BodyBudget(10)
        order: list[str] = []
        release = asyncio.Event()

        async def hold(name: str, size: int) -> None:
            async with budget.holding(size):
                order.append(name)
                await release.wait()

        first = asyncio.create_task(hold("first, 6", 6))
        await asyncio.sleep(0)
        large = asyncio.create_task(hold("large, 8", 8))  # waits: 14 > 10
        small = asyncio.create_task(hold("small, 2", 2))  # fits, but waits its turn
        await asyncio.sleep(0.01)
        assert order == ["first, 6"]
        large.cancel()  # gone: the small one's turn comes
        await asyncio.sleep(0.01)
        assert order == ["first, 6", "small, 2"] and budget.held == 8
        release.set()
        await asyncio.gather(first, small)
        assert budget.held == 0
        return order

    assert asyncio.run(scenario()) == ["first, 6", "small, 2"]


def _too_many_values() -> bytes:
    """A Messages request of about 2 MB whose commas alone pass the value limit."""
    return json.dumps({**BODY, "pad": [0] * MAX_VALUES}, separators=(",", ":")).encode()


def test_serve_refuses_a_body_of_too_many_values_unparsed_and_keeps_nothing() -> None:
    lines: list[str] = []
    with ServerThread(CassetteServer([str(LIBRARY)], log=lines.append).app()) as url:
        answer = httpx2.post(
            f"{url}/v1/messages", content=_too_many_values(), headers={**CASSETTE, **JSON}
        )
        listed = httpx2.get(f"{url}/_harness/requests").json()
    assert answer.status_code == 413
    assert answer.json()["error"] == {
        "type": "request_too_large",
        "message": f"harness serve: {TOO_MANY_VALUES}",
    }
    told = f"the body may hold more than {MAX_VALUES} JSON values"
    assert lines == [f"#1 POST /v1/messages -> 413 ({told})"]
    assert listed == []


def test_the_proxy_forwards_a_body_of_too_many_values_and_records_nothing(
    upstream: str, tmp_path: Path
) -> None:
    lines: list[str] = []
    with ServerThread(RecordingProxy(upstream, tmp_path, log=lines.append).app()) as url:
        answer = httpx2.post(
            f"{url}/v1/messages", content=_too_many_values(), headers={**CASSETTE, **JSON}
        )
    assert answer.content == _whole_stream(TEXT_ONLY)  # upstream's answer to it
    assert lines == [
        f"POST /v1/messages: not recorded: {TOO_MANY_VALUES}",
        "POST /v1/messages -> 200 (passed through, not recorded)",
    ]
    assert list(tmp_path.iterdir()) == []


def test_the_headers_of_the_requests_kept_count_against_the_bytes() -> None:
    headers = {f"x-h{number:03}": "v" * 8000 for number in range(120)}
    body = json.dumps(BODY).encode()
    each = held_bytes(body) + sum(len(k) + len(v) + VALUE_BYTES for k, v in headers.items())
    replayer = Replayer([str(TEXT_ONLY)], keep_request_bytes=4 * 1024 * 1024)
    for _ in range(20):
        replayer.capture("POST", "/v1/messages", headers, body)
    assert len(replayer.requests) == 4 * 1024 * 1024 // each == 4


def test_serve_keeps_fewer_requests_when_their_headers_are_large() -> None:
    headers = b"".join(b"x-h%03d: %s\r\n" % (number, b"v" * 8000) for number in range(120))
    body = json.dumps(BODY).encode()
    sent = KEPT_REQUEST_BYTES // len(headers) + 10  # each past its share of the bytes
    with ServerThread(CassetteServer([str(LIBRARY)]).app()) as url:
        for _ in range(sent):
            with _connect(url) as connection:
                connection.sendall(_head(len(body), headers) + body)
                assert _answer(connection)[0] == 200
        listed = httpx2.get(f"{url}/_harness/requests", timeout=PATIENCE).json()
    assert 0 < len(listed) < sent - 10
    assert len(listed[-1]["headers"]) > 120  # kept whole, the latest


# -- the heavy work of a large body, off the event loop --------------------------------------------


Block = Callable[[Any, str, Callable[..., bool]], tuple[threading.Event, threading.Event]]


@pytest.fixture
def blocking(monkeypatch: pytest.MonkeyPatch) -> Iterator[Block]:
    """`block(owner, name, large)`: `owner.name` made to wait, when `large(*args)` says its
    call is the large request's, until the test has seen another client answered; the
    events it waits on (`entered`, `release`)."""
    events: list[threading.Event] = []

    def block(
        owner: Any, name: str, large: Callable[..., bool]
    ) -> tuple[threading.Event, threading.Event]:
        entered, release = threading.Event(), threading.Event()
        events.append(release)
        real = getattr(owner, name)

        def waiting(*args: Any, **kwargs: Any) -> Any:
            if large(*args, **kwargs):
                entered.set()
                release.wait(PATIENCE)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, waiting)
        return entered, release

    yield block
    for release in events:
        release.set()


def _answered_meanwhile(
    url: str, large: bytes, entered: threading.Event, release: threading.Event
) -> None:
    """Send `large` from one client and, once its heavy work has begun, a small request
    from another, which must be answered while that work goes on."""
    got: dict[str, int] = {}

    def send_large() -> None:
        got["large"] = httpx2.post(
            f"{url}/v1/messages", content=large, headers={**CASSETTE, **JSON}, timeout=PATIENCE
        ).status_code

    sender = threading.Thread(target=send_large)
    sender.start()
    try:
        assert entered.wait(PATIENCE)
        small = httpx2.post(f"{url}/v1/messages", json=BODY, headers=CASSETTE, timeout=10)
        assert small.content == _whole_stream(TEXT_ONLY)
        assert not release.is_set()  # the large one still being worked on
    finally:
        release.set()
        sender.join(PATIENCE)
    assert got["large"] == 200


def test_serve_answers_others_while_a_large_body_is_parsed_and_redacted(
    blocking: Block,
) -> None:
    large = _padded(4 * INLINE_BYTES)
    entered, release = blocking(
        CapturedRequest, "of", lambda method, path, headers, body, *rest: "pad" in body
    )
    with ServerThread(CassetteServer([str(LIBRARY)]).app()) as url:
        _answered_meanwhile(url, large, entered, release)


def test_the_proxy_answers_others_while_a_large_body_is_read(
    blocking: Block,
    upstream: str,
    tmp_path: Path,
) -> None:
    large = _padded(4 * INLINE_BYTES)
    entered, release = blocking(
        harness._http.proxy, "_recorded_request", lambda request, body: len(body) == len(large)
    )
    with ServerThread(RecordingProxy(upstream, tmp_path).app()) as url:
        _answered_meanwhile(url, large, entered, release)
    assert len(list(tmp_path.iterdir())) == 2  # both recorded


# -- serve's log ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "cassette", "kind"),
    [
        ("/model/claude-sonnet-5/invoke-with-response-stream", "text_only", "stream"),
        ("/model/claude-sonnet-5/invoke", "text_only", "json"),
        ("/model/us.amazon.nova-micro-v1:0/converse-stream", "bedrock/converse/text", "stream"),
        ("/model/us.amazon.nova-micro-v1:0/converse", "bedrock/converse/text", "json"),
    ],
)
def test_serves_log_names_a_stream_its_path_asks_for_a_stream(
    path: str, cassette: str, kind: str
) -> None:
    lines: list[str] = []
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": []}
    with ServerThread(CassetteServer([str(LIBRARY)], log=lines.append).app()) as url:
        answer = httpx2.post(
            url + path, json=body, headers={"x-harness-cassette": cassette}, timeout=PATIENCE
        )
    assert answer.status_code == 200
    assert lines == [f"#1 POST {path} {kind} -> 200 from {cassette}.jsonl"]


# -- a mismatch, however large, costs no diff it does not show -------------------------------------


def test_a_request_is_matched_without_making_a_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    session = LIBRARY / "openai" / "chat" / "sessions" / "weather" / "turn-01.jsonl"
    replayer = Replayer([str(session)])
    sent = replayer.capture("POST", "/v1/chat/completions", {}, json.dumps(BODY).encode())

    def no_diff(*args: Any) -> str:
        raise AssertionError("a diff made to tell whether a request matches")

    monkeypatch.setattr(harness._replay.replayer, "_field_diff", no_diff)
    assert not replayer.matches(Cassette(session), sent)


def test_a_mismatch_of_a_large_field_is_told_without_its_diff() -> None:
    session = LIBRARY / "openai" / "chat" / "sessions" / "weather" / "turn-01.jsonl"
    replayer = Replayer([str(session)])
    messages = [{"role": "user", "content": "x"}] * 10_000
    large = {**BODY, "model": "gpt-4.1-mini", "messages": messages}
    sent = replayer.capture("POST", "/v1/chat/completions", {}, json.dumps(large).encode())
    with pytest.raises(RequestMismatchError, match="too long to show the diff") as raised:
        replayer.respond_to(sent)
    assert len(str(raised.value)) < 5000
