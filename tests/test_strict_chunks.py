"""A chunk holding several events, one of which breaks the rules: the client gets every good
event before that one, then the refusal, never that event or any after it.

Run for every provider with a `guard`, in every framing the guard reads its streams in
(from the registry: its endpoints, each with and without `alt=sse`, which is how
Gemini's path picks SSE or the streamed JSON array, and the hosts it is served on,
Bedrock's event-stream frames among them), with the bytes `harness serve` sends
(`plan_response`: one piece an event, or the whole body as one piece).
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest
from aiohttp import web
from conftest import LIBRARY, library_cassettes

from harness import Chunking, StreamProtocolError, TextEvent, read_cassette, write_cassette
from harness._cassette.codec import Cassette
from harness._exceptions import ANTHROPIC
from harness._hosts import HOSTS, Host, framed
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._json import MAX_LINE_BYTES
from harness._providers import Provider, provider, providers
from harness._providers.answers import AnswerReader
from harness._providers.eventstream import FrameDecoder, encode_frame
from harness._providers.sse import encode_event
from harness._providers.wire import Delimited
from harness._replay.plan import Cut, plan_response
from harness._strict.dialects import answer_check, provider_of
from harness._strict.guard import StreamGuard, guarded

#: A body every guard takes for a streamed call of its own (a Messages call on a host
#: names its `anthropic_version`; a path that says it streams needs no `stream`).
STREAMED_CALL = b'{"model": "m", "stream": true, "anthropic_version": "bedrock-2023-05-31"}'

#: provider -> an event of its dialect that breaks its rules right after the text delta
#: `last`, and the code it is refused with.
BREAKING: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], str]] = {
    "anthropic": (
        lambda last: {
            "type": "content_block_delta",
            "index": 9,
            "delta": {"type": "input_json_delta", "partial_json": "{"},
        },
        "orphan_json_delta",
    ),
    "openai-chat": (
        lambda last: {
            **last,
            "choices": [{"index": 0, "delta": {"refusal": "No."}, "finish_reason": None}],
        },
        "refusal",
    ),
    "openai-responses": (
        lambda last: {**last, "sequence_number": last["sequence_number"] + 2},
        "sequence_gap",
    ),
    "bedrock-converse": (
        lambda last: {
            "contentBlockDelta": {"contentBlockIndex": 9, "delta": {"toolUse": {"input": "{"}}}
        },
        "orphan_tool_delta",
    ),
    "gemini": (
        lambda last: {
            **last,
            "candidates": [*last["candidates"], {**last["candidates"][0], "index": 1}],
        },
        "multiple_candidates",
    ),
}


@dataclass(frozen=True)
class Wire:
    """One framing the guard reads a provider's streams in: a streamed call's path and
    query, on the direct API or a host."""

    provider: Provider
    path: str
    query: dict[str, str] = field(default_factory=dict)
    host: Host | None = None

    def __str__(self) -> str:
        shown = self.provider.name + (f"@{self.host.name}" if self.host else "")
        return shown + "".join(f"?{name}={value}" for name, value in self.query.items())

    @property
    def delimited(self) -> Delimited | None:
        streamed = self.provider.framing.streamed
        framed = streamed(self.path, self.query) if streamed is not None else True
        return framed if isinstance(framed, Delimited) else None

    def reader(self) -> AnswerReader:
        """The guard's reading of an answer here, as the strict transport and proxy read it."""
        path = self.provider.framing.endpoints[0] if self.host else self.path
        check = answer_check("POST", path, self.query, STREAMED_CALL, 200, ())
        assert check is not None and check.stream
        framed = self.host.reader if self.host is not None else None
        return check.reader() if framed is None else framed(check.reader())

    def guard(self) -> StreamGuard:
        return StreamGuard(reader=self.reader())

    def pieces(self, cassette: Cassette) -> list[bytes]:
        """The bytes `harness serve` sends for `cassette` here, one piece an event, up to
        a cut (none for an HTTP error)."""
        planned = plan_response(cassette, stream=True, host=self.host, delimited=self.delimited)
        if planned.status != 200:
            return []
        pieces: list[bytes] = []
        for piece in planned.body:
            if isinstance(piece, Cut):
                break
            if isinstance(piece, bytes):
                pieces.append(piece)
        return pieces


def _filled(route: str) -> str:
    """A route's path with each of its variables `m`."""
    return re.sub(r"\{[^}]*\}", "m", route)


