"""The guard: an answer's bytes checked by the adapter before the client reads them.

Theory of operation
-------------------
`StreamGuard` is sans-IO, like the adapters it drives, and provider-neutral: what a
dialect decides (how its SDK reads SSE, which adapter judges, which event completes an
answer, which is the API's own error) is its `AnswerReader`
(`harness._providers.answers`), made for each answer; the default is Anthropic's
(`harness._providers.anthropic.guard`), and OpenAI's two live with their adapters.
`feed(chunk)` takes the next bytes of an SSE body and returns the bytes that may go on
to the client: those of the whole events among them, each decoded by the reader's
decoder (`StreamingDecoder`, the one SSE decoder, with the provider's rules) and judged
by the reader (for Messages: the light view `harness replay` feeds the adapter,
`EventView`, fed to a `StreamAdapter(text=False)`: no SDK object reaches user code from
here, and the SDK need not be loaded). A text delta, the commonest event, may be told
from its bytes at once while nothing waits (`AnswerReader.text_delta`; for Messages one
regular expression over the API's own framing, fed as what the adapter reads of one,
`TEXT_DELTA`, without building it). That halves the guard's own work over a Messages
text stream (docs/performance.md); the tests hold both ways, told and read whole, to the
same bytes and verdicts.

The decoder reads the bytes as the SDK does (see `harness._providers.sse`,
`harness._providers.openai_sse`): what the adapter judges is what the SDK will hand the
code. An event that reading drops silently (`HiddenEvent`) is refused where it arrives,
by the end rules for the answer as it stands there (the answer the code reads stops
being the one sent), with a note saying which event and why. The guard holds little:
the bytes of the event under way, in one buffer, within the decoder's line and event
limit; from the completing event on, the bytes that can still change the verdict,
within `WITHHELD_LINES` lines' worth (past it the answer is refused), while events that
can change nothing (pings) go on at once.

The bytes of an event still incomplete wait for the rest of it. On a violation, `feed`
returns the events before the broken one in that chunk that would have gone on had
each come in a chunk of its own (their bytes as they came, up to the end of the last:
the decoder says where each event ends, `BodyDecoder.ends`), and nothing from the
broken one on; it keeps the error in `failure`, for the driver to raise after those
bytes: the client reads every good event up to the broken one, never that one or any
after it. A reader may hand an event on rewritten (`AnswerReader.rewritten`: Chat's
repeated call id or name, given once): the chunk holding it is then re-encoded.

From the completing event on, the checked bytes wait for the end of the body (the
events before it in its chunk go on at once, as they would alone). For Messages that is
`message_delta`: the stop reason is in it, and a client may take the answer as complete
there and read no further (litellm does). The end rules run at
`message_stop` (`StreamAdapter.check_end`) and at the end of the body (`finish()`, which
then releases the rest): a wrong or missing stop reason, an answer that never stopped,
an event after `message_stop` are all refused before the client reads `message_delta`.
In a good stream `message_delta` and `message_stop` are the last events, so nothing
waits longer than the body does. (For Chat the completing event is the chunk carrying
`finish_reason`, checked out at `[DONE]`; for Responses the terminal event.)

An API error (for Messages an event named `error`, as the SDK raises it) is the API's
own report, as on direct replay: it and everything after it go on unchecked, and the
client raises its own error for it. Bytes no SDK reads (a `data:` field the SDK would
fail on, a bad frame, a broken element of an array) are the decoder's error (an
`SSEFormatError`, a `FrameError`, an `ArrayError`), which holds the events the chunk
completed before them (`before`): those are checked and handed on as before a broken
event, and the error is kept in `unreadable`, for the driver to raise after them.
`check_message` applies the same rules to a non-streaming `Message`
JSON, as the events a stream of it carries (`events_from_message`); `check_answer` reads
a non-streaming body as the SDK does before it.

`guarded` and `aguarded` are the two drivers: the body's chunks in, the checked chunks
out, raising where the guard does.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Collection, Iterable, Iterator
from typing import Any, Final

from harness._exceptions import StreamProtocolError
from harness._json import MAX_LINE_BYTES, sdk_json
from harness._providers.answers import (
    API_ERROR,
    COMPLETING,
    HARMLESS,
    STRICT_ERROR_TYPE,
    AnswerReader,
)
from harness._providers.anthropic.adapter import COMPLETE_STOP_REASONS
from harness._providers.anthropic.guard import (
    TEXT_DELTA as TEXT_DELTA,  # where it was
    AnthropicReader,
    check_message,
    is_message,
)
from harness._providers.sse import HiddenEvent

__all__ = [
    "STRICT_ERROR_TYPE",
    "WITHHELD_LINES",
    "StreamGuard",
    "aguarded",
    "check_answer",
    "check_message",
    "guarded",
    "strict_error_event",
]

#: How much of an answer the guard may hold from `message_delta` on (what can still
#: change the verdict): two of its longest lines.
WITHHELD_LINES: Final = 2


class StreamGuard:
    """One SSE answer's bytes, released event by event once the adapter accepts them."""

    def __init__(
        self,
        *,
        stop_reasons: Collection[str] = COMPLETE_STOP_REASONS,
        max_line: int = MAX_LINE_BYTES,
        reader: AnswerReader | None = None,
    ) -> None:
        #: the provider's reading of this answer (Anthropic's by default)
        self._reader: AnswerReader = (
            AnthropicReader(stop_reasons=stop_reasons, max_line=max_line)
            if reader is None
            else reader
        )
        self._decoder = self._reader.decoder
        self._read = self._reader.read
        self._text_delta = self._reader.text_delta
        #: the bytes of an event not complete yet
        self._held = bytearray()
        #: the checked bytes from the completing event on, released by `finish`
        self._withheld = bytearray()
        self._max_withheld = WITHHELD_LINES * max_line
        self._completing = False
        self._api_error = False
        #: nothing held or withheld, no error: a text delta may go on as soon as it is fed
        self._steady = True
        #: The violation found, raised by the driver after the bytes `feed` returned.
        self.failure: StreamProtocolError | None = None
        #: Bytes no SDK reads (the decoder's error: `SSEFormatError`, `FrameError`,
        #: `ArrayError`), raised by the driver after the bytes `feed` returned, and by
        #: `feed` and `finish` from then on.
        self.unreadable: ValueError | None = None

    def feed(self, chunk: bytes) -> bytes:
        """The bytes of `chunk` (with those held before) that may go on to the client.
        At bytes no SDK can read (or past the line limit) those are the good events
        before them, and the decoder's error is kept in `unreadable`."""
        if self._steady:
            # The commonest event (a text delta), told at once while nothing waits.
            try:
                if self._text_delta(chunk):
                    return chunk
            except StreamProtocolError as error:
                self.failure = error
                self._steady = False
                return b""
        released = self._feed(chunk)
        self._steady = not (
            self._held
            or self._completing
            or self._api_error
            or self.failure is not None
            or self.unreadable is not None
        )
        return released

    def _feed(self, chunk: bytes) -> bytes:
        """`feed` for any chunk but a text delta told while nothing waits."""
        if self._api_error:
            return chunk
        if self.failure is not None:
            return b""
        if self.unreadable is not None:
            raise self.unreadable
        try:
            events = self._decoder.feed(chunk)  # one whole event read at once, as a rule
        except ValueError as error:  # bytes no SDK reads, or an event it drops (`HiddenEvent`)
            return self._broken(chunk, error)
        rest = self._decoder.rest_at
        if rest < 0:  # all of it belongs to an event under way
            self._held += chunk
            return b""
        if self._held:
            self._held += memoryview(chunk)[:rest]
            ready = bytes(self._held)
            self._held = bytearray(memoryview(chunk)[rest:])
        elif rest == len(chunk):  # the usual chunk: whole events, nothing held before
            ready = chunk
        else:
            ready = chunk[:rest]
            self._held += memoryview(chunk)[rest:]
        return self._checked(ready, events)

    def _checked(self, ready: bytes, events: list[dict[str, Any]]) -> bytes:
        """What `feed` returns of `ready`, the bytes of whole events (`events`)."""
        passing = self._judged(events)
        if self._api_error:
            return self._release_all(self._handed_on(ready, events))
        if passing == len(events) and self.failure is None:
            return self._handed_on(ready, events)
        released, waiting = self._split(ready, self._decoder.rest_at, events, passing)
        if self.failure is not None:
            return released
        self._withheld += waiting
        if len(self._withheld) > self._max_withheld:
            self._refuse_at_limit()
        return released

    def _judged(self, events: list[dict[str, Any]]) -> int:
        """Check `events` in order, up to a violation (kept in `failure`) or the API's own
        error; how many lead them that go on at once, as each would in a chunk of its own:
        before the completing event, or harmless after it (from the first that waits on,
        the rest wait with it, in their order)."""
        completing = self._completing
        passing = 0
        for index, event in enumerate(events):
            verdict = self._check(event)
            if verdict is None or self._api_error:
                break
            if passing == index and (verdict == HARMLESS if completing else not self._completing):
                passing += 1
        return passing

    def _split(
        self, ready: bytes, rest: int, events: list[dict[str, Any]], passing: int
    ) -> tuple[bytes, bytes]:
        """`ready` (whose last `rest` bytes are the chunk's) cut after its first `passing`
        events (`BodyDecoder.ends`): those that go on, and the rest (each part re-encoded
        where the reader rewrote an event). A decoder that does not say where its events
        end (another distribution's, written before `ends`) holds them all, as it did."""
        if self._reader.rewritten:
            self._reader.rewritten = False
            encode = self._reader.encode
            return encode(events[:passing]) if passing else b"", encode(events[passing:])
        ends = getattr(self._decoder, "ends", None)
        if not passing or ends is None:
            return b"", ready
        cut = len(ready) - rest + ends[passing - 1]
        return ready[:cut], ready[cut:]

    def _handed_on(self, ready: bytes, events: list[dict[str, Any]]) -> bytes:
        """`ready`, or the events re-encoded where the reader rewrote one of them."""
        if not self._reader.rewritten:
            return ready
        self._reader.rewritten = False
        return self._reader.encode(events)

    def _release_all(self, ready: bytes) -> bytes:
        """The API's own error came: it and everything held go on, in the order they came
        (withheld, then `ready`, then the event under way), for the SDK to raise."""
        withheld, self._withheld = bytes(self._withheld), bytearray()
        held, self._held = bytes(self._held), bytearray()
        return withheld + ready + held

    def finish(self) -> bytes:
        """The body ended: the rest, if it passes the end rules (else `failure` is set)."""
        if self.unreadable is not None:
            raise self.unreadable
        if self._api_error or self.failure is not None:
            return b""
        try:
            self._decoder.finish()
        except HiddenEvent as hidden:
            self._refuse_hidden(hidden)
            return b""
        rest, self._held = bytes(self._held), bytearray()
        try:
            self._reader.finish()
        except StreamProtocolError as error:
            self.failure = error
            return b""
        return bytes(self._withheld) + rest

    def _broken(self, chunk: bytes, error: ValueError) -> bytes:
        """`feed` for a chunk the decoder refused (`error`): at bytes no SDK reads (kept
        in `unreadable`), or at an event the SDK would drop (refused). The events it
        completed before them (`before`) are checked first (a violation among them, or
        the API's error, decides), and go on before the error as they would before any
        other. A decoder's error that holds none (another distribution's) holds the
        chunk whole, as it did."""
        before: list[dict[str, Any]] = getattr(error, "before", [])
        passing = self._judged(before)
        if self._api_error:
            self._held += chunk
            return self._release_all(b"")
        if self.failure is None:
            if isinstance(error, HiddenEvent):
                self._refuse_hidden(error)
            else:
                self.unreadable = error
        if not passing:
            return b""  # nothing copied: what is held may be a line's worth
        return self._split(bytes(self._held) + chunk, len(chunk), before, passing)[0]

    def _refuse_hidden(self, hidden: HiddenEvent) -> None:
        """An event the SDK would drop: the answer the code reads is not the one sent, so
        it ends there, by the end rules (an event after a complete answer: refused as one)."""
        self._fail_at_end(self._reader.after_end(hidden.event), note=f"the guard: {hidden}")

    def _refuse_at_limit(self) -> None:
        """More than `_max_withheld` bytes since the completing event: the answer ends there."""
        note = f"the guard: over {self._max_withheld} bytes arrived after {self._reader.completing}"
        self._fail_at_end(self._reader.after_end(None), note=note)

    def _fail_at_end(self, after_end: StreamProtocolError, *, note: str) -> None:
        self._steady = False
        try:
            self._reader.check_end()
        except StreamProtocolError as error:
            self.failure = error
        else:
            self.failure = after_end
        self.failure.add_note(note)

    def _check(self, event: dict[str, Any]) -> int | None:
        """The reader's verdict on one event (None, the error kept in `failure`, at a
        violation); the API's own error ends the checking, a completing event starts
        the withholding."""
        try:
            verdict = self._read(event)
        except StreamProtocolError as error:
            self.failure = error
            self._steady = False
            return None
        if verdict == API_ERROR:
            self._api_error = True
        elif verdict == COMPLETING:
            self._completing = True
        return verdict


