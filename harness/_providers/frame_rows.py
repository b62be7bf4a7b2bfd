"""The binary rows: a stream served in AWS event-stream frames, broken in its frames.

These rows break the framing, not the dialect, so they are the same for every dialect
that travels in event-stream frames (Anthropic's events on Bedrock, a dialect whose own
wire is frames), and a catalogue holds them only where its stream is framed so
(`Framed`: the host's `frames`, or the provider's `Framing.frames`). Over SSE they mean
nothing: no row is offered there, and a `frame` line served over SSE is refused.

One directive, `{"harness": "frame", ...}` (`harness._directives.FRAME`), writes them:
- with `"fault"`, it breaks the next event's frame: `prelude_crc` flips a bit under the
  prelude CRC (the headers length's lowest), `message_crc` a bit of the payload, under
  the message CRC; `cut_in_prelude` and `cut_in_payload` end the body inside that frame
  (the body ends, the connection is not dropped: a reader that waits for the rest of a
  frame, as botocore's does, never learns of it);
- with `"headers"` (and `"payload"`, JSON), it is a frame of its own, sent where it
  stands: an `exception` frame (`throttlingException`), a `:message-type` no reader
  knows.
`broken_frame` and `own_frame` make the bytes; the plan (`harness._replay.plan`) sends
them, and direct replay (`harness._replay.direct`) reads them through the framing's
decoder (`FramedReplay`), so both come to what a reader of the frames comes to: a
`FrameError` (`bad_frame`, `truncated_frame`) or the API error an exception frame is.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

import orjson

from harness._directives import FRAME, FRAME_FAULTS
from harness._providers.eventstream import FrameError, encode_frame
from harness._providers.fault_rows import Events, Fault

__all__ = [
    "FRAME_ROWS",
    "UNFRAMED",
    "Framed",
    "FramedReplay",
    "broken_frame",
    "own_frame",
]

_PRELUDE: Final = 12
#: Why a `frame` line cannot be read where the stream is SSE, said at its `PATH:LINE`.
UNFRAMED: Final = (
    "a frame line breaks event-stream frames, and this stream is read as SSE "
    '(a stream in frames: a cassette whose header names "host": "bedrock", served there)'
)


class EventReader(Protocol):
    """A framed body's reader: the dialect's events out of the bytes fed, `FrameError` at a
    bad frame, and at `finish` a body that ended inside one."""

    def feed(self, piece: bytes) -> list[dict[str, Any]]: ...
    def finish(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Framed:
    """A dialect's events in event-stream frames: one event's frame, and a new reader of
    frames back into events (Bedrock's `encode_event` and `EventDecoder`)."""

    encode: Callable[[dict[str, Any]], bytes]
    decoder: Callable[[], EventReader]


def broken_frame(frame: bytes, fault: str) -> tuple[bytes, bool]:
    """`frame` broken as the `fault` of a frame line says, and whether the body ends there."""
    size = len(frame)
    if fault in ("prelude_crc", "message_crc"):
        if fault == "prelude_crc":
            at = 7  # the headers length's lowest byte: the prelude CRC no longer matches
        else:
            headers = int.from_bytes(frame[4:8], "big")
            start, end = _PRELUDE + headers, size - 4
            at = (start + end) // 2 if end > start else size - 5
        return frame[:at] + bytes([frame[at] ^ 1]) + frame[at + 1 :], False
    if fault == "cut_in_prelude":
        return frame[: _PRELUDE // 2], True
    headers = int.from_bytes(frame[4:8], "big")
    start, end = _PRELUDE + headers, size - 4
    return frame[: max((start + end) // 2, start + 1)], True


def own_frame(directive: dict[str, Any]) -> bytes:
    """The frame a `frame` line with `headers` stands for (the codec has held each header
    to what a frame holds: `harness._directives.directive_problem`)."""
    payload = directive.get("payload", {})
    return encode_frame(directive["headers"], orjson.dumps(payload))


class FramedReplay:
    """Direct replay of a framed cassette's `frame` lines: each as the bytes the plan sends,
    read by the framing's decoder, so it raises what a reader of the frames would."""

    def __init__(self, framed: Framed) -> None:
        self._framed = framed
        self._fault: str | None = None
        self._frames = 0  # the body's frames so far, this one's included

    def directive(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        """The events a `frame` line comes to (an exception frame's error event), or the
        `FrameError` its frame raises; a `fault` waits for the next event."""
        if "fault" in data:
            self._fault = str(data["fault"])
            return []
        return self._read(own_frame(data), ends=True)

    def event(self, data: dict[str, Any]) -> dict[str, Any]:
        """The event line as its frame reads back: itself, unless a `fault` broke it."""
        fault, self._fault = self._fault, None
        if fault is None:
            self._frames += 1
            return data
        frame, ends = broken_frame(self._framed.encode(data), fault)
        return self._read(frame, ends=ends)[0]  # unreached: every fault raises

    def _read(self, frame: bytes, *, ends: bool) -> list[dict[str, Any]]:
        """`frame` read by a reader of its own, a `FrameError` naming it by its place in
        the body (`frame 11: ...`), as a reader of the whole body names it."""
        self._frames += 1
        decoder = self._framed.decoder()
        try:
            events = decoder.feed(frame)
            if ends:
                decoder.finish()
        except FrameError as error:
            first = "frame 1:"
            told = str(error)
            if self._frames == 1 or not told.startswith(first):
                raise
            placed = FrameError(error.code, f"frame {self._frames}:{told[len(first) :]}")
            placed.before = error.before
            raise placed from None
        return events


# -- the rows -----------------------------------------------------------------------------------

#: A throttling exception's message, as Bedrock words it.
THROTTLED: Final = "Too many requests, please wait before trying again."


def _middle(events: Events) -> int | None:
    """The position of the middle-most line strictly between the stream's first and last."""
    if len(events) < 3:
        return None
    return len(events) // 2


def _inserted(line: dict[str, Any], *, kept: int | None) -> Callable[[Events], Events | None]:
    """A row putting `line` before the middle event, `kept` events after it (None: all)."""

    def derive(events: Events) -> Events | None:
        at = _middle(events)
        if at is None:
            return None
        after = events[at:] if kept is None else events[at : at + kept]
        return copy.deepcopy([*events[:at], line, *after])

    return derive


def _fault(name: str) -> dict[str, Any]:
    return {"harness": FRAME, "fault": name}


def _rows() -> tuple[Fault, ...]:
    prelude_crc, message_crc, cut_in_prelude, cut_in_payload = FRAME_FAULTS
    exception = {
        "harness": FRAME,
        "headers": {
            ":exception-type": "throttlingException",
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        "payload": {"message": THROTTLED},
    }
    unknown = {
        "harness": FRAME,
        "headers": {
            ":event-type": "chunk",
            ":content-type": "application/json",
            ":message-type": "surprise",
        },
        "payload": {},
    }
    return (
        Fault(
            "frame_prelude_crc",
            "bad_frame",
            "a bit flipped under the prelude CRC of the middle event's frame",
            _inserted(_fault(prelude_crc), kept=None),
            framed=True,
        ),
        Fault(
            "frame_message_crc",
            "bad_frame",
            "a bit flipped in the middle event's payload, under its frame's message CRC",
            _inserted(_fault(message_crc), kept=None),
            framed=True,
        ),
        Fault(
            "frame_cut_in_prelude",
            "truncated_frame",
            "the body ends inside the prelude of the middle event's frame",
            _inserted(_fault(cut_in_prelude), kept=1),
            framed=True,
        ),
        Fault(
            "frame_cut_in_payload",
            "truncated_frame",
            "the body ends inside the payload of the middle event's frame",
            _inserted(_fault(cut_in_payload), kept=1),
            framed=True,
        ),
        Fault(
            "exception_mid_stream",
            "api_error:throttlingException",
            "an exception frame (throttlingException) in the middle of the stream",
            _inserted(exception, kept=0),
            framed=True,
        ),
        Fault(
            "unknown_message_type",
            "bad_frame",
            "a frame of :message-type surprise in the middle of the stream",
            _inserted(unknown, kept=None),
            framed=True,
        ),
    )


#: The binary rows, in the order a framed stream's catalogue ends with them.
FRAME_ROWS: Final[tuple[Fault, ...]] = _rows()
