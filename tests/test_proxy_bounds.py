"""Issue 20: `harness proxy` bounded in memory and time, and redacting what it keeps.

A hostile or broken upstream (a compression bomb, an endless stream, a huge event, a
silent server, secrets in its answers) costs the proxy bounded memory and time; the
client still gets what upstream sent, and the cassette is written whole or not at all.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import brotli
import httpx2
import orjson
import pytest
import zstandard
from aiohttp import web
from conftest import LIBRARY, parsing_spied

import harness._http.proxy
import harness._providers.jsonarray
import harness._providers.sse
import harness._redact
from harness._cassette.codec import MAX_BODY_BYTES, MAX_LINE_BYTES, Cassette
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._json import MAX_VALUES
from harness._providers.sse import encode_event

KEY = "sk-ant-proxy-bounds-key-0123456789"
REQUEST: dict[str, Any] = {"model": "claude-harness-test", "max_tokens": 9, "messages": []}
EVENTS = list(Cassette(LIBRARY / "text_only.jsonl").events())
SSE = {"content-type": "text/event-stream"}
FRAMES = "application/vnd.amazon.eventstream"
#: What the bombs expand to: past every cap, and far past what a test should hold.
BOMB_BYTES = 2 * MAX_BODY_BYTES

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda data: gzip.compress(data, compresslevel=6),
    "br": lambda data: brotli.compress(data, quality=1),
    "zstd": lambda data: zstandard.ZstdCompressor(level=1).compress(data),
}


class Upstream:
    """A scripted upstream: `answers[name]` answers a request whose `x-test` is `name`."""

    def __init__(self) -> None:
        self.release = threading.Event()  # set at the end: no handler outlives its test
        self.answers: dict[str, Callable[[web.Request], Any]] = {}

    async def messages(self, request: web.Request) -> web.StreamResponse:
        answer: web.StreamResponse = await self.answers[request.headers["x-test"]](request)
        return answer

    async def wait(self) -> None:
        await asyncio.to_thread(self.release.wait, 30)


@pytest.fixture
def upstream() -> Iterator[tuple[Upstream, str]]:
    scripted = Upstream()
    app = web.Application()
    app.router.add_post("/v1/messages", scripted.messages)
    app.router.add_post("/model/{model}/{call}", scripted.messages)  # Bedrock's calls
    app.router.add_post("/v1beta/models/{call}", scripted.messages)  # Gemini's
    with ServerThread(app) as url:
        try:
            yield scripted, url
        finally:
            scripted.release.set()


def _proxy(url: str, out: Path, lines: list[str], **options: Any) -> ServerThread:
    return ServerThread(RecordingProxy(url, out, log=lines.append, **options).app())


def _post(url: str, test: str, *, stream: bool = True) -> bytes:
    """The answer's body as it came over the wire, still compressed if it was; `stream`:
    the request asks for a stream (the proxy reads the answer as one, as the SDK does)."""
    headers = {"x-test": test, "x-api-key": KEY}
    request = {**REQUEST, "stream": True} if stream else REQUEST
    with (
        httpx2.Client(timeout=30) as client,
        client.stream("POST", f"{url}/v1/messages", json=request, headers=headers) as answer,
    ):
        return b"".join(answer.iter_raw())


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    """`BOMB_BYTES` of zeros, each compressed: a line with no end, past both caps."""
    zeros = bytes(BOMB_BYTES)
    return {coding: compress(zeros) for coding, compress in COMPRESS.items()}


@pytest.mark.slow
@pytest.mark.parametrize("coding", COMPRESS)
def test_a_compression_bomb_reaches_the_client_as_sent_and_is_never_expanded_whole(
    coding: str, bombs: dict[str, bytes], upstream: tuple[Upstream, str], tmp_path: Path
) -> None:
    scripted, upstream_url = upstream
    bomb = bombs[coding]

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=bomb, headers={**SSE, "content-encoding": coding})

    scripted.answers["bomb"] = answer
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:
        tracemalloc.start()
        try:
            got = _post(url, "bomb")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert got == bomb  # as sent, still compressed
    assert lines == [
        f"POST /v1/messages -> 200, not recorded: "
        f"after event 0: a line longer than {MAX_LINE_BYTES} bytes"
    ]
    assert list(tmp_path.iterdir()) == []
    assert peak < 4 * MAX_LINE_BYTES, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("coding", COMPRESS)
def test_an_answer_past_the_size_cap_reaches_the_client_and_is_not_recorded(
    coding: str, upstream: tuple[Upstream, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness._http.proxy, "MAX_BODY_BYTES", 64 * 1024)
    scripted, upstream_url = upstream
    body = COMPRESS[coding](json.dumps({"type": "message", "padding": " " * 100_000}).encode())

    async def answer(request: web.Request) -> web.Response:
        headers = {"content-type": "application/json", "content-encoding": coding}
        return web.Response(body=body, headers=headers)

    scripted.answers["big"] = answer
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:
        got = _post(url, "big", stream=False)
    assert got == body
    assert lines == [
        f"POST /v1/messages -> 200, not recorded: the answer is over {64 * 1024} bytes, the limit"
    ]
    assert list(tmp_path.iterdir()) == []


def test_an_endless_stream_is_passed_on_and_stops_being_recorded_at_the_cap(
    upstream: tuple[Upstream, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness._http.proxy, "MAX_BODY_BYTES", 256 * 1024)
    scripted, upstream_url = upstream
    ping = encode_event({"type": "ping"})
    sent = 0

    async def answer(request: web.Request) -> web.StreamResponse:
        nonlocal sent
        response = web.StreamResponse(headers=SSE)
        await response.prepare(request)
        await response.write(encode_event(EVENTS[0]))
        while sent < 1024 * 1024:  # "endless": four times the cap
            await response.write(ping * 100)
            sent += len(ping) * 100
        await response.write_eof()
        return response

    scripted.answers["endless"] = answer
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:
        got = _post(url, "endless")
    assert len(got) == len(encode_event(EVENTS[0])) + sent
    assert lines == [
        f"POST /v1/messages -> 200, not recorded: the answer is over {256 * 1024} bytes, the limit"
    ]
    assert list(tmp_path.iterdir()) == []


def test_an_event_past_the_line_limit_reaches_the_client_and_is_not_recorded(
    upstream: tuple[Upstream, str], tmp_path: Path
) -> None:
    scripted, upstream_url = upstream
    huge = _delta({"type": "text_delta", "text": "x" * (12 * 2**20)})  # validate refuses it
    body = b"".join(encode_event(event) for event in [*EVENTS[:3], huge, *EVENTS[3:]])

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, headers=SSE)

    scripted.answers["huge"] = answer
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:
        got = _post(url, "huge")
    assert got == body
    assert lines == [
        f"POST /v1/messages -> 200, not recorded: "
        f"after event 3: a line longer than {MAX_LINE_BYTES} bytes"
    ]
    assert list(tmp_path.iterdir()) == []


def test_an_upstream_silent_before_its_answer_is_the_apis_504(
    upstream: tuple[Upstream, str], tmp_path: Path
) -> None:
    scripted, upstream_url = upstream

    async def answer(request: web.Request) -> web.Response:
        await scripted.wait()
        return web.Response(status=204)

    scripted.answers["silent"] = answer
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines, timeout=0.2) as url:
        got = httpx2.post(f"{url}/v1/messages", json=REQUEST, headers={"x-test": "silent"})
    assert got.status_code == 504
    assert got.json() == {
        "type": "error",
        "error": {
            "type": "timeout_error",
            "message": f"harness proxy: no answer from upstream {upstream_url} within 0.2 s "
            "(--upstream-timeout)",
        },
    }
    assert lines[0].startswith("POST /v1/messages -> 504 (no answer from upstream")
    assert list(tmp_path.iterdir()) == []


def test_an_upstream_that_never_accepts_the_connection_is_the_apis_504(
    tmp_path: Path,
) -> None:
    # A listening socket whose one-place queue is taken: the proxy's connect hangs.
    with socket.socket() as listening, socket.socket() as queued:
        listening.bind(("127.0.0.1", 0))
        listening.listen(0)
        host, port = listening.getsockname()
        queued.connect((host, port))
        upstream_url = f"http://{host}:{port}"
        lines: list[str] = []
        with _proxy(upstream_url, tmp_path, lines, timeout=0.2) as url:
            got = httpx2.post(f"{url}/v1/messages", json=REQUEST, timeout=30)
    assert got.status_code == 504
    assert got.json()["error"] == {
        "type": "timeout_error",
        "message": f"harness proxy: no answer from upstream {upstream_url} within 0.2 s "
        "(--upstream-timeout)",
    }
    assert lines == [lines[0]] and lines[0].startswith("POST /v1/messages -> 504 (no answer")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_an_upstream_silent_mid_stream_is_cut_and_not_recorded(
    upstream: tuple[Upstream, str], tmp_path: Path
) -> None:
    scripted, upstream_url = upstream

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers=SSE)
        await response.prepare(request)
        await response.write(encode_event(EVENTS[0]))
        await scripted.wait()
        return response

    scripted.answers["stalls"] = answer
    lines: list[str] = []
    # A second of silence, not less: on a loaded machine upstream's headers alone can take
    # a fifth of one, and the proxy would answer a 504 before the stream began.
    with (
        _proxy(upstream_url, tmp_path, lines, timeout=1.0) as url,
        pytest.raises(httpx2.RemoteProtocolError),
    ):
        _post(url, "stalls")
    assert lines == ["POST /v1/messages -> 200, upstream sent nothing for 1 s: cut, not recorded"]
    assert list(tmp_path.iterdir()) == []


SECRET = "sk-ant-upstream-secret-0123456789"


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": 0, "delta": delta}


def test_credentials_in_upstream_answers_are_not_recorded(
    upstream: tuple[Upstream, str], tmp_path: Path
) -> None:
    scripted, upstream_url = upstream
    thinking = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        _delta({"type": "thinking_delta", "thinking": "hm"}),
        _delta({"type": "signature_delta", "signature": "c2ln"}),
        {"type": "content_block_stop", "index": 0},
    ]
    start = {**EVENTS[0], "message": {**EVENTS[0]["message"], "api_key": SECRET}}
    stream = [start, *thinking, *EVENTS[-2:]]
    error = {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "busy", "auth_token": SECRET},
    }

    async def streamed(request: web.Request) -> web.Response:
        return web.Response(body=b"".join(encode_event(e) for e in stream), headers=SSE)

    async def failed(request: web.Request) -> web.Response:
        return web.json_response(error, status=529, headers={"x-api-key-echo": SECRET})

    scripted.answers.update(streamed=streamed, failed=failed)
    with _proxy(upstream_url, tmp_path, []) as url:
        assert SECRET.encode() in _post(url, "streamed")  # the client gets what upstream sent
        assert b"auth_token" in _post(url, "failed")
    written = sorted(tmp_path.iterdir())
    assert len(written) == 2
    for path in written:
        assert SECRET not in path.read_text()
    kept = [line for line in Cassette(written[0]).events()]
    assert kept[3]["delta"] == {"type": "signature_delta", "signature": "c2ln"}  # not a secret
    assert kept[1]["content_block"]["signature"] == ""
    http_error = json.loads(written[1].read_text().splitlines()[-1])
    assert http_error["body"]["error"] == {"type": "overloaded_error", "message": "busy"}


@pytest.mark.parametrize("depth", [300, 1000, 1100])
@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "message"])
def test_an_answer_nested_past_the_limit_reaches_the_client_and_is_not_recorded(
    upstream: tuple[Upstream, str], tmp_path: Path, depth: int, streamed: bool
) -> None:
    scripted, upstream_url = upstream
    deep = "[" * depth + "]" * depth
    if streamed:
        body = b"".join(encode_event(event) for event in EVENTS[:2])
        body += b'event: ping\ndata: {"type": "ping", "deep": ' + deep.encode() + b"}\n\n"
        headers = SSE
    else:
        block = b'{"type": "text", "text": "hi", "deep": ' + deep.encode() + b"}"
        body = b'{"type": "message", "role": "assistant", "content": [' + block + b"]}"
        headers = {"content-type": "application/json"}

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, headers=headers)

    scripted.answers["deep"] = answer
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:
        assert _post(url, "deep", stream=streamed) == body
    assert len(lines) == 1 and "not recorded: " in lines[0], lines
    assert list(tmp_path.iterdir()) == []


def test_a_message_of_no_cassette_shape_reaches_the_client_and_is_not_recorded(
    upstream: tuple[Upstream, str], tmp_path: Path
) -> None:
    scripted, upstream_url = upstream
    body = b'{"type": "message", "content": [[1], [2]]}'

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, headers={"content-type": "application/json"})

    scripted.answers["odd"] = answer
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:
        assert _post(url, "odd", stream=False) == body
    assert len(lines) == 1 and "not recorded: " in lines[0], lines
    assert list(tmp_path.iterdir()) == []


def test_the_command_line_default_timeout_is_the_proxys() -> None:
    from harness_cli.serve import proxy

    (option,) = (param for param in proxy.params if param.name == "upstream_timeout")
    assert option.default == harness._http.proxy.DEFAULT_UPSTREAM_TIMEOUT


# -- the heavy part of a large answer, off the event loop (issue D6) ------------------------------

#: A Messages answer, not streamed, whose text is `{text}`.
MESSAGE = (
    '{{"id": "msg_1", "type": "message", "role": "assistant", "model": "m",'
    ' "content": [{{"type": "text", "text": "{text}"}}], "stop_reason": "end_turn",'
    ' "stop_sequence": null, "usage": {{"input_tokens": 1, "output_tokens": 1}}}}'
)


def _large_answer(streamed: bool) -> tuple[bytes, dict[str, str]]:
    """An answer of a few hundred kilobytes: a stream with a padded event, or a `Message`."""
    if not streamed:
        return MESSAGE.format(text="x" * 300_000).encode(), {"content-type": "application/json"}
    padded = {"type": "ping", "pad": "x" * 300_000}
    return b"".join(encode_event(event) for event in [*EVENTS[:3], padded, *EVENTS[3:]]), SSE


@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "message"])
def test_the_proxy_answers_others_while_a_large_answer_is_read_into_lines(
    upstream: tuple[Upstream, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    streamed: bool,
) -> None:
    scripted, upstream_url = upstream
    body, headers = _large_answer(streamed)
    small = b"".join(encode_event(event) for event in EVENTS)

    async def large(request: web.Request) -> web.Response:
        return web.Response(body=body, headers=headers)

    async def quick(request: web.Request) -> web.Response:
        return web.Response(body=small, headers=SSE)

    scripted.answers.update(large=large, quick=quick)
    entered, release = threading.Event(), threading.Event()
    kept = harness._http.proxy._kept

    def slow(line: dict[str, Any], secrets: tuple[str, ...]) -> dict[str, Any]:
        if len(json.dumps(line)) > 100_000:  # the large line: as if it took long to redact
            entered.set()
            release.wait(30)
        return kept(line, secrets)

    monkeypatch.setattr(harness._http.proxy, "_kept", slow)
    got: dict[str, bytes] = {}
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:

        def send_large() -> None:
            got["large"] = _post(url, "large", stream=streamed)

        sender = threading.Thread(target=send_large)
        sender.start()
        try:
            assert entered.wait(30)
            with httpx2.Client(timeout=10) as client:
                answered = client.post(
                    f"{url}/v1/messages",
                    json={**REQUEST, "stream": True},
                    headers={"x-test": "quick", "x-api-key": KEY},
                )
            assert answered.content == small  # while the large one is still being read
            assert not release.is_set()
        finally:
            release.set()
            sender.join(30)
    assert got["large"] == body
    assert len(list(tmp_path.iterdir())) == 2  # both recorded


def test_a_line_past_the_limit_is_refused_before_it_is_redacted(
    upstream: tuple[Upstream, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted, upstream_url = upstream
    body = MESSAGE.format(text="x" * (MAX_LINE_BYTES + 1)).encode()

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, headers={"content-type": "application/json"})

    scripted.answers["long"] = answer
    redacted: list[int] = []
    redact_answer = harness._redact.redact_answer

    def measured(line: dict[str, Any], secrets: tuple[str, ...] = ()) -> Any:
        redacted.append(len(json.dumps(line)))
        return redact_answer(line, secrets)

    monkeypatch.setattr(harness._http.proxy, "redact_answer", measured)
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:
        assert _post(url, "long", stream=False) == body
    assert lines == [
        f"POST /v1/messages -> 200, not recorded: a line would be longer than {MAX_LINE_BYTES}"
        " bytes, the limit"
    ]
    assert redacted and max(redacted) < 1000  # the lines before it only
    assert list(tmp_path.iterdir()) == []


def test_an_event_of_too_many_values_is_refused_before_it_is_read(
    upstream: tuple[Upstream, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripted, upstream_url = upstream
    crowded = {"type": "ping", "pad": [{}] * (MAX_VALUES // 2 + 1)}  # 1.5 MB
    body = b"".join(encode_event(event) for event in [*EVENTS[:3], crowded, *EVENTS[3:]])

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, headers=SSE)

    scripted.answers["crowded"] = answer
    redacted: list[dict[str, Any]] = []
    redact_answer = harness._redact.redact_answer

    def seen(line: dict[str, Any], secrets: tuple[str, ...] = ()) -> Any:
        redacted.append(line)
        return redact_answer(line, secrets)

    monkeypatch.setattr(harness._http.proxy, "redact_answer", seen)
    parsed = parsing_spied(monkeypatch, harness._providers.sse)
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines) as url:
        assert _post(url, "crowded") == body
    assert lines == [
        f"POST /v1/messages -> 200, not recorded: event 4 may hold more than {MAX_VALUES}"
        " JSON values, the limit"
    ]
    assert redacted == EVENTS[:3]  # the lines before it only
    assert max(parsed) < 1000  # and the events before it
    assert list(tmp_path.iterdir()) == []


#: Each call whose stream travels in event-stream frames, and its request asking for one.
FRAMED_CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "bedrock": (
        "/model/anthropic.claude-test/invoke-with-response-stream",
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 9, "messages": []},
    ),
    "bedrock-converse": ("/model/claude-test/converse-stream", {"messages": []}),
}
#: A frame a hostile upstream declares: past the 8 MiB an event may hold, within
#: botocore's 24 MiB.
HUGE_FRAME = 17 * 2**20


def _writing(
    content_type: str, opening: bytes, filler: bytes, count: int
) -> Callable[[web.Request], Any]:
    """A hostile upstream's answer: `opening`, then `filler` `count` times, as a stream
    (until the proxy closes the connection, which under strict is the point)."""

    async def answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": content_type})
        await response.prepare(request)
        try:
            await response.write(opening)
            for _ in range(count):
                await response.write(filler)
            await response.write_eof()
        except (ConnectionResetError, RuntimeError):
            pass
        return response

    return answer


def _streamed(url: str, body: Any, headers: dict[str, str]) -> tuple[int, str | None, int]:
    """How many bytes a client streaming the `huge` answer from `url` read, the class of
    the error that cut it (None: none), and the peak memory traced meanwhile."""
    received, cut = 0, None
    tracemalloc.start()
    try:
        with (
            httpx2.Client(timeout=30) as client,
            client.stream("POST", url, json=body, headers={"x-test": "huge", **headers}) as got,
        ):
            for piece in got.iter_raw():
                received += len(piece)
    except httpx2.HTTPError as error:
        cut = type(error).__name__
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return received, cut, peak


@pytest.mark.parametrize("strict", [False, True], ids=["recorded", "strict"])
@pytest.mark.parametrize("call", FRAMED_CALLS)
def test_a_frame_longer_than_an_event_may_hold_is_refused_at_its_prelude_never_held(
    upstream: tuple[Upstream, str], tmp_path: Path, call: str, strict: bool
) -> None:
    scripted, upstream_url = upstream
    path, request = FRAMED_CALLS[call]
    prelude = HUGE_FRAME.to_bytes(4, "big") + bytes(4)
    prelude += zlib.crc32(prelude).to_bytes(4, "big")
    filler = bytes(2**20)  # the frame's bytes, a MiB at a time
    scripted.answers["huge"] = _writing(FRAMES, prelude, filler, HUGE_FRAME // len(filler))
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines, strict=strict) as url:
        headers = {"authorization": "AWS4-HMAC-SHA256 bounds"}
        received, cut, peak = _streamed(url + path, request, headers)
    refused = f"frame 1: a frame of {HUGE_FRAME} bytes, over the {MAX_LINE_BYTES} an event"
    refused += " may hold"
    if strict:  # nothing of the frame goes on: the connection is cut, as at any bad frame
        assert (received, cut) == (0, "RemoteProtocolError")
        assert lines[0] == f"POST {path}: --strict: {refused}: the connection is closed"
    else:  # the client gets every byte as sent; the recording stops at the prelude
        assert (received, cut) == (len(prelude) + HUGE_FRAME // len(filler) * len(filler), None)
        assert lines == [f"POST {path} -> 200, not recorded: {refused}"]
    assert list(tmp_path.iterdir()) == []
    assert peak < MAX_LINE_BYTES, f"peak {peak / 2**20:.1f} MiB"  # pieces in flight, no frame


#: Gemini's stream without `alt=sse`: a streamed JSON array.
GEMINI_ARRAY = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
#: Each element a hostile upstream opens (a MiB at a time, none ever closed), and what
#: the proxy says of it: one past the 8 MiB a line may hold (40 MiB of text: more than
#: the proxy may hold of it), and one of twice the values an event may hold.
HUGE_ELEMENTS: dict[str, tuple[bytes, bytes, int, str]] = {
    "long": (
        b'[{"candidates": [], "pad": "',
        b"x" * 2**20,
        40,
        f"element 1 is longer than {MAX_LINE_BYTES} bytes",
    ),
    "crowded": (
        b'[{"candidates": [], "pad": [',
        b"{}," * (2**20 // 3),
        6,
        f"element 1 may hold more than {MAX_VALUES} JSON values, the limit",
    ),
}


@pytest.mark.parametrize("strict", [False, True], ids=["recorded", "strict"])
@pytest.mark.parametrize("element", HUGE_ELEMENTS)
def test_a_gemini_element_past_the_bounds_is_refused_unparsed_never_held_whole(
    upstream: tuple[Upstream, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    element: str,
    strict: bool,
) -> None:
    scripted, upstream_url = upstream
    opening, filler, count, refused = HUGE_ELEMENTS[element]
    parsed = parsing_spied(monkeypatch, harness._providers.jsonarray)

    scripted.answers["huge"] = _writing("application/json", opening, filler, count)
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines, strict=strict) as url:
        headers = {"x-goog-api-key": "AIzaSyBOUNDS-0123456789"}
        received, cut, peak = _streamed(url + GEMINI_ARRAY, {"contents": []}, headers)
    if strict:  # nothing of the element goes on: the connection is cut, as at any bad one
        assert (received, cut) == (0, "RemoteProtocolError")
        assert refused in lines[0]
    else:  # the client gets every byte as sent; the recording stops where it was refused
        assert (received, cut) == (len(opening) + count * len(filler), None)
        assert lines == [f"POST {GEMINI_ARRAY} -> 200, not recorded: {refused}"]
    assert parsed == []  # never parsed, by the recording nor the guard
    assert list(tmp_path.iterdir()) == []
    # never held whole: at most a line's worth in the recording's reader and, under
    # strict, in the guard's and in what the guard holds back; the pieces in flight
    assert peak < 4 * MAX_LINE_BYTES, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("strict", [False, True], ids=["recorded", "strict"])
def test_a_message_of_too_many_values_reaches_the_client_unparsed_and_is_not_recorded(
    upstream: tuple[Upstream, str], tmp_path: Path, strict: bool
) -> None:
    scripted, upstream_url = upstream
    padded = json.loads(MESSAGE.format(text="hi"))
    padded["pad"] = [0] * MAX_VALUES
    body = json.dumps(padded, separators=(",", ":")).encode()

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, headers={"content-type": "application/json"})

    scripted.answers["values"] = answer
    lines: list[str] = []
    too_many = f"the answer may hold more than {MAX_VALUES} JSON values, the limit"
    with _proxy(upstream_url, tmp_path, lines, strict=strict) as url:
        got = httpx2.post(
            f"{url}/v1/messages", json=REQUEST, headers={"x-test": "values", "x-api-key": KEY}
        )
    if strict:  # it cannot be checked
        assert got.status_code == 502 and too_many in got.json()["error"]["message"]
        assert lines == [
            f"POST /v1/messages -> 502 (--strict: {too_many}: it cannot be checked; not recorded)"
        ]
    else:
        assert got.content == body
        assert lines == [f"POST /v1/messages -> 200, not recorded: {too_many}"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("strict", [False, True], ids=["recorded", "strict"])
def test_a_gemini_array_that_never_closes_is_said_in_a_line_never_an_internal_error(
    upstream: tuple[Upstream, str], tmp_path: Path, strict: bool
) -> None:
    """The body ends after a whole finishing chunk but before `]`: google-genai's reader
    refuses it (`truncated_array`), at the decoder's end, as at any other bad byte."""
    scripted, upstream_url = upstream
    text = {"candidates": [{"content": {"parts": [{"text": "hi"}], "role": "model"}}]}
    finish = {"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": "STOP"}]}
    first = b"[" + orjson.dumps(text)
    body = first + b",\r\n" + orjson.dumps(finish)
    scripted.answers["huge"] = _writing("application/json", body, b"", 0)
    lines: list[str] = []
    with _proxy(upstream_url, tmp_path, lines, strict=strict) as url:
        received, cut, _ = _streamed(url + GEMINI_ARRAY, {"contents": []}, {})
    assert lines and not any("internal error" in line for line in lines), lines
    if strict:  # the text went on; the finishing chunk waited for an end that never came
        assert (received, cut) == (len(first), "RemoteProtocolError"), lines
        ended = "the body ends before ']', after 2 element(s): the connection is closed"
        assert lines[0] == f"POST {GEMINI_ARRAY}: --strict: {ended}"
    else:
        assert (received, cut) == (len(body), None)
