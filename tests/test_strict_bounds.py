"""Issue 27, part 2: the guard is bounded in memory and time whatever upstream sends.

A line with no end is refused at the line limit; an event in many pieces is held once,
not copied at every piece; a compressed body is decoded a chunk at a time, so a bomb
stops at the same limit; after `message_delta` a ping goes on at once, and what can
change the verdict is held up to a limit, past which the answer is refused. Through
`harness proxy --strict` the same answers end while another client is served.
"""

from __future__ import annotations

import asyncio
import threading
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from aiohttp import web
from conftest import LIBRARY

from harness import StreamProtocolError, read_cassette, strict
from harness._cassette.codec import MAX_LINE_BYTES
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._inflate import CHUNK, Inflater
from harness._providers.sse import SSEFormatError, StreamingDecoder, encode_event
from harness._strict.guard import StreamGuard

ASK: Any = {"model": "claude-sonnet-5", "max_tokens": 64, "messages": [], "stream": True}
EVENTS = [
    line.data for line in read_cassette(LIBRARY / "text_only.jsonl").lines() if line.kind == "event"
]
DELTA_AT = next(at for at, event in enumerate(EVENTS) if event["type"] == "message_delta")
PING = encode_event({"type": "ping"})
PIECE = 64 * 1024
#: Far past every limit, and far past what a test should hold.
FLOOD = 16 * MAX_LINE_BYTES
#: Pings after message_delta, none of them held.
PINGS = 100_000


class _Counted:
    """Chunks made as they are read, counted: how far a reader got before it stopped."""

    def __init__(self, chunks: Callable[[], Iterator[bytes]]) -> None:
        self._chunks = chunks
        self.read = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks():
            self.read += len(chunk)
            yield chunk


class _Body(httpx2.SyncByteStream):
    def __init__(self, chunks: _Counted) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._chunks)


def _strict_client(chunks: _Counted, headers: dict[str, str] | None = None) -> anthropic.Anthropic:
    sse = {"content-type": "text/event-stream", **(headers or {})}
    http = httpx2.Client(
        transport=httpx2.MockTransport(
            lambda request: httpx2.Response(200, headers=sse, stream=_Body(chunks))
        )
    )
    return strict(anthropic.Anthropic(api_key="sk-test", http_client=http, max_retries=0))


def _read(client: anthropic.Anthropic) -> tuple[BaseException | None, int]:
    """What reading the stream raised, and the peak of memory it took (bytes)."""
    tracemalloc.start()
    try:
        for _ in client.messages.create(**ASK):
            pass
    except Exception as error:
        raised: BaseException | None = error
    else:
        raised = None
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return raised, peak


def _endless_line() -> Iterator[bytes]:
    yield encode_event(EVENTS[0])
    yield b"data: " + b"x" * (PIECE - 6)
    for _ in range(FLOOD // PIECE):
        yield b"x" * PIECE


def _protocol_error(error: BaseException | None) -> StreamProtocolError:
    seen = error
    while seen is not None and not isinstance(seen, StreamProtocolError):
        seen = seen.__cause__ or seen.__context__
    assert isinstance(seen, StreamProtocolError), repr(error)
    return seen


def test_a_line_with_no_end_is_refused_at_the_line_limit_in_bounded_memory() -> None:
    chunks = _Counted(_endless_line)
    raised, peak = _read(_strict_client(chunks))
    assert isinstance(raised, SSEFormatError)
    assert f"a line longer than {MAX_LINE_BYTES} bytes" in str(raised)
    assert chunks.read <= MAX_LINE_BYTES + 2 * PIECE  # it stopped reading there
    assert peak < 4 * MAX_LINE_BYTES, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.slow
def test_a_compression_bomb_is_decoded_a_chunk_at_a_time_and_stops_at_the_same_limit() -> None:
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)

    def bomb() -> Iterator[bytes]:
        yield packer.compress(encode_event(EVENTS[0]) + b"data: ")
        for _ in range(FLOOD // PIECE):  # 128 MiB of x: a few hundred KiB sent
            yield packer.compress(b"x" * PIECE)
        yield packer.flush()

    raised, peak = _read(_strict_client(_Counted(bomb), {"content-encoding": "gzip"}))
    assert isinstance(raised, SSEFormatError) and "a line longer than" in str(raised)
    assert peak < 4 * MAX_LINE_BYTES, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.slow
@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_one_small_piece_that_expands_hugely_is_handed_on_a_chunk_at_a_time(coding: str) -> None:
    from test_proxy_bounds import COMPRESS

    zeros = bytes(FLOOD)
    packed = COMPRESS[coding](zeros)
    assert len(packed) < 2 * 2**20  # one piece of a few hundred KiB at most
    sizes = [len(data) for data in Inflater(coding).decode(packed)]
    assert sum(sizes) == FLOOD
    assert max(sizes) <= 2 * CHUNK


def test_an_event_in_many_pieces_is_held_once_not_copied_at_each_piece() -> None:
    """The bytes of an event under way are appended to one buffer: a 6 MiB text delta
    fed 1 KiB at a time costs the guard its bytes twice over (its own and its decoder's
    line) until it completes, and passes whole. (Reading its JSON then costs what orjson
    takes, a dozen times the text for a moment: the line limit bounds that too.)"""
    text = "y" * (6 * 2**20)
    event = encode_event(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}
    )
    pieces = [event[at : at + 1024] for at in range(0, len(event), 1024)]
    guard = StreamGuard()
    for opening in EVENTS[:3]:
        assert guard.feed(encode_event(opening))
    tracemalloc.start()
    try:
        held = [guard.feed(piece) for piece in pieces[:-1]]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held == [b""] * (len(pieces) - 1)
    assert guard.feed(pieces[-1]) == event and guard.failure is None
    assert peak < 2.5 * len(event), f"peak {peak / 2**20:.1f} MiB for {len(event) / 2**20:.0f} MiB"


