"""AWS event-stream frames (`harness._providers.eventstream`) held to botocore's own reader,
`botocore.eventstream.EventStreamBuffer`: the same frames out of any body it reads,
however cut, and a refusal wherever it refuses, each with its code; a decoder given
`max_frame` refuses a longer frame at its prelude, before its bytes arrive."""

from __future__ import annotations

import itertools
import uuid
import zlib
from typing import Any

import pytest
from conftest import not_installed
from hypothesis import given, settings, strategies as st

from harness._providers.eventstream import (
    MAX_HEADERS_LENGTH,
    MAX_PAYLOAD_LENGTH,
    FrameDecoder,
    FrameError,
    encode_frame,
)

eventstream = pytest.importorskip("botocore.eventstream", reason=not_installed("botocore"))

CHUNK = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}

header_values = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.binary(max_size=40),
    st.text(max_size=40),
    st.uuids(),
)
headers = st.dictionaries(st.text(min_size=1, max_size=20), header_values, max_size=6)
frames = st.lists(st.tuples(headers, st.binary(max_size=300)), min_size=1, max_size=6)


def _decoded(body: bytes, cuts: list[int] | None = None) -> list[tuple[dict[str, Any], bytes]]:
    decoder = FrameDecoder()
    bounds = sorted({0, len(body), *(cut % (len(body) + 1) for cut in cuts or [])})
    got = [
        frame
        for start, end in itertools.pairwise(bounds)
        for frame in decoder.feed(body[start:end])
    ]
    decoder.finish()
    return [(frame.headers, frame.payload) for frame in got]


def _botocore(body: bytes) -> list[tuple[dict[str, Any], bytes]]:
    buffer = eventstream.EventStreamBuffer()
    buffer.add_data(body)
    return [(message.headers, message.payload) for message in buffer]


def _as_botocore_gives(value: object) -> object:
    return value.bytes if isinstance(value, uuid.UUID) else value


@settings(max_examples=200, deadline=None)
@given(frames, st.lists(st.integers(0, 10_000), max_size=8))
@pytest.mark.slow
def test_any_frames_however_cut_read_as_botocore_reads_them(
    written: list[tuple[dict[str, Any], bytes]], cuts: list[int]
) -> None:
    body = b"".join(encode_frame(head, payload) for head, payload in written)
    expected = [
        ({name: _as_botocore_gives(value) for name, value in head.items()}, payload)
        for head, payload in written
    ]
    assert _botocore(body) == expected
    assert _decoded(body, cuts) == expected


@settings(max_examples=300, deadline=None)
@given(frames, st.data())
@pytest.mark.slow
def test_any_flipped_bit_is_a_bad_frame_where_botocore_refuses(
    written: list[tuple[dict[str, Any], bytes]], data: st.DataObject
) -> None:
    body = bytearray(b"".join(encode_frame(head, payload) for head, payload in written))
    bit = data.draw(st.integers(0, len(body) * 8 - 1))
    body[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(eventstream.ParserError):
        _botocore(bytes(body))
    with pytest.raises(FrameError) as refused:
        _decoded(bytes(body))
    assert refused.value.code in ("bad_frame", "truncated_frame")


@pytest.mark.parametrize(
    "at", [1, 11, 12, 20, -1], ids=["prelude", "crc", "headers", "payload", "last"]
)
def test_a_body_ending_inside_a_frame_is_truncated(at: int) -> None:
    frame = encode_frame(CHUNK, b'{"bytes": "e30="}')
    body = frame + frame[:at]
    decoder = FrameDecoder()
    assert len(decoder.feed(body)) == 1
    with pytest.raises(FrameError) as refused:
        decoder.finish()
    assert refused.value.code == "truncated_frame"
    assert str(refused.value).startswith("frame 2: the body ends ")


def _prelude(total: int, headers_length: int) -> bytes:
    prelude = total.to_bytes(4, "big") + headers_length.to_bytes(4, "big")
    return prelude + zlib.crc32(prelude).to_bytes(4, "big")


@pytest.mark.parametrize(
    ("prelude", "words"),
    [
        (_prelude(16 + MAX_HEADERS_LENGTH + 1, MAX_HEADERS_LENGTH + 1), "headers of 131073 bytes"),
        (_prelude(16 + MAX_PAYLOAD_LENGTH + 1, 0), "a payload of 25165825 bytes"),
        (_prelude(20, 10), "a total length of 20 cannot hold 10 bytes of headers"),
    ],
    ids=["headers", "payload", "lengths"],
)
def test_lengths_past_botocores_limits_are_refused_before_their_bytes(
    prelude: bytes, words: str
) -> None:
    with pytest.raises(FrameError) as refused:
        FrameDecoder().feed(prelude)
    assert refused.value.code == "bad_frame" and words in str(refused.value)


def _with_headers(raw: bytes) -> bytes:
    """A frame whose headers are `raw` as they are, its CRCs right."""
    total = 16 + len(raw)
    prelude = _prelude(total, len(raw))
    body = prelude + raw
    return body + zlib.crc32(body).to_bytes(4, "big")


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"\x01a\x0a", "header a has unknown type 10"),
        (b"\x01a\x00\x01a\x01", "header a appears twice"),
        (b"\x01a\x07\x00\x09ab", "its headers end inside a header"),
        (b"\x01\xff\x00", "not UTF-8"),
    ],
    ids=["type", "twice", "cut", "utf8"],
)
def test_headers_botocore_cannot_read_are_a_bad_frame(raw: bytes, words: str) -> None:
    with pytest.raises(FrameError) as refused:
        FrameDecoder().feed(_with_headers(raw))
    assert refused.value.code == "bad_frame" and words in str(refused.value)
    if words.startswith("its headers end"):  # botocore reads what there is: "ab", not 9 bytes
        assert _botocore(_with_headers(raw)) == [({"a": "ab"}, b"")]
        return
    with pytest.raises((eventstream.ParserError, KeyError, UnicodeDecodeError)):
        _botocore(_with_headers(raw))


def test_the_decoder_holds_no_more_than_the_frame_under_way() -> None:
    frame = encode_frame(CHUNK, b"x" * 1000)
    decoder = FrameDecoder()
    for _ in range(1000):
        assert len(decoder.feed(frame)) == 1
        assert len(decoder._held) == 0
    assert decoder.feed(frame[:500]) == []
    assert len(decoder._held) == 500


def test_a_frame_past_max_frame_is_refused_at_its_prelude_before_its_bytes() -> None:
    decoder = FrameDecoder(max_frame=1024)
    assert len(decoder.feed(encode_frame({}, b"x" * (1024 - 16)))) == 1  # exactly the limit
    with pytest.raises(FrameError) as refused:
        decoder.feed(_prelude(1025, 0))  # the prelude alone: nothing of the frame is awaited
    assert refused.value.code == "bad_frame"
    assert str(refused.value) == "frame 2: a frame of 1025 bytes, over the 1024 an event may hold"
