"""A streamed JSON array: one body that is `[`, objects separated by commas, `]`.

Gemini's `streamGenerateContent` answers this way when the request does not ask for
`alt=sse`: the body opens with `[`, each chunk follows as it is made (`,\\r\\n` between
two), and `]` closes it, as

    [{"candidates": [...]}
    ,\\r\\n{"candidates": [...]}
    ]

`ArrayDecoder` reads such a body fed in pieces (a piece may end anywhere: mid-string,
mid-escape, mid-character), handing on each element as soon as its closing brace
arrives, parsed strictly (orjson: no `NaN`, UTF-8 only). It finds an element's end by
counting braces outside strings, so each byte is read a bounded number of times: the
runs that leave the count as it is (strings, escapes and all, other bytes, an object
holding no object) are skipped by one regular expression, in C, and Python steps only
at the other braces, each of which opens or closes a value. Whitespace (space, tab, CR,
LF) may stand between tokens.

Bounded whatever the peer sends, as the SSE and event-stream readers are: an element
may hold at most `max_element` bytes (`MAX_ELEMENT`: 8 MiB, `MAX_LINE_BYTES`, what a
line or an event may hold), and is refused as soon as it is known to be longer, the rest
of it never held; its commas and opening brackets are counted as its bytes are taken
(`harness._json.value_marks`, at most `STEP` bytes at a time), and one that may hold
more than `MAX_VALUES` JSON values is refused there, never scanned further nor parsed.

Refused, each as an `ArrayError` with one of two codes:
- `not_an_array`: a body that does not open with `[`, an element that is not an object
  (a string, a number, a nested array), a missing or doubled comma, an element that is
  not JSON, anything after the closing `]`, an element longer than `max_element`, and
  one that may hold more than `MAX_VALUES` values;
- `truncated_array`: the body ends before its closing `]` (a stream cut: the API always
  closes it).

`OPENING`, `SEPARATOR` and `CLOSING` frame elements the way the API does, for a server
of ours answering in this framing (`harness._providers.wire.Delimited`).

The library `ijson` reads a JSON text incrementally too, but it hands on parser events
(or whole items under a prefix), not an element's bytes; it would add a dependency (and
its C backend) for what is, with orjson already parsing each element, one small scanner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

import orjson

from harness._json import MAX_LINE_BYTES, MAX_VALUES, crowded, value_marks
from harness._terminal import printable

__all__ = [
    "CLOSING",
    "CONTENT_TYPE",
    "MAX_ELEMENT",
    "OPENING",
    "SEPARATOR",
    "ArrayDecoder",
    "ArrayError",
    "elements_from_body",
    "elements_from_chunks",
]

#: How the API frames the array: the opening, what stands between two elements, the end.
OPENING: Final = b"["
SEPARATOR: Final = b"\n,\r\n"
CLOSING: Final = b"\n]"
#: The content type the API answers the array with.
CONTENT_TYPE: Final = "application/json; charset=UTF-8"

#: What an element may hold before it is refused: what an SSE line or event, an
#: event-stream frame and a cassette line may (`MAX_LINE_BYTES`).
MAX_ELEMENT: Final = MAX_LINE_BYTES
#: The most bytes of an element scanned before its values are counted again.
STEP: Final = 1 << 16
#: White space between tokens, skipped in C (a peer may send megabytes of it).
_SPACE: Final = re.compile(rb"[ \t\r\n]*+")
#: A string's bytes up to its closing quote, escapes whole (possessive: nothing to undo).
_STRING_BYTES: Final = rb'(?:[^"\\]++|\\.)*+'
#: Inside an element, outside a string: the longest run that leaves the count of braces
#: as it is (bytes but braces and quotes, whole strings, objects holding no object).
_LEVEL: Final = re.compile(
    rb'(?:[^{}"]++|"%s"|\{(?:[^{}"]++|"%s")*+\})*+' % (_STRING_BYTES, _STRING_BYTES), re.DOTALL
)
#: Inside a string: the longest run before its closing quote, or before a backslash that
#: ends the piece (what it escapes comes next).
_INSIDE: Final = re.compile(_STRING_BYTES, re.DOTALL)

# where the reader is between elements
_START, _FIRST, _ELEMENT, _AFTER, _NEXT, _END = range(6)


class ArrayError(ValueError):
    """A body that is not one streamed array of objects; `code` says how (module).

    Raised by `feed`, `before` holds the elements the same piece completed before it, as
    an `SSEFormatError`'s does (the guard hands them on first)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.before: list[dict[str, Any]] = []


