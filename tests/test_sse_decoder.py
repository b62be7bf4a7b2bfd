"""`StreamingDecoder` reads a piece that is one whole event at once (the guard's pieces):
the same events, counts and errors as line by line; and it tells a text delta as the API
frames it only where `feed` reads one. A bounded decoder (`max_line` given: the guard's,
the proxy's, a recording's) refuses an event that may hold more values than the limit
before any of it is parsed."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from hypothesis import given, settings, strategies as st

from harness._json import MAX_LINE_BYTES, MAX_VALUES
from harness._providers import openai_sse, sse
from harness._providers.openai_sse import OpenAIDecoder
from harness._providers.sse import FieldsDecoder, SSEFormatError, StreamingDecoder, encode_event

PIECES = [
    b'event: ping\ndata: {"type": "ping"}\n\n',
    b'event: x\ndata:  {"type": "two spaces"}\n\n',
    b"event: x\ndata: \n\n",
    b'event: x\r\ndata: {"type": "crlf"}\r\n\r\n',
    b'event: x\ndata: {"type": "caf\xc3\xa9"}\n\n',
    b'event: \xff\ndata: {"type": "bad event line"}\n\n',
    b'event: x\ndata: {"type": "bad data \xff"}\n\n',
    b"event: x\ndata: NaN\n\n",
    b'event: x\nid: 1\ndata: {"type": "more lines"}\n\n',
]


def _line_by_line(piece: bytes) -> object:
    decoder = StreamingDecoder()
    try:
        return [event for byte in piece for event in decoder.feed(bytes([byte]))]
    except SSEFormatError as error:
        return str(error)


@pytest.mark.parametrize("piece", PIECES, ids=range(len(PIECES)))
def test_a_whole_event_reads_as_line_by_line(piece: bytes) -> None:
    try:
        whole: object = StreamingDecoder().feed(piece)
    except SSEFormatError as error:
        whole = str(error)
    assert whole == _line_by_line(piece)


def _text_delta(text: object, index: object = 0) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": text},
    }


def _read_as_a_text_delta(piece: bytes) -> bool:
    """What `feed` makes of `piece`: one event, a text delta of a text at an int index."""
    try:
        events = StreamingDecoder().feed(piece)
    except SSEFormatError:
        return False
    if len(events) != 1:
        return False
    (event,) = events
    delta = event.get("delta")
    return (
        set(event) == {"type", "index", "delta"}
        and event["type"] == "content_block_delta"
        and type(event["index"]) is int
        and isinstance(delta, dict)
        and set(delta) == {"type", "text"}
        and delta["type"] == "text_delta"
        and type(delta["text"]) is str
    )


TOLD = [
    encode_event(_text_delta("Hello")),
    encode_event(_text_delta("", 12)),
    encode_event(_text_delta('say "hi"\\\n\t/ \x01 \x7f')),
    encode_event(_text_delta("café 日本 😀")),
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"\\u00e9\\/"}}\n\n',
]
NOT_TOLD = [
    # other spacing or key order: JSON all the same, read by `feed`
    b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
    b'"delta": {"type": "text_delta", "text": "a"}}\n\n',
    b'event: content_block_delta\ndata: {"index":0,"type":"content_block_delta",'
    b'"delta":{"type":"text_delta","text":"a"}}\n\n',
    # a surrogate pair escaped (good JSON), and a lone one (which orjson refuses)
    encode_event(_text_delta("x")).replace(b'"x"', b'"\\ud83d\\ude00"'),
    encode_event(_text_delta("x")).replace(b'"x"', b'"\\ud800"'),
    # not JSON: a raw control character, a bad escape, an unescaped quote, bad UTF-8
    encode_event(_text_delta("x")).replace(b'"x"', b'"a\tb"'),
    encode_event(_text_delta("x")).replace(b'"x"', b'"a\\qb"'),
    encode_event(_text_delta("x")).replace(b'"x"', b'"a"b"'),
    encode_event(_text_delta("x")).replace(b'"x"', b'"\xff"'),
    encode_event(_text_delta("x")).replace(b'"x"', b'"\xed\xa0\x80"'),
    # a key the text could hide: the closing quote ends the text there
    encode_event(_text_delta("x")).replace(b'"x"', b'"x","type":"input_json_delta"'),
    # other indexes, other framing, more than one event, not all of one
    encode_event(_text_delta("x", 1.0)),
    encode_event(_text_delta("x", -1)),
    encode_event(_text_delta("x")).replace(b'"index":0', b'"index":01'),
    encode_event(_text_delta("x")).replace(b"\n", b"\r\n"),
    encode_event(_text_delta("x")).replace(b"delta\ndata", b"delta\rdata"),
    encode_event(_text_delta("x")) * 2,
    encode_event(_text_delta("x"))[:-1],
    encode_event(_text_delta(7)),
]


@pytest.mark.parametrize("piece", TOLD + NOT_TOLD, ids=range(len(TOLD + NOT_TOLD)))
def test_a_text_delta_is_told_only_where_feed_reads_one(piece: bytes) -> None:
    told = StreamingDecoder().text_delta(piece)
    assert told == (piece in TOLD)
    if told:
        assert _read_as_a_text_delta(piece)


def test_a_text_delta_told_is_counted_as_feed_counts_it() -> None:
    decoder = StreamingDecoder()
    assert decoder.text_delta(encode_event(_text_delta("a")))
    with pytest.raises(SSEFormatError, match="event 2 is not JSON"):
        decoder.feed(b"event: x\ndata: {\n\n")


@pytest.mark.parametrize("held", [b"event: content_blo", b'data: {"type": "ping"}\n'])
def test_a_text_delta_is_not_told_while_part_of_an_event_is_held(held: bytes) -> None:
    decoder = StreamingDecoder()
    assert decoder.feed(held) == []
    assert not decoder.text_delta(encode_event(_text_delta("a")))


@settings(deadline=None)
@given(text=st.text(), index=st.integers(0, 10**9 - 1))
def test_every_text_delta_the_api_frames_is_told(text: str, index: int) -> None:
    piece = encode_event(_text_delta(text, index))
    assert StreamingDecoder().text_delta(piece)
    assert _read_as_a_text_delta(piece)


@settings(deadline=None)
@given(
    text=st.text(alphabet=st.characters(max_codepoint=0x7F) | st.sampled_from('é😀\\"')),
    at=st.integers(0, 10**6),
    byte=st.integers(0, 255),
)
def test_a_text_delta_broken_anywhere_is_told_only_if_feed_reads_one(
    text: str, at: int, byte: int
) -> None:
    piece = bytearray(encode_event(_text_delta(text)))
    piece[at % len(piece)] = byte
    if StreamingDecoder().text_delta(bytes(piece)):
        assert _read_as_a_text_delta(bytes(piece))


#: Each bounded reader of SSE: Anthropic's (strict JSON, and the guard's lenient reading),
#: OpenAI's, and the one handing each event's data on unread (Gemini's, Chat's recording).
BOUNDED: dict[str, Callable[[], StreamingDecoder]] = {
    "anthropic": lambda: StreamingDecoder(max_line=MAX_LINE_BYTES),
    "guard": lambda: StreamingDecoder(max_line=MAX_LINE_BYTES, lenient=True),
    "openai": lambda: OpenAIDecoder(max_line=MAX_LINE_BYTES),
    "fields": lambda: FieldsDecoder(max_line=MAX_LINE_BYTES),
}
#: An event of 1.5 MB, well within the line limit, holding more values than the limit.
CROWDED = encode_event({"type": "ping", "pad": [{}] * (MAX_VALUES // 2 + 1)})


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the JSON texts the SSE readers parse from now on."""
    sizes: list[int] = []

    def spy(read: Callable[..., Any]) -> Callable[..., Any]:
        def reading(data: Any) -> Any:
            sizes.append(len(data))
            return read(data)

        return reading

    for module in (sse, openai_sse):
        loads = SimpleNamespace(loads=spy(orjson.loads), JSONDecodeError=orjson.JSONDecodeError)
        monkeypatch.setattr(module, "orjson", loads)
        monkeypatch.setattr(module, "sdk_json", spy(module.sdk_json))
    return sizes


