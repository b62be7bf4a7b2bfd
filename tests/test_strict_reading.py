"""Issue 27, part 1: the guard reads an answer's bytes as the SDK does.

Every framing variant of a stream (line ends, `event:` names missing or disagreeing with
`data.type`, comments, `id:`/`retry:` fields, a byte order mark, split chunks, the
content type's case and parameters, a last event with no blank line) is fed to the real
SDK and to `harness.strict`. The adapter's verdict on the events the SDK hands the code
is the guard's verdict; where the SDK drops an event silently (the code reads an answer
the server did not send), the guard refuses the answer with a code of the table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from conftest import LIBRARY

from harness import StreamProtocolError, StrictTransport, read_cassette, strict
from harness._providers.anthropic.adapter import StreamAdapter
from harness._providers.sse import encode_event

ASK: Any = {"model": "claude-sonnet-5", "max_tokens": 64, "messages": []}
SSE = "text/event-stream"

STREAMS = {
    name: [line.data for line in read_cassette(LIBRARY / path).lines() if line.kind == "event"]
    for name, path in {
        "text": "text_only.jsonl",
        "tools": "interleaved.jsonl",
        "max_tokens": "errors/unsupported_stop_reason.jsonl",
        "no_stop": "errors/missing_message_stop.jsonl",
        "api_error": "errors/overloaded_error.jsonl",
    }.items()
}


def _framed(events: list[dict[str, Any]], frame: Callable[[int, dict[str, Any]], bytes]) -> bytes:
    return b"".join(frame(number, event) for number, event in enumerate(events))


def _api(number: int, event: dict[str, Any]) -> bytes:
    return encode_event(event)


def _line_ends(end: bytes) -> Callable[[int, dict[str, Any]], bytes]:
    return lambda number, event: encode_event(event).replace(b"\n", end)


def _named(
    rename: Callable[[dict[str, Any]], str | None],
) -> Callable[[int, dict[str, Any]], bytes]:
    def frame(number: int, event: dict[str, Any]) -> bytes:
        data = encode_event(event).split(b"\n")[1]
        name = rename(event)
        return (b"" if name is None else f"event: {name}\n".encode()) + data + b"\n\n"

    return frame


def _unnamed(kind: str) -> Callable[[int, dict[str, Any]], bytes]:
    return _named(lambda event: None if event["type"] == kind else str(event["type"]))


def _fields(number: int, event: dict[str, Any]) -> bytes:
    event_line, data, _, _ = encode_event(event).split(b"\n")
    return b": keep-alive\n" + event_line + f"\nid: {number}\nretry: 5\n".encode() + data + b"\n\n"


def _split_data(number: int, event: dict[str, Any]) -> bytes:
    """The data over two `data:` lines, cut between two keys (joined by `\n`: JSON still)."""
    event_line, data, _, _ = encode_event(event).split(b"\n")
    cut = data.find(b',"') + 1 or len(data)
    return event_line + b"\n" + data[:cut] + b"\ndata:" + data[cut:] + b"\n\n"


def _no_space(number: int, event: dict[str, Any]) -> bytes:
    return encode_event(event).replace(b"event: ", b"event:").replace(b"data: ", b"data:")


def _mixed(number: int, event: dict[str, Any]) -> bytes:
    return encode_event(event).replace(b"\n", (b"\n", b"\r\n", b"\r")[number % 3])


def _inserted(extra: bytes, before: str) -> Callable[[list[dict[str, Any]]], bytes]:
    def body(events: list[dict[str, Any]]) -> bytes:
        out = b""
        for event in events:
            out += (extra if event["type"] == before else b"") + encode_event(event)
        return out

    return body


ERROR_AS_PING = b'event: ping\ndata: {"type": "error", "error": {"type": "overloaded_error"}}\n\n'
DELTA_AS_PING = (
    b'event: ping\ndata: {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}\n\n'
)
ERROR_AS_DELTA = (
    b'event: content_block_delta\ndata: {"type": "error", "error": {"type": "api_error"}}\n\n'
)

#: name -> the body of a stream's events, framed so
BODIES: dict[str, Callable[[list[dict[str, Any]]], bytes]] = {
    "api": lambda events: _framed(events, _api),
    "crlf": lambda events: _framed(events, _line_ends(b"\r\n")),
    "cr": lambda events: _framed(events, _line_ends(b"\r")),
    "mixed_line_ends": lambda events: _framed(events, _mixed),
    "names_disagree": lambda events: _framed(events, _named(lambda event: "content_block_delta")),
    "names_unknown": lambda events: _framed(events, _named(lambda event: "x")),
    "comments_ids_retries": lambda events: _framed(events, _fields),
    "data_over_two_lines": lambda events: _framed(events, _split_data),
    "no_space_after_colon": lambda events: _framed(events, _no_space),
    "no_names": lambda events: _framed(events, _named(lambda event: None)),
    "empty_names": lambda events: _framed(events, _named(lambda event: "")),
    "message_delta_unnamed": lambda events: _framed(events, _unnamed("message_delta")),
    "message_start_unnamed": lambda events: _framed(events, _unnamed("message_start")),
    "block_stop_unnamed": lambda events: _framed(events, _unnamed("content_block_stop")),
    "delta_unnamed": lambda events: _framed(events, _unnamed("content_block_delta")),
    "bom": lambda events: b"\xef\xbb\xbf" + _framed(events, _api),
    "bom_crlf": lambda events: b"\xef\xbb\xbf" + _framed(events, _line_ends(b"\r\n")),
    "error_named_ping": _inserted(ERROR_AS_PING, "message_delta"),
    "delta_named_ping": _inserted(DELTA_AS_PING, "message_stop"),
    "error_named_delta": _inserted(ERROR_AS_DELTA, "content_block_stop"),
    "last_event_unterminated": lambda events: _framed(events, _api)[:-1],
    "last_event_unterminated_cr": lambda events: _framed(events, _line_ends(b"\r"))[:-1],
    "trailing_comment": lambda events: _framed(events, _api) + b": bye",
}

CHUNKINGS: dict[str, Callable[[bytes], list[bytes]]] = {
    "whole": lambda body: [body],
    "by_event": lambda body: [part for part in re.split(rb"(?<=\n\n)", body) if part] or [body],
    "7_bytes": lambda body: [body[at : at + 7] for at in range(0, len(body), 7)],
    "bytes": lambda body: [body[at : at + 1] for at in range(len(body))],
}

CONTENT_TYPES = [SSE, "Text/Event-Stream", "text/event-stream; charset=utf-8", "text/plain", None]


class _Body(httpx2.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._chunks)


def _client(chunks: list[bytes], content_type: str | None) -> anthropic.Anthropic:
    headers = {} if content_type is None else {"content-type": content_type}

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=headers, stream=_Body(chunks))

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    return anthropic.Anthropic(api_key="sk-test", http_client=http, max_retries=0)


def _outcome(error: BaseException | None) -> str:
    """`done`, a protocol error's code (wherever it is in the chain), or what was raised."""
    seen = error
    while seen is not None:
        if isinstance(seen, StreamProtocolError):
            return seen.code
        seen = seen.__cause__ or seen.__context__
    if isinstance(error, anthropic.APIStatusError):
        return "api_error"
    return "done" if error is None else type(error).__name__