def _wires() -> Iterator[Wire]:
    """Each provider with a guard in each framing its streams come in: one direct wire a
    framing (an endpoint, with or without `alt=sse`), and one for each host it is on."""
    seen: set[tuple[str, bool]] = set()
    for found in providers():
        if not found.has("guard"):
            continue
        for endpoint in found.framing.endpoints:
            for query in ({}, {"alt": "sse"}):
                wire = Wire(found, _filled(endpoint), query)
                check = answer_check("POST", wire.path, query, STREAMED_CALL, 200, ())
                key = (found.name, wire.delimited is None)
                if check is not None and check.stream and key not in seen:
                    seen.add(key)
                    yield wire
        for name in found.hosted:
            host = HOSTS[name]
            path = _filled(host.stream_route)
            if provider_of("POST", path) is found:  # not Gemini's: Vertex's path is its own
                yield Wire(found, path, host=host)


WIRES = list(_wires())


def _good(found: Provider) -> Iterator[list[dict[str, Any]]]:
    """The events of each of the provider's good cassettes in the library."""
    for path in library_cassettes(provider=found.name, folder=LIBRARY):
        if not {"errors", "sessions"} & set(path.relative_to(LIBRARY).parts):
            yield [line.data for line in read_cassette(path).lines() if line.kind == "event"]


def _two_text_deltas(found: Provider) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """From the provider's first good cassette that has them: its events up to two text
    deltas in a row, and the event after them."""
    for events in _good(found):
        adapter = found.module("tracing").machine()
        texts = [any(isinstance(out, TextEvent) for out in adapter.feed(ev)) for ev in events]
        for at in range(1, len(events) - 1):
            if texts[at - 1] and texts[at]:
                return events[: at + 1], events[at + 1]
    raise AssertionError(f"no {found.name} cassette holds two text deltas in a row")


def _cassette(folder: Path, found: Provider, events: list[dict[str, Any]]) -> Cassette:
    path = folder / f"{found.name}.jsonl"
    write_cassette(path, events, header={"cassette": 1, "provider": found.name, "model": "m"})
    return read_cassette(path)


def _received(chunks: Iterable[bytes], guard: StreamGuard) -> tuple[bytes, Any]:
    """What the client reads of `chunks` through the guard's driver, and what it raised
    (its code, or its type and message; None for none)."""
    got = bytearray()
    try:
        for released in guarded(iter(chunks), guard):
            got += released
    except StreamProtocolError as error:
        return bytes(got), error.code
    except ValueError as error:  # a framing no SDK reads: SSE's, a frame's, an array's
        return bytes(got), (type(error).__name__, getattr(error, "code", None), str(error))
    return bytes(got), None


def _broken_after_text(wire: Wire, folder: Path) -> tuple[list[bytes], int, str]:
    """Each event's bytes of two text deltas, then the event that breaks the rules, then
    the good one that followed them; where the breaking one is, and its code."""
    found = wire.provider
    assert found.name in BREAKING, f"BREAKING has no event that breaks {found.name}'s rules"
    before, after = _two_text_deltas(found)
    breaking, code = BREAKING[found.name]
    cassette = _cassette(folder, found, [*before, breaking(before[-1]), after])
    return wire.pieces(cassette), len(before), code


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_the_good_events_before_a_broken_one_in_the_same_chunk_reach_the_client(
    wire: Wire, tmp_path: Path
) -> None:
    by_event, broken, code = _broken_after_text(wire, tmp_path)
    received, raised = _received([b"".join(by_event)], wire.guard())
    assert raised == code
    # the two text deltas (and what came before them), as they came; not the broken
    # event, nor the good one after it
    assert received == b"".join(by_event[:broken])
    assert received.endswith(by_event[broken - 2] + by_event[broken - 1])


def test_the_good_events_before_one_the_sdk_would_drop_reach_the_client() -> None:
    """An event the SDK passes over (a Messages event with no `event:` line) is refused
    where it arrives, as a broken one is: the text deltas before it in its chunk go on."""
    before, after = _two_text_deltas(provider(ANTHROPIC))
    good = b"".join(encode_event(event) for event in before)
    dropped = b"data: " + orjson.dumps(after) + b"\n\n"
    received, raised = _received([good + dropped + encode_event(after)], StreamGuard())
    assert raised == "missing_message_stop"  # the answer the code reads ends there
    assert received == good


class _WithoutEnds:
    """A decoder written before `BodyDecoder.ends` (another distribution's framing): the
    rest of the protocol, from the SSE decoder."""

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder

    @property
    def rest_at(self) -> int:
        return int(self._decoder.rest_at)

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        return list(self._decoder.feed(piece))

    def finish(self) -> object:
        return self._decoder.finish()


