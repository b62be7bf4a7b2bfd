"""The guard: an answer's bytes checked by the adapter before the client reads them.

Theory of operation
-------------------
`StreamGuard` is sans-IO, like the adapter it drives. `feed(chunk)` takes the next
bytes of an SSE body and returns the bytes that may go on to the client: those of the
whole events among them, each decoded (`StreamingDecoder`, the one SSE decoder), read
through the light view `harness replay` feeds the adapter (`EventView`: no SDK object
reaches user code from here, and the SDK need not be loaded) and fed to a
`StreamAdapter(text=False)` (the same rules; no `TextEvent` built for bytes that go on
as they are). A text delta, the commonest event, is told from its bytes at once while
nothing waits (`StreamingDecoder.text_delta`: one regular expression over the API's own
framing) and fed as what that adapter reads of one, `TEXT_DELTA`, without building it.
That halves the guard's own work over a text stream (docs/performance.md); the tests
hold both ways, told and read whole, to the same bytes and verdicts.

The bytes of an event still incomplete wait for the rest of it. On a violation, `feed`
returns nothing of that chunk (the events before the broken one in it wait with it) and
keeps the error in `failure`, for the driver to raise: the client never reads the event
that broke the rules.

From `message_delta` on, the checked bytes wait for the end of the body. The stop
reason is in `message_delta`, and a client may take the answer as complete there and
read no further (litellm does), so that is the event that completes an answer. The end
rules run at `message_stop` (`StreamAdapter.check_end`) and at the end of the body
(`finish()`, which then releases the rest): a wrong or missing stop reason, an answer
that never stopped, an event after `message_stop` are all refused before the client
reads `message_delta`. In a good stream `message_delta` and `message_stop` are the
last events, so nothing waits longer than the body does.

An API `error` event is the API's own report, as on direct replay: it and everything
after it go on unchecked, and the client raises its own error for it. A `data:` field
that is not an event raises `SSEFormatError` (the client's decoder would fail on it, or
read it leniently). `check_message` applies the same rules to a non-streaming `Message`
JSON, as the events a stream of it carries (`events_from_message`).

`guarded` and `aguarded` are the two drivers: the body's chunks in, the checked chunks
out, raising where the guard does.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Collection, Iterable, Iterator
from typing import Any, Final

import orjson

from harness._adapter import COMPLETE_STOP_REASONS, StreamAdapter
from harness._cassette.message import events_from_message
from harness._cassette.sse import StreamingDecoder
from harness._exceptions import StreamProtocolError
from harness._views import EventView

__all__ = [
    "STRICT_ERROR_TYPE",
    "StreamGuard",
    "aguarded",
    "check_answer",
    "check_message",
    "checked_kind",
    "guarded",
    "message_in",
    "strict_error_event",
]

#: The `error.type` of the event `harness proxy --strict` ends a broken answer with.
STRICT_ERROR_TYPE: Final = "stream_protocol_error"

#: Each text delta `StreamingDecoder.text_delta` tells, as the adapter reads it when it
#: builds no `TextEvent`: a delta of type `text_delta`, nothing more read.
TEXT_DELTA: Final = EventView({"type": "content_block_delta", "delta": {"type": "text_delta"}})


def _last_event_end(data: bytes) -> int:
    """Where the last whole event of `data` ends (after its empty line), 0 if none does."""
    end = max(data.rfind(b"\n\n"), data.rfind(b"\n\r\n"))
    if end < 0:
        return 0
    return end + (2 if data.startswith(b"\n\n", end) else 3)


class StreamGuard:
    """One SSE answer's bytes, released event by event once the adapter accepts them."""

    def __init__(self, *, stop_reasons: Collection[str] = COMPLETE_STOP_REASONS) -> None:
        self._decoder = StreamingDecoder()
        self._adapter = StreamAdapter(stop_reasons=stop_reasons, text=False)
        #: the bytes of an event not complete yet
        self._held = b""
        #: the checked bytes from `message_delta` on, released by `finish`
        self._withheld = bytearray()
        self._completing = False
        self._api_error = False
        #: nothing held or withheld, no error: a text delta may go on as soon as it is fed
        self._steady = True
        #: The violation found, raised by the driver after the bytes `feed` returned.
        self.failure: StreamProtocolError | None = None

    def feed(self, chunk: bytes) -> bytes:
        """The bytes of `chunk` (with those held before) that may go on to the client."""
        if self._steady and self._decoder.text_delta(chunk):
            # The commonest event, told at once while nothing waits: of a text delta the
            # adapter, building no text (`text=False`), reads only that it is one.
            return chunk if self._feed_adapter(TEXT_DELTA) else b""
        released = self._feed(chunk)
        self._steady = not (
            self._held or self._completing or self._api_error or self.failure is not None
        )
        return released

    def _feed(self, chunk: bytes) -> bytes:
        """`feed` for any chunk but a text delta told while nothing waits."""
        if self._api_error:
            return chunk
        if self.failure is not None:
            return b""
        # The usual chunk: one whole event, nothing held before it (the fewest steps).
        event = None if self._held else self._decoder.whole_event(chunk)
        if event is None:
            return self._feed_partial(chunk)
        completing = self._completing
        if not self._check(event):
            return b""
        if completing or self._completing or self._api_error:
            return self._release(chunk, completing)
        return chunk

    def _feed_partial(self, chunk: bytes) -> bytes:
        """`feed` for any other chunk: one that ends mid-event, completes one held before,
        or holds several events."""
        held = self._held + chunk
        end = len(held) if held.endswith(b"\n\n") else _last_event_end(held)
        if end == 0:
            self._held = held
            return b""
        ready, self._held = held[:end], held[end:]
        completing = self._completing
        if not self._accept(self._decoder.feed(ready)):
            return b""
        if completing or self._completing or self._api_error:
            return self._release(ready, completing)
        return ready

    def _release(self, ready: bytes, completing: bool) -> bytes:
        """What `feed` returns of checked bytes once the answer is completing or has failed
        with the API's own error (everything held then goes on)."""
        if self._api_error:
            held, self._held = self._held, b""
            return bytes(self._withheld) + ready + held
        self._withheld += ready
        return b""

    def finish(self) -> bytes:
        """The body ended: the rest, if it passes the end rules (else `failure` is set)."""
        if self._api_error or self.failure is not None:
            return b""
        rest, self._held = self._held, b""
        if not self._accept(self._decoder.feed(rest) + self._decoder.finish()):
            return b""
        if not self._api_error:
            try:
                self._adapter.finish()
            except StreamProtocolError as error:
                self.failure = error
                return b""
        return bytes(self._withheld) + rest

    def _accept(self, events: list[dict[str, Any]]) -> bool:
        """Feed the adapter; False (the error kept in `failure`) at a violation. An API
        `error` event ends the checking: it and what follows go on as they are."""
        for event in events:
            if not self._check(event):
                return False
            if self._api_error:
                break
        return True

    def _check(self, event: dict[str, Any]) -> bool:
        """`_accept` for one event."""
        kind = event["type"]
        if kind == "content_block_delta":  # almost every event: the fewest steps
            pass
        elif kind == "ping":
            return True
        elif kind == "error":
            self._api_error = True
            return True
        elif kind == "message_delta":
            self._completing = True
        return self._feed_adapter(EventView(event), at_end=kind == "message_stop")

    def _feed_adapter(self, event: EventView, *, at_end: bool = False) -> bool:
        """Feed the adapter one event (and apply the end rules `at_end`); False, the error
        kept in `failure`, at a violation."""
        try:
            self._adapter.feed(event)
            if at_end:
                self._adapter.check_end()
        except StreamProtocolError as error:
            self.failure = error
            self._steady = False
            return False
        return True