def strict_error_event(error: StreamProtocolError) -> dict[str, Any]:
    """The SSE `error` event that ends a broken answer for a client in any language: every
    SDK raises its API error for it, the code in `error.code` and first in the message."""
    return {
        "type": "error",
        "error": {
            "type": STRICT_ERROR_TYPE,
            "code": error.code,
            "message": f"{error.code}: {error}",
        },
    }


def check_answer(
    body: bytes | bytearray,
    content_type: str,
    *,
    stop_reasons: Collection[str] = COMPLETE_STOP_REASONS,
    reader: AnswerReader | None = None,
) -> None:
    """Raise `StreamProtocolError` if a non-streaming answer's body breaks the rules, read
    as the SDK reads it: JSON whatever its content type, read leniently (`sdk_json`: a
    `NaN` is a number to the SDKs, and it is the rules, not the reading, that judge it),
    a `Message` checked by `check_message`. A body that is not JSON under a content type
    that is not JSON (an SSE stream, say) is one the SDK hands the code as text: it is
    checked as the stream it would be (`StreamGuard`), so only a whole good answer
    passes. Nothing to check in other JSON (the SDK reports what it cannot read), or in
    what a JSON content type labels but is not JSON (the SDK raises). `reader` (another
    provider's, for a body known not to be JSON) reads that stream instead of Messages'."""
    if reader is None:
        try:
            value = sdk_json(body)
        except ValueError:
            value = _NOT_JSON
        if is_message(value):
            check_message(value, stop_reasons=stop_reasons)
            return
        if value is not _NOT_JSON:
            return
    if _json_type(content_type):
        return
    guard = StreamGuard(stop_reasons=stop_reasons, reader=reader)
    guard.feed(bytes(body))
    if guard.failure is None:
        guard.finish()
    if guard.failure is not None:
        guard.failure.add_note(
            f"the guard: a non-streaming answer ({content_type or 'no content type'}) that "
            "is not JSON, read as the stream it would be"
        )
        raise guard.failure


def _json_type(content_type: str) -> bool:
    """Whether the SDK takes `content_type` for JSON: its media type ends in `json`."""
    return content_type.partition(";")[0].strip().lower().endswith("json")


#: What `check_answer` reads of a body that is not JSON to the SDKs.
_NOT_JSON: Final = object()


def guarded(chunks: Iterable[bytes], guard: StreamGuard) -> Iterator[bytes]:
    """The sync driver: `chunks` as the guard releases them; raises at a violation."""
    for chunk in chunks:
        released = guard.feed(chunk)
        if released:
            yield released
        if guard.failure is not None:
            raise guard.failure
        if guard.unreadable is not None:
            raise guard.unreadable
    released = guard.finish()
    if released:
        yield released
    if guard.failure is not None:
        raise guard.failure


async def aguarded(chunks: AsyncIterable[bytes], guard: StreamGuard) -> AsyncIterator[bytes]:
    """The async driver, the same steps."""
    async for chunk in chunks:
        released = guard.feed(chunk)
        if released:
            yield released
        if guard.failure is not None:
            raise guard.failure
        if guard.unreadable is not None:
            raise guard.unreadable
    released = guard.finish()
    if released:
        yield released
    if guard.failure is not None:
        raise guard.failure