class ArrayDecoder:
    """Objects out of a streamed JSON array fed in pieces (see the module).

    After each `feed`, `rest_at` says where in that piece the last element it completed
    ends (-1: it completed none), as `harness._providers.sse.StreamingDecoder.rest_at`
    says of events, and `ends` where each of them ends.
    """

    def __init__(self, *, max_element: int = MAX_ELEMENT) -> None:
        self._state = _START
        self._held = bytearray()  # the element under way
        self._depth = 0
        self._marks = 0  # the element's commas and opening brackets so far
        self._in_string = False
        self._escaped = False  # the last byte held was a backslash inside a string
        self._count = 0
        self._max = max_element
        self.rest_at = -1
        self.ends: list[int] = []

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        """The elements `piece` completes; `ArrayError` at the first thing refused, with
        the elements before it (`before`)."""
        found: list[dict[str, Any]] = []
        try:
            self._read(piece, found)
        except ArrayError as error:
            error.before = found
            raise
        return found

    def _read(self, piece: bytes, found: list[dict[str, Any]]) -> None:
        """`feed`'s reading: the elements `piece` completes, added to `found`."""
        self.rest_at = -1
        ends: list[int] = []
        self.ends = ends
        at, size = 0, len(piece)
        while at < size:
            if self._state == _ELEMENT:
                end = self._take(piece, at)
                if end is None:
                    break
                found.append(self._element())
                self.rest_at = at = end
                ends.append(end)
                continue
            space = _SPACE.match(piece, at)
            assert space is not None  # it matches the empty run
            at = space.end()
            if at < size:
                self._between(piece[at])
                at += 1

    def _between(self, byte: int) -> None:
        """One byte outside any element: `[`, `,`, `]`, or an element's `{`."""
        state = self._state
        if state == _START and byte == 0x5B:  # [
            self._state = _FIRST
        elif state in (_FIRST, _NEXT) and byte == 0x7B:  # {
            self._state, self._depth, self._marks = _ELEMENT, 1, 1
            self._held = bytearray(b"{")
        elif state in (_FIRST, _AFTER) and byte == 0x5D:  # ]
            self._state = _END
        elif state == _AFTER and byte == 0x2C:  # ,
            self._state = _NEXT
        else:
            raise ArrayError("not_an_array", self._unexpected(byte))

    def _unexpected(self, byte: int) -> str:
        shown = printable(chr(byte)) if byte < 0x80 else f"byte {byte:#04x}"
        state = self._state
        if state == _START:
            return f"the body opens with {shown!r}, not '[': not a streamed JSON array"
        if state == _END:
            return f"{shown!r} after the array's closing ']'"
        if state == _AFTER:
            return f"after element {self._count}: {shown!r} where ',' or ']' belongs"
        return f"element {self._count + 1} opens with {shown!r}: not a JSON object"

    def _take(self, piece: bytes, at: int) -> int | None:
        """Where in `piece` (from `at`) the element under way ends, just past its closing
        brace, its bytes there taken; None when it goes on past the piece, all of which
        is taken. `ArrayError` as soon as it is known to be longer than `max_element`
        (nothing of the piece taken) or to hold too many values: its bytes are scanned
        `STEP` at most at a time, each stretch's values counted before the next."""
        start, size = at, len(piece)
        bound = min(size, at + self._max - len(self._held))  # past it, a byte too many
        end = None
        while at < bound and end is None:
            stop = min(bound, at + STEP)
            end = self._scan(piece, at, stop)
            taken = stop if end is None else end
            self._marks += value_marks(piece, at, taken)
            if self._marks >= MAX_VALUES:  # `values_at_most`: one more than its marks
                raise ArrayError("not_an_array", crowded(f"element {self._count + 1}"))
            at = taken
        if end is None and bound < size:  # the rest of it is never read
            raise ArrayError(
                "not_an_array", f"element {self._count + 1} is longer than {self._max} bytes"
            )
        self._held += memoryview(piece)[start:at]
        return end

    def _scan(self, piece: bytes, at: int, stop: int) -> int | None:
        """Where in `piece` (from `at`, before `stop`) the element under way ends, just
        past its closing brace; None when it goes on past `stop`."""
        while at < stop:
            if self._escaped:
                self._escaped = False
                at += 1
                continue
            run = (_INSIDE if self._in_string else _LEVEL).match(piece, at, stop)
            assert run is not None  # each matches the empty run
            at = run.end()
            if at == stop:
                return None
            byte = piece[at]
            at += 1
            if self._in_string:  # its closing quote, or a backslash ending the stretch
                self._escaped = byte == 0x5C
                self._in_string = self._escaped
            elif byte == 0x22:  # "
                self._in_string = True
            elif byte == 0x7B:  # {
                self._depth += 1
            else:  # }
                self._depth -= 1
                if self._depth == 0:
                    return at
        return None

    def _element(self) -> dict[str, Any]:
        self._count += 1
        self._state = _AFTER
        held, self._held = bytes(self._held), bytearray()
        try:
            element = orjson.loads(held)
        except orjson.JSONDecodeError as error:
            raise ArrayError(
                "not_an_array", f"element {self._count} is not JSON: {error}"
            ) from None
        found: dict[str, Any] = element  # it opened with `{` and parsed: an object
        return found

    def finish(self) -> None:
        """The body ended: `truncated_array` unless the array was closed."""
        if self._state == _END:
            return
        if self._state == _START:
            raise ArrayError("truncated_array", "the body is empty: no streamed JSON array")
        where = f"inside element {self._count + 1}" if self._state == _ELEMENT else "before ']'"
        raise ArrayError(
            "truncated_array", f"the body ends {where}, after {self._count} element(s)"
        )


def elements_from_chunks(chunks: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """The objects of a streamed JSON array arriving in chunks, each as soon as it is whole."""
    decoder = ArrayDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    decoder.finish()


def elements_from_body(body: bytes) -> list[dict[str, Any]]:
    """The objects of a whole streamed JSON array body."""
    return list(elements_from_chunks([body]))
