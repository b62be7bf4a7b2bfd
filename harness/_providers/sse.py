"""Server-sent events: cassette events to the API's SSE bytes, and SSE bytes back to events.

Encoding frames each event as the API does (`event: <type>`, `data: <json>`, a blank
line). Decoding is one incremental decoder, `StreamingDecoder`, for every reader (the
guard, record, import, the proxy), and it reads a body as the SDKs do (the Python SDK's
`SSEDecoder` and `Stream`, the TypeScript SDK's alike), so that what it hands on is
exactly what the SDK hands the code:

- lines end at `\r\n`, `\r` or `\n`; a line starting with `:` is a comment; a field is
  `name: value` (one space after the colon dropped); `event` names the event, `data`
  lines gather (joined by `\n`), any other field (`id`, `retry`) passes over; a blank
  line ends the event;
- an event named `ping`, or with no name, is skipped; one named `error` is the API's
  error (the SDK raises it, whatever its data); one with empty data is skipped; any
  other is its data, read as JSON, whose `type` (not the name) says what it is;
- an event the body ends before its blank line never reaches the code
  (`unfinished_event` says how many bytes of one a whole body ends in: `harness import`
  keeps them as the cut they were).

Where that reading drops a stream event silently (a `message_delta` with no `event:`
line, a `{"type": "error"}` named `ping` or anything but `error`, a last event with no
blank line after it, a `data:` line behind a byte order mark, which is a field of
another name to the SDKs), the decoder raises `HiddenEvent`: the guard refuses the answer
there, record and import refuse the body. Each event's data must be UTF-8 and one JSON
object with a string `type`, or `SSEFormatError` names the event that is not: strict
JSON (no `NaN`) for what becomes a cassette, the SDK's own lenient reading
(`lenient=True`) for the guard. A line, and an event, longer than `max_line` bytes is
refused as soon as that much is held; the decoder holds at most that much, whatever the
pieces, and reads each byte a bounded number of times. With `max_line` given, an event's
data that may hold more than `MAX_VALUES` JSON values (`harness._json.too_many_values`,
counted on its bytes) is refused before it is parsed: millions of `{}` within the line
limit would cost a second and hundreds of megabytes to read.

It is ours, not the SDK's, so that the proxy never imports the SDK (seconds cold).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

import orjson

from harness._json import MAX_VALUES, crowded, sdk_json, too_many_values
from harness._providers.anthropic.framing import encode_event
from harness._terminal import printable

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "FieldsDecoder",
    "HiddenEvent",
    "SSEFormatError",
    "StreamingDecoder",
    "encode_event",
    "events_from_body",
    "events_from_chunks",
    "events_from_response",
    "sse_fields",
    "unfinished_event",
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
#: A line's end, as the SDKs split lines: CRLF, CR or LF.
_LINE_END: Final = re.compile(rb"\r\n?|\n")
#: The names whose events the SDK does not hand on as they are (`whole_event` leaves
#: them to `feed`).
_SPECIAL_NAMES: Final = frozenset({b"ping", b"error", b""})


class SSEFormatError(ValueError):
    """An SSE body whose `data:` field is not a stream event; the message names which.

    Raised by `feed`, `before` holds the events the same piece completed before it, in
    order (`StreamingDecoder.ends` says where each ends): the SDKs read event by event,
    so a reader of the body reads those first (the guard hands them on)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.before: list[dict[str, Any]] = []


class HiddenEvent(SSEFormatError):
    """A stream event the SDK's reading drops silently: the code never sees it.

    `event` is its data, `why` says why the SDK skips it; `before` as for any other."""

    def __init__(
        self, number: int, event: dict[str, Any], why: str, *, kind: str | None = None
    ) -> None:
        self.event = event
        self.why = why
        shown = printable(str(event.get("type")) if kind is None else kind)
        super().__init__(f"event {number} ({shown}) never reaches the code: {why}")


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


