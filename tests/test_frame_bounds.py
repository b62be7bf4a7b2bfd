"""A peer's event-stream frames are read within bounds by every reader of events in them
(Bedrock's chunks, `harness._hosts.bedrock.EventDecoder`; ConverseStream's frames, its
provider's `EventDecoder`), as the proxy, the guard, a recording and import read them: a
frame longer than an event may hold (`MAX_LINE_BYTES`) is refused as soon as its prelude
says so, a payload or an event that may hold more than `MAX_VALUES` JSON values before it
is decoded or parsed, each a `bad_frame`."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from harness._hosts import bedrock
from harness._json import MAX_LINE_BYTES, MAX_VALUES
from harness._providers.bedrock_converse import framing as converse
from harness._providers.eventstream import FrameError, encode_frame

READERS: dict[str, Callable[[], Any]] = {
    "bedrock": bedrock.EventDecoder,
    "bedrock-converse": converse.EventDecoder,
}
CHUNK = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
#: More values than the limit, in 1.5 MB: a frame well within its length limit.
CROWD: Any = [{}] * (MAX_VALUES // 2 + 1)
TOO_MANY = f"may hold more than {MAX_VALUES} JSON values, the limit"


def _prelude(total: int) -> bytes:
    """A frame's prelude declaring `total` bytes and no headers, its CRC right."""
    prelude = total.to_bytes(4, "big") + bytes(4)
    return prelude + zlib.crc32(prelude).to_bytes(4, "big")


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS)
def test_a_frame_longer_than_an_event_may_hold_is_refused_at_its_prelude(
    reader: Callable[[], Any],
) -> None:
    huge = 17 * 2**20  # within botocore's 24 MiB
    decoder = reader()
    with pytest.raises(FrameError) as refused:
        decoder.feed(_prelude(huge))  # the 12 bytes of its prelude, nothing after them
    assert refused.value.code == "bad_frame"
    assert str(refused.value) == (
        f"frame 1: a frame of {huge} bytes, over the {MAX_LINE_BYTES} an event may hold"
    )


@pytest.mark.parametrize(
    ("reader", "frame", "what"),
    [
        (
            bedrock.EventDecoder,
            bedrock.encode_event({"type": "ping", "pad": CROWD}),
            "its event",
        ),
        (
            bedrock.EventDecoder,
            encode_frame(CHUNK, orjson.dumps({"bytes": "e30=", "p": CROWD})),
            "its payload",
        ),
        (
            converse.EventDecoder,
            converse.encode_event({"contentBlockDelta": {"delta": {"text": "x"}, "pad": CROWD}}),
            "its payload",
        ),
    ],
    ids=["bedrock-event", "bedrock-payload", "bedrock-converse-payload"],
)
def test_a_frame_of_too_many_values_is_refused_before_it_is_parsed(
    reader: Callable[[], Any], frame: bytes, what: str
) -> None:
    assert len(frame) < MAX_LINE_BYTES
    with pytest.raises(FrameError) as refused:
        reader().feed(frame)
    assert refused.value.code == "bad_frame"
    assert str(refused.value) == f"frame 1: {what} {TOO_MANY}"


@pytest.mark.parametrize(
    ("reader", "frame"),
    [
        (bedrock.EventDecoder, bedrock.encode_event({"type": "ping", "pad": "x" * 2**22})),
        (converse.EventDecoder, converse.encode_event({"messageStop": {"pad": "x" * 2**22}})),
    ],
    ids=READERS,
)
def test_a_large_frame_within_both_limits_is_read(reader: Callable[[], Any], frame: bytes) -> None:
    assert len(reader().feed(frame)) == 1
