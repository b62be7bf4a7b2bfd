"""`harness.strict` and `StrictTransport`: the adapter's verdict, at the transport, before
the SDK reads the event; good answers byte for byte."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import anthropic
import httpx2
import orjson
import pytest
from conftest import LIBRARY, NAN_TOOL_INPUT, library_cassettes, library_streams

from harness import (
    Chunking,
    InputError,
    Replayer,
    ReplayTransport,
    StreamProtocolError,
    StrictTransport,
    async_cassette_client,
    captured_requests,
    cassette_client,
    import_recording,
    read_cassette,
    replay_outcome,
    strict,
)
from harness._providers import names
from harness._providers.anthropic.message import message_from_events
from harness._providers.sse import StreamingDecoder, encode_event
from harness._strict.guard import StreamGuard, check_message
from harness._strict.sdk_errors import as_sdk_error
from harness.builder import StreamBuilder

CASSETTES = [path for path in library_cassettes() if "sessions" not in path.parts]
GOOD = [path for path in CASSETTES if "errors" not in path.parts]
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}


def _events(path: Path) -> list[dict[str, Any]]:
    return [line.data for line in read_cassette(path).lines() if line.kind == "event"]


def _raw_stream(client: anthropic.Anthropic) -> tuple[list[str], BaseException | None]:
    """The event types `create(stream=True)` yields, then what it raised (or None)."""
    seen: list[str] = []
    try:
        for event in client.messages.create(**ASK, stream=True):
            seen.append(event.type)
    except Exception as error:
        return seen, error
    return seen, None


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: str(p.relative_to(LIBRARY)))
def test_strict_client_raises_what_direct_replay_does(path: Path) -> None:
    direct = replay_outcome(path).error
    seen, error = _raw_stream(strict(cassette_client(path, max_retries=0)))
    if direct is None:
        assert error is None
    elif isinstance(direct, StreamProtocolError):
        assert isinstance(error, StreamProtocolError)
        assert (error.code, str(error)) == (direct.code, str(direct))
    else:
        assert type(error) is type(direct)
    types = [event["type"] for event in _events(path) if event["type"] != "ping"]
    assert seen == types[: len(seen)], "the SDK saw a prefix of the stream"
    if isinstance(direct, StreamProtocolError):
        assert "message_delta" not in seen, "the broken answer was never completed"


@pytest.mark.parametrize(
    "code", ["missing_stop_reason", "unsupported_stop_reason", "end_turn_with_tool_calls"]
)
def test_end_rules_refuse_message_delta_before_the_sdk_reads_it(code: str) -> None:
    seen, error = _raw_stream(strict(cassette_client(LIBRARY / "errors" / f"{code}.jsonl")))
    assert isinstance(error, StreamProtocolError) and error.code == code
    assert seen[-1] == "content_block_stop", "the stop reason never reached the SDK"


def test_a_clean_end_without_message_stop_raises_instead_of_ending() -> None:
    path = LIBRARY / "errors/missing_message_stop.jsonl"
    seen, error = _raw_stream(strict(cassette_client(path)))
    assert isinstance(error, StreamProtocolError) and error.code == "missing_message_stop"
    plain, plain_error = _raw_stream(cassette_client(path))
    assert plain_error is None and plain[-1] == "message_delta", "the plain SDK ends quietly"
    assert seen == plain[:-1], "under strict, the SDK never sees the stop reason"


def test_messages_stream_raises_from_the_guard_and_the_chain_reaches_it() -> None:
    client = strict(cassette_client(LIBRARY / "errors/invalid_tool_json.jsonl"))
    with (
        pytest.raises(StreamProtocolError, match="invalid input_json_delta JSON") as raised,
        client.messages.stream(**ASK) as stream,
    ):
        stream.get_final_message()
    assert raised.value.code == "invalid_tool_json"


@pytest.mark.parametrize("path", GOOD, ids=lambda p: str(p.relative_to(LIBRARY)))
@pytest.mark.parametrize("size", [1, 7, None], ids=["1-byte", "7-byte", "by-event"])
def test_good_bytes_pass_byte_for_byte_however_cut(path: Path, size: int | None) -> None:
    assert replay_outcome(path).error is None
    chunking = Chunking() if size is None else Chunking(size=size)

    def body(transport: httpx2.BaseTransport) -> tuple[bytes, list[bytes]]:
        with (
            httpx2.Client(transport=transport, base_url="https://api.anthropic.com") as http,
            http.stream("POST", "/v1/messages", json={**ASK, "stream": True}) as response,
        ):
            chunks = list(response.iter_bytes())
            return b"".join(chunks), chunks

    def replayer() -> Replayer:
        return Replayer([read_cassette(path)], match_on=None, chunking=chunking)

    plain, _ = body(ReplayTransport(replayer()))
    checked, chunks = body(StrictTransport(ReplayTransport(replayer())))
    assert checked == plain
    assert all(chunk.endswith(b"\n\n") for chunk in chunks), "released at event ends only"


def test_the_async_client_is_guarded_by_the_same_rules() -> None:
    async def run(path: Path) -> BaseException | None:
        client = strict(async_cassette_client(path))
        try:
            async with client.messages.stream(**ASK) as stream:
                await stream.get_final_message()
        except Exception as error:
            return error
        return None

    assert asyncio.run(run(LIBRARY / "two_tools.jsonl")) is None
    error = asyncio.run(run(LIBRARY / "errors/invalid_tool_json.jsonl"))
    assert isinstance(error, StreamProtocolError) and error.code == "invalid_tool_json"


def test_a_non_streaming_message_is_checked_by_the_same_rules() -> None:
    good = strict(cassette_client(LIBRARY / "two_tools.jsonl"))
    assert good.messages.create(**ASK).stop_reason == "tool_use"
    broken = strict(cassette_client(LIBRARY / "errors/end_turn_with_tool_calls.jsonl"))
    with pytest.raises(StreamProtocolError) as raised:
        broken.messages.create(**ASK)
    assert raised.value.code == "end_turn_with_tool_calls"
    assert len(captured_requests(broken)) == 1, "raised as it is: no retry"


def test_check_message_is_the_adapter_over_the_message_stream() -> None:
    check_message(message_from_events(_events(LIBRARY / "two_tools.jsonl")))
    truncated = message_from_events(_events(LIBRARY / "errors/unsupported_stop_reason.jsonl"))
    with pytest.raises(StreamProtocolError, match="max_tokens"):
        check_message(truncated)
    check_message(truncated, stop_reasons={"end_turn", "tool_use", "max_tokens"})


def test_allow_stop_reasons_widens_the_default_and_only_that() -> None:
    path = LIBRARY / "errors/unsupported_stop_reason.jsonl"
    seen, error = _raw_stream(strict(cassette_client(path), allow_stop_reasons={"max_tokens"}))
    assert error is None and seen[-1] == "message_stop"
    _, error = _raw_stream(strict(cassette_client(path)))
    assert isinstance(error, StreamProtocolError) and error.code == "unsupported_stop_reason"
    broken = LIBRARY / "errors/invalid_tool_json.jsonl"
    _, error = _raw_stream(strict(cassette_client(broken), allow_stop_reasons={"max_tokens"}))
    assert isinstance(error, StreamProtocolError) and error.code == "invalid_tool_json"


def test_allow_stop_reasons_takes_a_collection_not_a_string() -> None:
    with pytest.raises(ValueError, match="collection of stop reasons"):
        strict(cassette_client(LIBRARY / "two_tools.jsonl"), allow_stop_reasons="max_tokens")


@pytest.mark.parametrize("name", names())
@pytest.mark.parametrize(
    ("allowed", "says"),
    [
        (3, "allow_stop_reasons takes a collection of stop reasons, not 3"),
        (None, "allow_stop_reasons takes a collection of stop reasons, not None"),
        (["length", 3], "allow_stop_reasons takes stop reasons (strings), not 3"),
    ],
    ids=["int", "none", "int-in-list"],
)
def test_allow_stop_reasons_that_are_no_strings_are_one_input_error(
    name: str, allowed: Any, says: str
) -> None:
    client = cassette_client(library_cassettes(name)[0])
    with pytest.raises(InputError) as raised:
        strict(client, allow_stop_reasons=allowed)
    assert str(raised.value) == says


def test_strict_takes_sdk_clients_only() -> None:
    with pytest.raises(ValueError, match=r"takes an anthropic\.Anthropic or AsyncAnthropic"):
        strict(object())  # type: ignore[type-var]


def test_the_guard_holds_an_incomplete_event_back() -> None:
    guard = StreamGuard()
    events = [encode_event(event) for event in StreamBuilder().text(0, "hi").stop().events()]
    first, second, *rest = events
    assert guard.feed(first + second[:5]) == first
    assert guard.feed(second[5:]) == second
    completing = [event for event in rest if b"message_delta" in event]
    before = rest[: rest.index(completing[0])]
    assert [guard.feed(event) for event in before] == before
    assert [guard.feed(event) for event in rest[len(before) :]] == [b""] * (len(rest) - len(before))
    assert guard.finish() == b"".join(rest[len(before) :]) and guard.failure is None


def test_from_message_delta_on_the_bytes_wait_for_the_end_rules() -> None:
    guard = StreamGuard()
    body = b"".join(encode_event(event) for event in StreamBuilder().text(0, "hi").events())
    body += encode_event({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}})
    body += encode_event({"type": "message_stop"})
    released = guard.feed(body)
    assert b"message_delta" not in released and guard.failure is not None
    assert guard.failure.code == "unsupported_stop_reason"


def test_an_api_error_event_passes_on_for_the_sdk_to_raise() -> None:
    _, error = _raw_stream(strict(cassette_client(LIBRARY / "errors/overloaded_error.jsonl")))
    assert isinstance(error, anthropic.APIStatusError)


@pytest.mark.slow
def test_import_harness_loads_no_sdk_and_strict_loads_it_lazily() -> None:
    code = "import sys, harness; harness.strict; print('anthropic' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def _own_client(path: Path, **options: Any) -> anthropic.Anthropic:
    """Code that builds its own `http_client`: the SDK over a `StrictTransport` it made."""
    replayer = Replayer([read_cassette(path)], match_on=None)
    transport = StrictTransport(ReplayTransport(replayer))
    http = httpx2.Client(transport=transport, base_url="https://api.anthropic.com")
    return anthropic.Anthropic(api_key="test", http_client=http, **options)


def test_strict_transport_guards_a_client_built_on_it() -> None:
    _, error = _raw_stream(_own_client(LIBRARY / "two_tools.jsonl"))
    assert error is None
    _, error = _raw_stream(_own_client(LIBRARY / "errors/orphan_json_delta.jsonl"))
    assert isinstance(error, StreamProtocolError) and error.code == "orphan_json_delta"


def test_strict_transport_checks_a_message_and_the_sdk_neither_wraps_nor_retries_it() -> None:
    served = LIBRARY / "errors/tool_use_without_tool_calls.jsonl"
    client = _own_client(served, max_retries=2)
    with pytest.raises(StreamProtocolError) as raised:
        client.messages.create(**ASK)
    assert raised.value.code == "tool_use_without_tool_calls"
    assert isinstance(raised.value, anthropic.APIError)
    assert raised.value.__cause__ is None  # raised as itself, not as the cause of another


@pytest.mark.parametrize("guarded", ["harness.strict", "StrictTransport"])
def test_a_message_is_read_as_the_sdk_reads_it_and_nan_is_refused(guarded: str) -> None:
    def answer(request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "application/json"}
        return httpx2.Response(200, headers=headers, content=NAN_TOOL_INPUT)

    if guarded == "harness.strict":
        http = httpx2.Client(transport=httpx2.MockTransport(answer))
        client = strict(anthropic.Anthropic(api_key="test", max_retries=0, http_client=http))
    else:
        http = httpx2.Client(transport=StrictTransport(httpx2.MockTransport(answer)))
        client = anthropic.Anthropic(api_key="test", max_retries=0, http_client=http)
    with pytest.raises(Exception) as raised:
        client.messages.create(**ASK)
    error = raised.value
    assert isinstance(error, StreamProtocolError) and error.code == "invalid_tool_json"
    assert isinstance(error, anthropic.APIError)


def test_every_imported_recording_passes_strict_unchanged(tmp_path: Path) -> None:
    recordings = Path(__file__).parent / "data" / "recordings"
    for recording in sorted(recordings.iterdir()):
        if recording.suffix != ".md":
            import_recording(str(recording), str(tmp_path / recording.name))
    imported = sorted(tmp_path.rglob("*.jsonl"))
    assert len(imported) >= 8
    for path in imported:
        plain = _raw_stream(cassette_client(path))
        guarded = _raw_stream(strict(cassette_client(path)))
        assert guarded[0] == plain[0], path.name
        assert type(guarded[1]) is type(plain[1]), path.name
        assert not isinstance(guarded[1], StreamProtocolError), path.name


def test_the_guard_reads_event_views_and_never_loads_the_sdk() -> None:
    code = (
        "import sys\n"
        "from harness._strict.guard import StreamGuard\n"
        "from harness._cassette.codec import Cassette\n"
        "from harness._providers.sse import encode_event\n"
        "guard = StreamGuard()\n"
        "guard.feed(b''.join(encode_event(e) for e in Cassette("
        "'cassettes/errors/invalid_tool_json.jsonl').events()))\n"
        "print(guard.failure.code, 'anthropic' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=LIBRARY.parent
    )
    assert result.stdout.split() == ["invalid_tool_json", "False"], result.stderr


@pytest.mark.parametrize(
    ("content", "usage"),
    [(["not a block"], {}), ("text", {}), ([{"type": "text", "text": "hi"}, 5], 7), (None, None)],
)
def test_check_message_reads_what_is_not_an_object_as_empty(content: Any, usage: Any) -> None:
    good = message_from_events(_events(LIBRARY / "text_only.jsonl"))
    message = {**good, "content": content, "usage": usage}
    check_message(message)  # no rule reads such a part: nothing raised, nothing else
    with pytest.raises(StreamProtocolError) as caught:
        check_message({**message, "stop_reason": "max_tokens"})
    assert caught.value.code == "unsupported_stop_reason"


def _gzip_client(path: Path, http: type[Any] = httpx2.Client) -> Any:
    """An SDK client over a transport that sends `path`'s stream gzip-compressed, one
    compressed piece an event, as a server compressing a stream flushes."""
    import zlib

    def answer(request: httpx2.Request) -> httpx2.Response:
        compressor = zlib.compressobj(wbits=31)
        pieces = [
            compressor.compress(encode_event(event)) + compressor.flush(zlib.Z_SYNC_FLUSH)
            for event in _events(path)
        ]
        pieces.append(compressor.flush())
        headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
        return httpx2.Response(200, headers=headers, content=body(pieces))

    async def async_pieces(pieces: list[bytes]) -> Any:
        for piece in pieces:
            yield piece

    body = iter if http is httpx2.Client else async_pieces

    transport = httpx2.MockTransport(answer)
    sdk = anthropic.Anthropic if http is httpx2.Client else anthropic.AsyncAnthropic
    return sdk(api_key="test", max_retries=0, http_client=http(transport=transport))


@pytest.mark.parametrize("name", ["two_tools.jsonl", "errors/invalid_tool_json.jsonl"])
def test_a_compressed_stream_is_checked_decoded_and_handed_on_whole(name: str) -> None:
    path = LIBRARY / name
    seen, error = _raw_stream(strict(_gzip_client(path)))
    plain, _ = _raw_stream(_gzip_client(path))
    expected = replay_outcome(path)
    if expected.error is None:
        assert error is None and seen == plain and "message_stop" in seen
    else:
        assert isinstance(expected.error, StreamProtocolError)
        assert isinstance(error, StreamProtocolError) and error.code == expected.error.code
        assert seen == plain[: len(seen)] and "content_block_stop" not in seen[-1:]


def test_a_compressed_stream_is_checked_by_the_async_client_too() -> None:
    async def read(client: anthropic.AsyncAnthropic) -> BaseException | None:
        try:
            async for _ in await client.messages.create(**ASK, stream=True):
                pass
        except Exception as error:
            return error
        return None

    good = asyncio.run(read(strict(_gzip_client(LIBRARY / "two_tools.jsonl", httpx2.AsyncClient))))
    broken = strict(_gzip_client(LIBRARY / "errors/invalid_tool_json.jsonl", httpx2.AsyncClient))
    error = asyncio.run(read(broken))
    assert good is None
    assert isinstance(error, StreamProtocolError) and error.code == "invalid_tool_json"


def test_a_part_that_is_no_object_is_read_as_an_empty_one_not_a_crash() -> None:
    start = {"type": "message_start", "message": {}}
    delta = {"type": "content_block_delta", "index": 0, "delta": "oops"}
    stop = {"type": "message_delta", "delta": ["oops"]}
    guard = StreamGuard()
    assert guard.feed(encode_event(start) + encode_event(delta)) != b""
    assert guard.failure is None  # a delta of no known kind: nothing to check
    guard.feed(encode_event(stop) + encode_event({"type": "message_stop"}))
    assert guard.finish() == b""
    assert guard.failure is not None and guard.failure.code == "missing_stop_reason"


def _guarded_chunks(chunks: list[bytes], guard: StreamGuard) -> tuple[list[bytes], Any]:
    """What the guard releases of each chunk and at the end, and the violation it found."""
    released = [guard.feed(chunk) for chunk in chunks]
    if guard.failure is None:
        released.append(guard.finish())
    failure = guard.failure
    return released, failure and (failure.code, str(failure))


def _slow_guard() -> StreamGuard:
    """A guard that reads every event whole: its decoder tells no text delta."""
    guard = StreamGuard()
    decoder = cast(StreamingDecoder, guard._decoder)
    decoder.text_delta = lambda piece: False  # type: ignore[method-assign]
    return guard


@pytest.mark.parametrize("events", library_streams())
def test_a_text_delta_told_at_once_is_guarded_as_one_read_whole(events: list[Any]) -> None:
    """The guard's fast way for a text delta (`StreamingDecoder.text_delta`) releases and
    refuses what reading every event whole does, chunk by chunk."""
    chunks = [encode_event(event) for event in events if "harness" not in event]
    assert _guarded_chunks(chunks, StreamGuard()) == _guarded_chunks(chunks, _slow_guard())


def test_every_text_delta_of_a_good_stream_takes_the_fast_way() -> None:
    events = _events(LIBRARY / "text_only.jsonl")
    guard, read_whole = StreamGuard(), []
    decoder = cast(StreamingDecoder, guard._decoder)
    whole_event = decoder.whole_event

    def spied(piece: bytes) -> dict[str, Any] | None:
        read_whole.append(piece)
        return whole_event(piece)

    decoder.whole_event = spied  # type: ignore[method-assign]
    chunks = [encode_event(event) for event in events]
    assert b"".join(guard.feed(chunk) for chunk in chunks) + guard.finish() == b"".join(chunks)
    assert [orjson.loads(piece.split(b"data: ")[1])["type"] for piece in read_whole] == [
        event["type"] for event in events if event["type"] != "content_block_delta"
    ]


#: The headers a request carries a credential in, each of which the error's copy of the
#: request is without: the one redaction's (`harness._redact`), as a recording's.
CREDENTIAL_HEADERS = {
    "authorization": "Bearer sk-ant-a-secret",
    "x-api-key": "sk-ant-a-secret",
    "api-key": "an-azure-secret",
    "x-goog-api-key": "a-google-secret",
    "x-amz-security-token": "an-aws-session-token",
    "cookie": "session=a-secret",
    "proxy-authorization": "Basic YTpzZWNyZXQ=",
}


def test_the_errors_request_is_a_copy_without_the_headers_that_hold_a_credential() -> None:
    kept = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    request = httpx2.Request(
        "POST", "http://test/v1/messages", headers={**CREDENTIAL_HEADERS, **kept}
    )
    error: Any = as_sdk_error(StreamProtocolError("missing_message_stop"), request)
    assert isinstance(error, anthropic.APIError)
    left = dict(error.request.headers)
    assert not left.keys() & CREDENTIAL_HEADERS.keys() and left.items() >= kept.items()
    assert dict(request.headers).keys() >= CREDENTIAL_HEADERS.keys()  # the code's own, as sent