def test_an_event_of_many_short_lines_is_refused_at_the_limit() -> None:
    decoder = StreamingDecoder(max_line=1000)
    decoder.feed(b"event: content_block_delta\n")
    with pytest.raises(SSEFormatError, match="an event longer than 1000 bytes"):
        for _ in range(200):
            decoder.feed(b"id: 0123456789\n")


@pytest.mark.slow
def test_pings_after_message_delta_go_on_at_once_and_are_never_held() -> None:
    guard = StreamGuard()
    for event in EVENTS[:DELTA_AT]:
        guard.feed(encode_event(event))
    assert guard.feed(encode_event(EVENTS[DELTA_AT])) == b""  # the event that completes waits
    assert all(guard.feed(PING) == PING for _ in range(PINGS))
    assert len(guard._withheld) < 1024
    rest = [guard.feed(encode_event(event)) for event in EVENTS[DELTA_AT + 1 :]]
    assert rest == [b""] * len(rest)
    assert guard.finish() == b"".join(encode_event(event) for event in EVENTS[DELTA_AT:])
    assert guard.failure is None


@pytest.mark.slow
def test_what_follows_message_delta_is_held_up_to_a_limit_then_refused() -> None:
    delta = encode_event(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "z" * 60_000},
        }
    )

    def flood() -> Iterator[bytes]:
        for event in EVENTS[: DELTA_AT + 1]:
            yield encode_event(event)
        for _ in range(FLOOD // len(delta)):
            yield delta

    chunks = _Counted(flood)
    raised, peak = _read(_strict_client(chunks))
    error = _protocol_error(raised)
    assert error.code == "missing_message_stop"
    assert f"over {2 * MAX_LINE_BYTES} bytes arrived after message_delta" in "".join(
        error.__notes__
    )
    assert chunks.read < 3 * MAX_LINE_BYTES
    assert peak < 8 * MAX_LINE_BYTES, f"peak {peak / 2**20:.0f} MiB"


# -- harness proxy --strict ---------------------------------------------------------------


class _Upstream:
    """A good stream at `x-test: good`; an endless line, dripped, at `x-test: endless`."""

    def __init__(self) -> None:
        self.release = threading.Event()

    async def messages(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        if request.headers["x-test"] == "good":
            for event in EVENTS:
                await response.write(encode_event(event))
            await response.write_eof()
            return response
        await response.write(encode_event(EVENTS[0]) + b"data: ")
        try:
            for _ in range(FLOOD // PIECE):
                if self.release.is_set():
                    break
                await response.write(b"x" * PIECE)
                await asyncio.sleep(0.001)
        except (ConnectionResetError, RuntimeError):
            pass  # the proxy closed the connection: the point of the test
        return response


def _post(url: str, test: str) -> tuple[bytes, str | None]:
    try:
        with (
            httpx2.Client(timeout=60) as client,
            client.stream(
                "POST",
                f"{url}/v1/messages",
                json=ASK,
                headers={"x-test": test, "x-api-key": "sk-t"},
            ) as answer,
        ):
            return b"".join(answer.iter_bytes()), None
    except httpx2.HTTPError as error:
        return b"", type(error).__name__


@pytest.mark.slow
def test_proxy_strict_ends_a_flood_at_the_limit_and_serves_another_client_meanwhile(
    tmp_path: Path,
) -> None:
    upstream = _Upstream()
    app = web.Application()
    app.router.add_post("/v1/messages", upstream.messages)
    log: list[str] = []
    results: dict[str, tuple[bytes, str | None]] = {}
    tracemalloc.start()
    try:
        with ServerThread(app) as upstream_url:
            proxy = RecordingProxy(upstream_url, tmp_path, log=log.append, strict=True)
            with ServerThread(proxy.app()) as url:
                flood = threading.Thread(
                    target=lambda: results.update(endless=_post(url, "endless"))
                )
                flood.start()
                results["good"] = _post(url, "good")
                good_before_flood_ended = flood.is_alive()
                flood.join(60)
                upstream.release.set()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        upstream.release.set()
    assert good_before_flood_ended  # served while the flood was still being read
    assert results["good"] == (b"".join(encode_event(event) for event in EVENTS), None)
    assert results["endless"][1] is not None  # the client sees its answer cut
    assert any(
        f"a line longer than {MAX_LINE_BYTES} bytes: the connection is closed" in line
        for line in log
    ), log
    assert peak < 300 * 2**20, f"peak {peak / 2**20:.0f} MiB"