def _behind_a_mark(number: int, value: str) -> HiddenEvent:
    """A `data:` line behind a byte order mark: to the SDKs its field is `\ufeffdata`, an
    unknown one, so they drop the line and, with it, the event (a body's first words)."""
    try:
        event = sdk_json(value.encode())
    except ValueError:
        event = None
    event = event if type(event) is dict else {}
    kind = event.get("type") or event.get("object") or "data"
    why = "a byte order mark before `data:` makes it a field the SDK passes over"
    return HiddenEvent(number, event, why, kind=str(kind))


class StreamingDecoder:
    """Events out of an SSE body fed in pieces as they arrive, read as the SDK reads them.

    A piece may end anywhere (mid-line, mid-character, between a CR and its LF); see the
    module for the rules. After each `feed`, `rest_at` says where in that piece the
    decoder last held nothing of an event (after a blank line, or a comment or field
    line outside any event): the bytes before it are those of whole events, the bytes
    after it belong to one not complete yet (-1: none of the piece is at rest); `ends`
    where in it each event it returned ends (just past its blank line).
    """

    def __init__(self, *, max_line: int | None = None, lenient: bool = False) -> None:
        #: the bytes of the line under way (no line end met yet)
        self._line_bytes = bytearray()
        #: the last piece ended with a CR: an LF starting the next one belongs to it
        self._after_cr = False
        self._name: str | None = None
        self._data: list[memoryview] = []
        #: the bytes of the event under way so far (its lines and their ends)
        self._event_size = 0
        self._count = 0
        self._max_line = max_line
        self._lenient = lenient
        self.rest_at = -1
        self.ends: list[int] = []

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        """The events `piece` completes; `SSEFormatError` at a `data:` that is no event
        (`HiddenEvent` at one the SDK drops), and at a line or an event longer than
        `max_line` bytes (as soon as that much is held), with the events before it."""
        if piece[:7] == b"event: ":  # a slice: `startswith` parses its arguments each call
            whole = self.whole_event(piece)
            if whole is not None:
                self.rest_at = len(piece)
                self.ends = [self.rest_at]
                return [whole]
        events: list[dict[str, Any]] = []
        try:
            self._feed(piece, events)
        except SSEFormatError as error:
            error.before = events
            raise
        return events

    def _feed(self, piece: bytes, events: list[dict[str, Any]]) -> None:
        """`feed` read line by line: the events `piece` completes, added to `events`."""
        ends: list[int] = []
        self.ends = ends
        self.rest_at = -1
        position = 0
        if self._after_cr:
            self._after_cr = False
            if piece[:1] == b"\n":
                position = 1
                if self._at_rest():
                    self.rest_at = 1
        size = len(piece)
        limit = self._max_line
        while position < size:
            end = _LINE_END.search(piece, position)
            if end is None:
                self._line_bytes += memoryview(piece)[position:]
                if limit is not None and len(self._line_bytes) > limit:
                    raise SSEFormatError(
                        f"after event {self._count}: a line longer than {limit} bytes"
                    )
                break
            line: bytes | bytearray
            if self._line_bytes:
                self._line_bytes += memoryview(piece)[position : end.start()]
                line, self._line_bytes = self._line_bytes, bytearray()  # no copy
            else:
                line = piece[position : end.start()]
            position = end.end()
            if position == size and piece[-1:] == b"\r":
                self._after_cr = True
            if limit is not None:
                if len(line) > limit:
                    raise SSEFormatError(
                        f"after event {self._count}: a line longer than {limit} bytes"
                    )
                self._event_size += len(line) + len(end.group())
                if self._event_size > limit:
                    raise SSEFormatError(
                        f"after event {self._count}: an event longer than {limit} bytes"
                    )
            event = self._line(line)
            if event is not None:
                events.append(event)
                ends.append(position)
            if self._at_rest():
                self.rest_at = position
                self._event_size = 0

    def _at_rest(self) -> bool:
        return self._name is None and not self._data and not self._line_bytes

    def whole_event(self, piece: bytes) -> dict[str, Any] | None:
        """The event of `piece`, read at once, when nothing is held and `piece` is one
        whole, good event as the API frames it, `event: <type>\ndata: <json>\n\n` (what a
        server sends at a time), named neither `ping` nor `error`: what `feed` gives, in
        fewer steps. None for any other piece (an empty `data:` too), and for one that
        reading would fail on: `feed` it then, which reads it line by line and words the
        error."""
        if self._line_bytes or self._data or self._name is not None or self._after_cr:
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
            or lines[0][7:] in _SPECIAL_NAMES
            or piece.find(b"\r") >= 0
            or self._read_by_lines(piece)
        ):
            return None
        try:
            if not piece.isascii():
                lines[0].decode("utf-8")
            event = orjson.loads(lines[1][6:])  # which checks that the data is UTF-8, too
        except (UnicodeDecodeError, orjson.JSONDecodeError):
            return None
        if type(event) is not dict or type(kind := event.get("type")) is not str:
            return None
        if kind == "error":  # an error the SDK hands on as an event: `feed` refuses it
            return None
        self._count += 1
        return event

    def text_delta(self, piece: bytes) -> bool:
        """Whether `piece`, with nothing held, is one whole text delta as the API frames
        it (`_TEXT_DELTA`, its bytes UTF-8): an event `feed` would read as
        `{"type": "content_block_delta", "index": <int>, "delta": {"type": "text_delta",
        "text": <str>}}`, told without building it (the guard's commonest question), and
        counted as `feed` counts it. False for any other piece: `feed` reads that one."""
        if (
            self._line_bytes
            or self._data
            or self._name is not None
            or self._after_cr
            or _TEXT_DELTA.fullmatch(piece) is None
        ):
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
        """The body ended. The SDK reads a last line with no line end, but hands on no
        event that no blank line ended: `HiddenEvent` if that was a stream event."""
        self._after_cr = False
        if self._line_bytes:
            line = bytes(self._line_bytes)
            self._line_bytes.clear()
            self._line(line)
        self._name = None
        data = self._joined_data()
        if data:
            event = self._hidden(data)
            if event is not None and event["type"] != "ping":
                why = "the body ends before the blank line that would end it"
                raise HiddenEvent(self._count + 1, event, why)
        return []

    def _line(self, raw: bytes | bytearray) -> dict[str, Any] | None:
        if not raw:
            return self._dispatch()
        if not raw.isascii():
            try:
                raw.decode("utf-8")  # the SDKs decode each line, and fail where it is not
            except UnicodeDecodeError as error:
                raise SSEFormatError(
                    f"after event {self._count}: a line is not UTF-8 ({error.reason})"
                ) from None
        if raw[:5] == b"data:":  # kept as bytes, uncopied: JSON is read from them once
            self._data.append(memoryview(raw)[6 if raw[5:6] == b" " else 5 :])
            return None
        if raw[:1] == b":":
            return None
        field, _, value = raw.decode("utf-8").partition(":")
        if field == "event":
            self._name = value[1:] if value[:1] == " " else value
        elif field == "\ufeffdata" and value.strip():
            raise _behind_a_mark(self._count + 1, value)
        return None  # `id`, `retry` and any other field: nothing the SDK hands on

    def _read_by_lines(self, piece: bytes) -> bool:
        """Whether a bounded decoder leaves a whole piece to `feed`, whose checks it may
        fail: one past `max_line`, or long enough to hold more than `MAX_VALUES` values."""
        limit = self._max_line
        return limit is not None and (len(piece) > limit or len(piece) >= MAX_VALUES)

    def _joined_data(self) -> bytes | memoryview:
        """The event's `data` lines joined by `\n` (the one line itself, uncopied); with
        `max_line` given, `SSEFormatError` for data that may hold more than `MAX_VALUES`
        values, before anything reads it."""
        data, self._data = self._data, []
        joined = data[0] if len(data) == 1 else b"\n".join(data)
        if self._max_line is not None and too_many_values(joined):
            raise SSEFormatError(crowded(f"event {self._count + 1}"))
        return joined

    def _dispatch(self) -> dict[str, Any] | None:
        """The event a blank line ends, as the SDK hands it on; None for one it skips."""
        name, self._name = self._name or None, None
        data = self._joined_data()
        if name == "error":  # the SDK raises its API error, whatever the data says
            self._count += 1
            error = self._hidden(data)
            if error is not None and error["type"] == "error":
                return error
            message = bytes(data).decode("utf-8")
            return {"type": "error", "error": {"type": "api_error", "message": message}}
        if not data:
            return None
        self._count += 1
        if name is None or name == "ping":  # skipped: harmless if it is a ping
            event = self._hidden(data) if self._lenient else self._event(data)
            if event is not None and event["type"] != "ping":
                why = "it has no `event:` line" if name is None else "it is named ping"
                raise HiddenEvent(self._count, event, f"the SDK skips it ({why})")
            return event
        event = self._event(data)
        if event["type"] == "error":
            why = f"the SDK hands it on as an event named {printable(name)}, raising nothing"
            raise HiddenEvent(self._count, event, why)
        return event

    def _event(self, data: bytes | memoryview) -> dict[str, Any]:
        """An event's data, which must be a JSON object with a string `type`."""
        try:
            event = sdk_json(data) if self._lenient else orjson.loads(data)
        except ValueError as error:  # orjson's JSONDecodeError is one
            raise SSEFormatError(f"event {self._count} is not JSON: {error}") from None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise SSEFormatError(f"event {self._count} is not a JSON object with a type")
        return event

    @staticmethod
    def _hidden(data: bytes | memoryview) -> dict[str, Any] | None:
        """The stream event `data` holds, read leniently, if it holds one."""
        try:
            event = sdk_json(data)
        except ValueError:
            return None
        if isinstance(event, dict) and isinstance(event.get("type"), str):
            return event
        return None