def _read_by_sdk(client: anthropic.Anthropic) -> tuple[list[Any], str]:
    """The events `create(stream=True)` hands the code, and how the reading ended."""
    events: list[Any] = []
    try:
        for event in client.messages.create(**ASK, stream=True):
            events.append(event)
    except Exception as error:
        return events, _outcome(error)
    return events, "done"


def _adapter_verdict(events: list[Any]) -> str:
    adapter = StreamAdapter()
    try:
        for event in events:
            adapter.feed(event)
        adapter.finish()
    except StreamProtocolError as error:
        return error.code
    return "done"


def _sent(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] != "ping"]


def _meant(body: bytes) -> list[dict[str, Any]]:
    """Every event a body's `data:` fields carry, whatever its names, line ends or blank
    lines say: what the server sent, to tell what the SDK's reading dropped."""
    text = body.decode().removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    meant = []
    for block in text.split("\n\n"):
        fields = [line.partition(":") for line in block.split("\n")]
        joined = "\n".join(value.removeprefix(" ") for name, _, value in fields if name == "data")
        if joined:
            meant.append(json.loads(joined))
    return meant


def _variants() -> Iterator[Any]:
    for stream in STREAMS:
        for body in BODIES:
            for chunking in CHUNKINGS:
                if chunking == "bytes" and stream not in ("text", "no_stop"):
                    continue  # a byte at a time is slow: two streams are enough
                yield pytest.param(stream, body, chunking, id=f"{stream}-{body}-{chunking}")