def test_a_decoder_that_does_not_say_where_its_events_end_holds_the_chunk_as_before() -> None:
    """Nothing of the broken chunk goes on, and the verdict is the same: no error of ours."""
    found = provider(ANTHROPIC)
    before, after = _two_text_deltas(found)
    breaking, code = BREAKING[found.name]
    chunk = b"".join(encode_event(event) for event in [*before, breaking(before[-1]), after])
    guard = StreamGuard()
    guard._decoder = _WithoutEnds(guard._decoder)  # type: ignore[assignment]  # the point
    received, raised = _received([chunk], guard)
    assert (received, raised) == (b"", code)


def _errors(found: Provider) -> list[Path]:
    paths = library_cassettes(provider=found.name, folder=LIBRARY)
    return [path for path in paths if "errors" in path.relative_to(LIBRARY).parts]


def _at_once(pieces: list[bytes], guard: StreamGuard) -> int:
    """How many of `pieces` lead that `guard`, fed one at a time, hands on as they came."""
    for count, piece in enumerate(pieces):
        if guard.feed(piece) != piece or guard.failure is not None:
            return count
    return len(pieces)


@pytest.mark.parametrize(
    ("wire", "path"),
    [(wire, path) for wire in WIRES for path in _errors(wire.provider)],
    ids=lambda value: str(value.relative_to(LIBRARY)) if isinstance(value, Path) else str(value),
)
def test_a_chunk_of_many_events_is_guarded_as_its_events_each_in_a_chunk(
    wire: Wire, path: Path
) -> None:
    """Whatever the rule and wherever it breaks (before the completing event, at it, after
    it, at the end, or the API's own error), one chunk of the whole body gives the
    verdict its events give one a chunk; refused, the client has read the events those
    hand on at once up to the first they do not (a ping they send ahead of a withheld
    event stays in its place)."""
    by_event = wire.pieces(read_cassette(path))
    if not by_event:
        pytest.skip("an HTTP error, not a stream")
    received, raised = _received([b"".join(by_event)], wire.guard())
    each_received, each_raised = _received(by_event, wire.guard())
    assert raised == each_raised
    if raised is None:
        assert received == each_received
    else:
        assert received == b"".join(by_event[: _at_once(by_event, wire.guard())])


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_the_strict_proxy_sends_the_good_events_of_the_chunk_then_the_refusal(
    wire: Wire, tmp_path: Path
) -> None:
    by_event, broken, code = _broken_after_text(wire, tmp_path)
    whole = b"".join(by_event)
    serve = CassetteServer(
        [str(tmp_path / f"{wire.provider.name}.jsonl")],
        chunking=Chunking(size=len(whole)),
        match_on=None,
    )
    proxy = RecordingProxy("http://placeholder", tmp_path / "recorded", strict=True)
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = serve_url
        with (
            ServerThread(proxy.app()) as proxy_url,
            httpx2.Client(base_url=proxy_url) as client,
        ):
            answer = client.post(
                wire.path,
                params=wire.query,
                content=STREAMED_CALL,
                headers={"content-type": "application/json"},
            )
    good = b"".join(by_event[:broken])
    assert answer.content.startswith(good)
    refusal = answer.content[len(good) :]
    assert by_event[broken] not in refusal and by_event[broken + 1] not in refusal
    *_, last = wire.reader().decoder.feed(answer.content)  # in the dialect's own framing
    assert code in orjson.dumps(last).decode()


# A framing no SDK reads (a frame botocore refuses, a `data:` that is not JSON, an
# element of the array that is none) after good events in the same chunk: the SDKs read
# event by event, so a client reading upstream itself reads the good ones first.


def _framing(wire: Wire) -> str:
    """How the wire's streams travel: "frames" (AWS event-stream), "array", or "sse"."""
    if framed(wire.provider.framing, wire.host.name if wire.host else None) is not None:
        return "frames"
    return "array" if wire.delimited is not None else "sse"


def _frame_of(headers: bytes, payload: bytes) -> bytes:
    """A frame of raw `headers` bytes, its CRCs right (`encode_frame` writes only good ones)."""
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


#: framing -> each way its bytes break where no SDK reads them: a good event's bytes
#: here made unreadable, and the error type and code the guard raises for it.
UNREADABLE: dict[str, dict[str, tuple[Callable[[bytes], bytes], tuple[str, str | None]]]] = {
    "sse": {
        "not_json": (lambda good: good.replace(b'":', b'";', 1), ("SSEFormatError", None)),
        "line_too_long": (lambda good: b"data: " + b"x" * MAX_LINE_BYTES, ("SSEFormatError", None)),
    },
    "array": {
        "not_json": (lambda good: good.replace(b'":', b'";', 1), ("ArrayError", "not_an_array")),
    },
    "frames": {
        "bad_crc": (lambda good: good.replace(b'":', b'";', 1), ("FrameError", "bad_frame")),
        "unknown_header_type": (
            lambda good: _frame_of(b"\x01x\x0a", b"{}"),
            ("FrameError", "bad_frame"),
        ),
        "not_an_event": (
            lambda good: encode_frame(FrameDecoder().feed(good)[0].headers, b"[]"),
            ("FrameError", "bad_frame"),
        ),
    },
}


