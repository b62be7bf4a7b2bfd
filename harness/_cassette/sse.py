"""Server-sent events: cassette events to the API's SSE bytes, and SSE bytes back to events.

Encoding frames each event as the API does (`event: <type>`, `data: <json>`, a blank
line). Decoding is one incremental decoder, `StreamingDecoder`, for every reader (record,
import, the proxy): lines end at `\n` (a `\r` before it dropped), `data:` lines gather
until a blank line ends the event, comments and other fields pass over, as the SDK's
own SSE decoder reads them. Each event's data must be UTF-8 and one JSON object with a
string `type` (strict JSON: no `NaN`), or `SSEFormatError` names the event that is not.
It is ours, not the SDK's, so that the proxy never imports the SDK (seconds cold).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

import orjson

from harness._json import dump_line
from harness._terminal import printable

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "SSEFormatError",
    "StreamingDecoder",
    "encode_event",
    "events_from_body",
    "events_from_chunks",
    "events_from_response",
]


#: A text delta as the API frames it (and `encode_event`): the event line, then the data
#: in the API's own key order and spacing, the text a JSON string whose escapes are the
#: simple ones and `\u` escapes of no surrogate (any other reads through `feed`, which
#: words what is wrong). Possessive repeats: one pass over the text, no backtracking.
_TEXT_DELTA: Final = re.compile(
    rb"event: content_block_delta\n"
    rb'data: \{"type":"content_block_delta","index":(?:0|[1-9][0-9]{0,8}),'
    rb'"delta":\{"type":"text_delta","text":"'
    rb'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4})*+'
    rb'"\}\}\n\n'
)


class SSEFormatError(ValueError):
    """An SSE body whose `data:` field is not a stream event; the message names which."""


def encode_event(event: dict[str, Any]) -> bytes:
    """One event as the API's SSE framing carries it, closing blank line included."""
    kind = printable(str(event["type"])).encode()
    return b"event: " + kind + b"\ndata: " + dump_line(event) + b"\n\n"


def _event(data: str, number: int) -> dict[str, Any]:
    try:
        event = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise SSEFormatError(f"event {number} is not JSON: {error}") from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise SSEFormatError(f"event {number} is not a JSON object with a type")
    return event


def events_from_chunks(chunks: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The events of an SSE body arriving in chunks, each as soon as it is complete."""
    decoder = StreamingDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.finish()


def events_from_response(
    response: httpx2.Response, chunks: Iterator[bytes] | None = None
) -> Iterator[dict[str, Any]]:
    """The events of an SSE response, as they arrive; comments and empty data pass over.

    `chunks` replaces the response's own byte iterator (to watch or bound it).
    """
    return events_from_chunks(response.iter_bytes() if chunks is None else chunks)


def events_from_body(body: bytes) -> list[dict[str, Any]]:
    """The events of a whole SSE body."""
    return list(events_from_chunks([body]))


class StreamingDecoder:
    """Events out of an SSE body fed in pieces as they arrive (a proxy's view of a stream).

    A piece may end anywhere (mid-line, mid-character); see the module for the rules.
    """

    def __init__(self, *, max_line: int | None = None) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._count = 0
        self._max_line = max_line

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        """The events `piece` completes; `SSEFormatError` at a `data:` that is no event,
        and at a line longer than `max_line` bytes (as soon as that much is held)."""
        if piece[:7] == b"event: ":  # a slice: `startswith` parses its arguments each call
            whole = self.whole_event(piece)
            if whole is not None:
                return [whole]
        self._buffer += piece
        *lines, self._buffer = self._buffer.split(b"\n")
        limit = self._max_line
        if limit is not None and any(len(line) > limit for line in (*lines, self._buffer)):
            raise SSEFormatError(f"after event {self._count}: a line longer than {limit} bytes")
        return [event for line in lines if (event := self._line(line)) is not None]

    def whole_event(self, piece: bytes) -> dict[str, Any] | None:
        """The event of `piece`, read at once, when nothing is held and `piece` is one
        whole, good event as the API frames it, `event: <type>\ndata: <json>\n\n` (what a
        server sends at a time): what `feed` gives, in fewer steps. None for any other
        piece (an empty `data:` too), and for one that reading would fail on: `feed` it
        then, which reads it line by line and words the error."""
        if self._buffer or self._data:
            return None
        # Each step here is one of CPython's cheapest at every event: one `split` (a third
        # of a regular expression's time), prefixes compared as slices (`startswith` parses
        # its arguments at each call, a few times the work), `find` for a `\r` (`in`
        # raises and clears a TypeError inside, asking first whether it is an int).
        lines = piece.split(b"\n")
        if (
            len(lines) != 4  # the event line, the data line, the blank line, nothing after
            or lines[2]
            or lines[3]
            or lines[0][:7] != b"event: "
            or lines[1][:6] != b"data: "
            or len(lines[1]) == 6  # an empty data field: no event
            or piece.find(b"\r") >= 0
            or (self._max_line is not None and len(piece) > self._max_line)
        ):
            return None
        try:
            if not piece.isascii():
                lines[0].decode("utf-8")
            event = orjson.loads(lines[1][6:])  # which checks that the data is UTF-8, too
        except (UnicodeDecodeError, orjson.JSONDecodeError):
            return None
        if type(event) is not dict or type(event.get("type")) is not str:
            return None
        self._count += 1
        return event

    def text_delta(self, piece: bytes) -> bool:
        """Whether `piece`, with nothing held, is one whole text delta as the API frames
        it (`_TEXT_DELTA`, its bytes UTF-8): an event `feed` would read as
        `{"type": "content_block_delta", "index": <int>, "delta": {"type": "text_delta",
        "text": <str>}}`, told without building it (the guard's commonest question), and
        counted as `feed` counts it. False for any other piece: `feed` reads that one."""
        if self._buffer or self._data or _TEXT_DELTA.fullmatch(piece) is None:
            return False
        if self._max_line is not None and len(piece) > self._max_line:
            return False
        if not piece.isascii():
            try:
                piece.decode("utf-8")
            except UnicodeDecodeError:
                return False
        self._count += 1
        return True

    def finish(self) -> list[dict[str, Any]]:
        """The event the end of the body completes (a last one with no closing blank line)."""
        events = self.feed(b"\n") if self._buffer else []
        last = self._line(b"")
        return events if last is None else [*events, last]

    def _line(self, raw: bytes) -> dict[str, Any] | None:
        try:
            line = raw.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as error:
            raise SSEFormatError(
                f"after event {self._count}: a line is not UTF-8 ({error.reason})"
            ) from None
        if not line:
            data, self._data = "\n".join(self._data), []
            if not data:
                return None
            self._count += 1
            return _event(data, self._count)
        field, _, value = line.partition(":")
        if field == "data":
            self._data.append(value.removeprefix(" "))
        return None