@pytest.mark.parametrize(("stream", "body", "chunking"), list(_variants()))
def test_the_guard_gives_the_verdict_on_what_the_sdk_hands_the_code(
    stream: str, body: str, chunking: str
) -> None:
    whole = BODIES[body](STREAMS[stream])
    chunks = CHUNKINGS[chunking](whole)
    read, ended = _read_by_sdk(_client(chunks, SSE))
    _, guarded = _read_by_sdk(strict(_client(chunks, SSE)))
    handed, meant = _sent([event.to_dict() for event in read]), _sent(_meant(whole))
    if ended == "api_error":  # what the SDK read up to the error it raised
        meant = meant[: [event["type"] for event in meant].index("error")]
    dropped = handed != (meant if ended in ("done", "api_error") else meant[: len(handed)])
    if dropped or any(event["type"] == "error" for event in handed):
        # The SDK dropped a stream event silently, or handed on the API's error as an
        # event, raising nothing: the answer the code reads is not the one sent, and the
        # guard refuses it with a code of the table.
        assert guarded not in ("done", "api_error") and guarded.islower(), guarded
    elif ended != "done":
        # The SDK raised (the API's error, bytes it cannot decode): so does the guard's.
        assert guarded == ended or guarded in ("SSEFormatError", "HiddenEvent"), guarded
    else:
        assert guarded == _adapter_verdict(read)


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
@pytest.mark.parametrize("stream", ["text", "max_tokens"])
def test_a_stream_is_guarded_whatever_its_content_type(
    stream: str, content_type: str | None
) -> None:
    chunks = CHUNKINGS["by_event"](BODIES["api"](STREAMS[stream]))
    read, _ = _read_by_sdk(_client(chunks, content_type))
    assert _sent([event.to_dict() for event in read]) == _sent(STREAMS[stream])  # all of it
    _, guarded = _read_by_sdk(strict(_client(chunks, content_type)))
    assert guarded == _adapter_verdict(read)


def test_the_framing_variants_reach_the_verdicts_they_are_about() -> None:
    """The variants above are not vacuous: the SDK really drops what they hide, and the
    guard's codes for them are the end rules' where the answer stops being the one sent."""
    verdicts = {}
    for body in ("message_delta_unnamed", "error_named_ping", "bom", "last_event_unterminated"):
        chunks = CHUNKINGS["by_event"](BODIES[body](STREAMS["text"]))
        read, ended = _read_by_sdk(_client(chunks, SSE))
        _, guarded = _read_by_sdk(strict(_client(chunks, SSE)))
        verdicts[body] = (ended, _adapter_verdict(read), guarded)
    assert verdicts == {
        # the SDK's code sees no stop reason; the guard refuses at the hidden event
        "message_delta_unnamed": ("done", "missing_stop_reason", "missing_message_stop"),
        # an overload the SDK never raises; the answer stops there
        "error_named_ping": ("done", "done", "missing_message_stop"),
        # the byte order mark hides `event:` of message_start: the SDK's code sees none
        "bom": ("done", "missing_message_start", "missing_message_stop"),
        # no blank line after message_stop: the SDK never hands it on
        "last_event_unterminated": ("done", "missing_message_stop", "missing_message_stop"),
    }


def _non_streaming(client: anthropic.Anthropic) -> str:
    try:
        client.messages.create(**ASK)
    except Exception as error:
        return _outcome(error)
    return "done"


@pytest.mark.parametrize("content_type", [SSE, "text/plain", None])
@pytest.mark.parametrize("stream", ["text", "max_tokens", "no_stop"])
def test_a_non_streaming_call_answered_with_a_stream_is_checked_the_same_way_by_both(
    stream: str, content_type: str | None
) -> None:
    chunks = [BODIES["api"](STREAMS[stream])]
    plain = _client(chunks, content_type)
    assert isinstance(plain.messages.create(**ASK), str)  # what the SDK hands the code
    by_strict = _non_streaming(strict(_client(chunks, content_type)))
    headers = {} if content_type is None else {"content-type": content_type}
    transport = StrictTransport(
        httpx2.MockTransport(
            lambda request: httpx2.Response(200, headers=headers, content=chunks[0])
        )
    )
    by_transport = _non_streaming(
        anthropic.Anthropic(
            api_key="sk-test", http_client=httpx2.Client(transport=transport), max_retries=0
        )
    )
    expected = {
        "text": "done",
        "max_tokens": "unsupported_stop_reason",
        "no_stop": "missing_message_stop",
    }
    assert by_strict == by_transport == expected[stream]


def test_a_plain_text_answer_to_a_non_streaming_call_is_refused() -> None:
    client = strict(_client([b"Service temporarily unavailable"], "text/plain"))
    with pytest.raises(StreamProtocolError) as raised:
        client.messages.create(**ASK)
    assert raised.value.code == "missing_message_stop"
    assert "not JSON, read as the stream it would be" in "".join(raised.value.__notes__)


@pytest.mark.parametrize("guard", ["strict", "transport"])
def test_an_answer_a_transport_gave_as_bytes_is_guarded_too(guard: str) -> None:
    """A transport that answers with `content=` (httpx's `MockTransport` as tests use it,
    respx) hands the SDK a response read already: the guard reads it all the same."""
    body = BODIES["api"](STREAMS["max_tokens"])
    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(200, headers={"content-type": SSE}, content=body)
    )
    wrapped = StrictTransport(transport) if guard == "transport" else transport
    client = anthropic.Anthropic(
        api_key="sk-test", http_client=httpx2.Client(transport=wrapped), max_retries=0
    )
    _, outcome = _read_by_sdk(strict(client) if guard == "strict" else client)
    assert outcome == "unsupported_stop_reason"