def _unreadable_after_text(
    wire: Wire, folder: Path, kind: str
) -> tuple[list[bytes], bytes, tuple[str, str | None]]:
    """Each event's bytes up to two text deltas, then the next event's made unreadable
    (`kind`), and the error type and code it is refused with."""
    found = wire.provider
    before, after = _two_text_deltas(found)
    pieces = wire.pieces(_cassette(folder, found, [*before, after]))
    breaking, raised = UNREADABLE[_framing(wire)][kind]
    return pieces[: len(before)], breaking(pieces[len(before)]), raised


@pytest.mark.parametrize(
    ("wire", "kind"),
    [(wire, kind) for wire in WIRES for kind in UNREADABLE[_framing(wire)]],
    ids=str,
)
def test_the_good_events_before_an_unreadable_one_in_the_same_chunk_reach_the_client(
    wire: Wire, kind: str, tmp_path: Path
) -> None:
    """The client reads the two text deltas (and what came before them) as they came,
    then the guard raises what it raises for the unreadable bytes in a chunk of their own."""
    good, unreadable, (error_type, code) = _unreadable_after_text(wire, tmp_path, kind)
    received, raised = _received([b"".join(good) + unreadable], wire.guard())
    each_received, each_raised = _received([*good, unreadable], wire.guard())
    assert (each_received, each_raised[:2]) == (b"".join(good), (error_type, code))
    assert (received, raised) == (each_received, each_raised)


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_a_violation_before_unreadable_bytes_in_the_same_chunk_is_refused_first(
    wire: Wire, tmp_path: Path
) -> None:
    """The events before the unreadable bytes are checked as they would be alone: the
    broken one among them is refused by its code, never read by the client."""
    by_event, broken, code = _broken_after_text(wire, tmp_path)
    kind, (breaking, _) = next(iter(UNREADABLE[_framing(wire)].items()))
    chunk = b"".join(by_event[: broken + 1]) + breaking(by_event[broken + 1])
    received, raised = _received([chunk], wire.guard())
    assert (received, raised) == (b"".join(by_event[:broken]), code), kind


def test_an_api_error_before_unreadable_bytes_goes_on_with_them_unchecked() -> None:
    """The API's own error is the client's to raise: it and what follows go on, as they
    would in chunks of their own."""
    before, _ = _two_text_deltas(provider(ANTHROPIC))
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    chunk = b"".join(encode_event(event) for event in [*before, error])
    chunk += b"event: content_block_delta\ndata: {\n\n"
    assert _received([chunk], StreamGuard()) == (chunk, None)


def _answering(body: bytes, content_type: str) -> web.Application:
    """An upstream answering every request with `body` in one write."""

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, headers={"content-type": content_type})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    return app


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_the_strict_proxy_sends_the_good_events_before_unreadable_bytes_then_cuts(
    wire: Wire, tmp_path: Path
) -> None:
    """Upstream's good events and unreadable bytes in one write: the client reads the
    good ones, then its connection is cut (there is no event to end it with)."""
    kind = next(iter(UNREADABLE[_framing(wire)]))
    good, unreadable, _ = _unreadable_after_text(wire, tmp_path, kind)
    planned = plan_response(
        read_cassette(tmp_path / f"{wire.provider.name}.jsonl"),
        stream=True,
        host=wire.host,
        delimited=wire.delimited,
    )
    proxy = RecordingProxy("http://placeholder", tmp_path / "recorded", strict=True)
    received = bytearray()
    upstream_app = _answering(b"".join(good) + unreadable, planned.headers["content-type"])
    with ServerThread(upstream_app) as upstream_url:
        proxy.upstream = upstream_url
        with (
            ServerThread(proxy.app()) as proxy_url,
            httpx2.Client(base_url=proxy_url) as client,
            pytest.raises(httpx2.HTTPError),  # the connection cut: no event ends it
            client.stream(
                "POST",
                wire.path,
                params=wire.query,
                content=STREAMED_CALL,
                headers={"content-type": "application/json"},
            ) as answer,
        ):
            for piece in answer.iter_raw():
                received += piece
    assert bytes(received) == b"".join(good)