def checked_kind(content_type: str) -> str | None:
    """How the guard checks a successful Messages answer of this content type: "stream"
    (an SSE body, event by event), "message" (a `Message` JSON, whole); None: not at all."""
    if content_type.startswith("text/event-stream"):
        return "stream"
    if content_type.startswith("application/json"):
        return "message"
    return None


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


def check_message(
    message: dict[str, Any], *, stop_reasons: Collection[str] = COMPLETE_STOP_REASONS
) -> None:
    """Raise `StreamProtocolError` if a non-streaming `Message` breaks the rules a stream of
    it would: the same adapter over the events `events_from_message` gives.

    What is not an object where the API sends one (a block, `usage`) reads as an empty
    object, and `content` that is not a list as none, as the views read a part: the
    rules then judge what is left, and the client reports what it cannot read."""
    adapter = StreamAdapter(stop_reasons=stop_reasons)
    for event in events_from_message(_readable(message)):
        adapter.feed(EventView(event))
    adapter.finish()


def check_answer(body: bytes, *, stop_reasons: Collection[str] = COMPLETE_STOP_REASONS) -> None:
    """`check_message` for a non-streaming answer's body, read as a client reads it
    (`message_in`); nothing to check in a body that holds no `Message`."""
    message = message_in(body)
    if message is not None:
        check_message(message, stop_reasons=stop_reasons)


def message_in(body: bytes) -> dict[str, Any] | None:
    """The `Message` a client reads from a non-streaming answer's body; None when it holds
    none (not JSON, or JSON of another kind: the client reports what it cannot read).

    Read as the SDKs read it, leniently: a `NaN` that strict JSON refuses is a number to
    them, and it is the rules (`check_message`), not the reading, that judge it."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            return None
    return message if isinstance(message, dict) and message.get("type") == "message" else None


def _readable(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    usage = message.get("usage")
    return {
        **message,
        "content": [block if isinstance(block, dict) else {} for block in blocks],
        "usage": usage if isinstance(usage, dict) else {},
    }


def guarded(chunks: Iterable[bytes], guard: StreamGuard) -> Iterator[bytes]:
    """The sync driver: `chunks` as the guard releases them; raises at a violation."""
    for chunk in chunks:
        released = guard.feed(chunk)
        if released:
            yield released
        if guard.failure is not None:
            raise guard.failure
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
    released = guard.finish()
    if released:
        yield released
    if guard.failure is not None:
        raise guard.failure