@pytest.mark.parametrize("size", [len(CROWDED), 65536], ids=["one piece", "in pieces"])
@pytest.mark.parametrize("decoder", BOUNDED.values(), ids=BOUNDED)
def test_an_event_of_too_many_values_is_refused_before_it_is_parsed(
    decoder: Callable[[], StreamingDecoder], size: int, parsed: list[int]
) -> None:
    reading = decoder()
    reading.feed(encode_event({"type": "ping"}))  # an event before it, read as ever
    with pytest.raises(SSEFormatError) as refused:
        for at in range(0, len(CROWDED), size):
            reading.feed(CROWDED[at : at + size])
    assert str(refused.value) == f"event 2 may hold more than {MAX_VALUES} JSON values, the limit"
    assert max(parsed, default=0) < 100  # the ping before it only


def test_an_unbounded_decoder_reads_an_event_of_any_count_of_values() -> None:
    (event,) = StreamingDecoder().feed(CROWDED)
    assert len(event["pad"]) == MAX_VALUES // 2 + 1


@pytest.mark.parametrize("decoder", BOUNDED.values(), ids=BOUNDED)
def test_a_large_event_of_few_values_is_read_by_every_bounded_decoder(
    decoder: Callable[[], StreamingDecoder],
) -> None:
    large = encode_event({"type": "ping", "pad": "x" * 2**22})
    assert len(decoder().feed(large)) == 1