class FieldsDecoder(StreamingDecoder):
    """The same line reading, each event handed on unread: `{"name": ..., "data": ...}`
    (the `data` as bytes), for a dialect whose SDK reads the data alone (`sse_fields`,
    and the proxy's and record's reading of an OpenAI body as it arrives)."""

    def whole_event(self, piece: bytes) -> dict[str, Any] | None:
        return None  # every piece goes through `feed`, line by line

    def _dispatch(self) -> dict[str, Any] | None:
        name, self._name = self._name or None, None
        data = bytes(self._joined_data())
        if not data:
            return None
        self._count += 1
        return {"name": name, "data": data}

    def finish(self) -> list[dict[str, Any]]:
        self._after_cr = False
        if self._line_bytes:
            line = bytes(self._line_bytes)
            self._line_bytes.clear()
            self._line(line)
        self._name = None
        if self._joined_data():
            raise SSEFormatError(
                f"event {self._count + 1} never reaches the code: "
                "the body ends before the blank line that would end it"
            )
        return []


def sse_fields(body: bytes) -> list[tuple[str | None, bytes]]:
    """Each event of a whole SSE body as its name (None without an `event:` line) and its
    joined `data`, unread: the lines read as above, events with no data passed over, a
    last event with no blank line after it refused (`SSEFormatError`). What a dialect
    whose SDK reads the data alone makes of them is the dialect's (`harness._providers`)."""
    decoder = FieldsDecoder()
    return [(event["name"], event["data"]) for event in [*decoder.feed(body), *decoder.finish()]]


def unfinished_event(body: bytes) -> int:
    """How many bytes at the end of a whole SSE body belong to an event that no blank line
    ended (a body cut mid-event: what `sse_fields` and `StreamingDecoder.finish` refuse),
    0 when none does, or when the body is unreadable before it (its reader says why)."""
    if not body or body.endswith((b"\n\n", b"\r\r", b"\r\n\r\n")):
        return 0  # it ends with a blank line: every event it holds is ended (no pass)
    decoder = FieldsDecoder()
    try:
        decoder.feed(body)
    except SSEFormatError:
        return 0
    rest = decoder.rest_at
    try:
        decoder.finish()
    except SSEFormatError:
        return len(body) - max(rest, 0)
    return 0
