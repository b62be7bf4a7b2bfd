"""Amazon Bedrock's `InvokeModelWithResponseStream`: a dialect's events in AWS frames.

Each event the model sends travels as one frame of `:message-type` `event` and
`:event-type` `chunk`, whose JSON payload holds the event's JSON, base64-encoded, under
`bytes` (Bedrock pads it with a `p` field of random length, which readers pass over):

    {"bytes": "eyJ0eXBlIjoibWVzc2FnZV9zdGFydCIsLi4ufQ==", "p": "abcdefghij"}

A failure after the answer began is a frame of `:message-type` `exception` whose
`:exception-type` names it (`throttlingException`, `internalServerException`,
`modelStreamErrorException`, `validationException`, `serviceUnavailableException`) and
whose payload is `{"message": ...}`. `anthropic.AnthropicBedrock` raises it as an
`APIStatusError` whose error type is that name; `EventDecoder` reads it as the error
event the SDK makes of it, `{"type": "error", "error": {"type": NAME, "message": ...}}`.

`encode_event` writes one event's frame (an error event too: as a chunk, the way the
dialect sends it, so a cassette reads the same on every host; `encode_exception` writes
Bedrock's own). `EventDecoder` reads frames back into the events the SDK hands the code,
refusing what botocore refuses (`FrameError`: `bad_frame`, `truncated_frame`) and a
frame that is neither an event chunk nor an exception (`bad_frame`); bounded whatever the
peer sends, it refuses a frame over 8 MiB (`MAX_LINE_BYTES`, what an SSE event may hold)
at its prelude, and a payload or an event that may hold more than `MAX_VALUES` JSON
values before parsing or decoding it (each a `bad_frame`). Each event is then
one JSON object with a string `type`, as on SSE (`harness._providers.sse`): a chunk
whose object has none is skipped, as `AnthropicBedrock` skips it (as the SDK skips an
SSE event with no name); one the SDK hands on all the same, as a legacy `completion`
(JSON that is no object, or an object with a `completion`), is a `bad_frame`, as a
named SSE event without a type is an `SSEFormatError`.

`FramedReader` is the guard's reading of a Bedrock stream (`harness.strict`,
`StrictTransport`): the dialect's own `AnswerReader` judging each event, fed by an
`EventDecoder` in place of its SSE decoder. The guard then releases the frames that
came, byte for byte, as the reader accepts their events, and raises at the first
violation (or at a bad frame, a `FrameError`) as it does on SSE.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Final

import orjson

from harness._exceptions import StreamProtocolError
from harness._json import MAX_LINE_BYTES, crowded, too_many_values
from harness._providers.answers import AnswerReader
from harness._providers.eventstream import Frame, FrameDecoder, FrameError, encode_frame
from harness._redact import excerpt

__all__ = [
    "CONTENT_TYPE",
    "ERROR_AREA",
    "PLAIN_PATH",
    "STREAM_PATH",
    "EventDecoder",
    "FramedReader",
    "encode_event",
    "encode_exception",
    "encode_frame",
    "error_answer",
]

#: The answer's content type.
CONTENT_TYPE: Final = "application/vnd.amazon.eventstream"
#: The paths a request names its model in (`/model/{id}/...`), streamed and not: one
#: segment of a `request_path`, an ARN's `/` kept `%2F` there, as the SDKs send it.
STREAM_PATH: Final = re.compile(r"/model/(?P<model>[^/]+)/invoke-with-response-stream")
PLAIN_PATH: Final = re.compile(r"/model/(?P<model>[^/]+)/invoke")
#: Every call of Bedrock's runtime names its model so (`/model/{id}/invoke`, `/converse`,
#: `/count-tokens`, ...): the paths whose error answers a Bedrock client reads.
ERROR_AREA: Final = re.compile(r"/model/[^/]+/[^/]+")
_CHUNK: Final = {
    ":event-type": "chunk",
    ":content-type": "application/json",
    ":message-type": "event",
}
#: Bedrock's padding: a field the readers pass over (fixed here, so bytes are stable).
_PADDING: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDE"


def encode_event(event: dict[str, Any]) -> bytes:
    """The frame Bedrock sends `event` in."""
    data = base64.b64encode(orjson.dumps(event)).decode()
    pad = _PADDING[: len(data) % len(_PADDING)]
    return encode_frame(_CHUNK, orjson.dumps({"bytes": data, "p": pad}))


def error_answer(status: int, message: str) -> dict[str, Any]:
    """A refusal of ours at a Bedrock path (`ERROR_AREA`), in Bedrock's JSON error shape:
    boto3 reads its `message` and takes `__type` as the error's code; the Anthropic SDK's
    Bedrock client shows the body whole, as it shows Bedrock's own errors. The direct
    API's shape there left boto3 an empty message ("An error occurred (404) ...: ")."""
    if status == 404:
        name = "ResourceNotFoundException"
    elif status == 429:
        name = "ThrottlingException"
    elif status >= 500:
        name = "InternalServerException"
    else:
        name = "ValidationException"
    return {"message": message, "__type": name}


def encode_exception(name: str, message: str) -> bytes:
    """The frame of Bedrock's exception `name` (`throttlingException`, ...)."""
    headers = {
        ":exception-type": name,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_frame(headers, orjson.dumps({"message": message}))


class EventDecoder:
    """The dialect's events out of a Bedrock body fed in pieces (see the module)."""

    def __init__(self) -> None:
        self._frames = FrameDecoder(max_frame=MAX_LINE_BYTES)
        self._count = 0
        #: where in the last piece fed the frame of each event it gave ends
        self.ends: list[int] = []

    @property
    def rest_at(self) -> int:
        """Where in the last piece fed its last whole frame ends (-1: none ended in it)."""
        return self._frames.rest_at

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        """The events `piece` completes; `FrameError` at the first bad frame, with the
        events before it (`before`)."""
        events: list[dict[str, Any]] = []
        ends: list[int] = []
        self.ends = ends
        try:
            for frame in self._frames.frames(piece):
                event = self._event(frame)
                if event is not None:
                    events.append(event)
                    ends.append(self._frames.ends[-1])
        except FrameError as error:
            error.before = events
            raise
        return events

    def finish(self) -> None:
        self._frames.finish()

    def _event(self, frame: Frame) -> dict[str, Any] | None:
        """The event `frame` carries; None for a chunk the SDK skips (see the module)."""
        self._count += 1
        kind, name = frame.message_type, frame.event_type
        if too_many_values(frame.payload):
            raise self._crowded("payload")
        if kind == "exception":
            message = _object(frame.payload).get("message")
            text = message if isinstance(message, str) else ""
            return {"type": "error", "error": {"type": str(name), "message": text}}
        if kind != "event" or name != "chunk":
            raise FrameError(
                "bad_frame",
                f"frame {self._count}: :message-type {excerpt(repr(kind))} :event-type "
                f"{excerpt(repr(name))} is no event chunk Bedrock sends",
            )
        data = _object(frame.payload).get("bytes")
        unread = FrameError(
            "bad_frame", f"frame {self._count}: its bytes are not a base64 JSON event"
        )
        try:
            decoded = base64.b64decode(data, validate=True)  # type: ignore[arg-type]
        except (TypeError, ValueError, binascii.Error):
            raise unread from None
        if too_many_values(decoded):
            raise self._crowded("event")
        try:
            event = orjson.loads(decoded)
        except orjson.JSONDecodeError:
            raise unread from None
        if type(event) is not dict:
            raise FrameError("bad_frame", f"frame {self._count}: its event is not a JSON object")
        if type(event.get("type")) is str:
            return event
        if "completion" not in event:
            return None  # no event the SDK names: it skips the chunk
        raise FrameError(
            "bad_frame",
            f"frame {self._count}: its event is not a JSON object with a type (the SDK hands "
            f"it on as a `completion`)",
        )

    def _crowded(self, what: str) -> FrameError:
        """The refusal of a frame whose `what` may hold too many values to be parsed."""
        return FrameError("bad_frame", f"frame {self._count}: {crowded(f'its {what}')}")


def _object(payload: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return {}
    return value if type(value) is dict else {}


class FramedReader:
    """The dialect's `AnswerReader` over Bedrock's frames (see the module)."""

    def __init__(self, reader: AnswerReader) -> None:
        self._reader = reader
        self.decoder = EventDecoder()
        self.completing = reader.completing

    @property
    def rewritten(self) -> bool:
        return self._reader.rewritten

    @rewritten.setter
    def rewritten(self, value: bool) -> None:
        self._reader.rewritten = value

    def text_delta(self, chunk: bytes) -> bool:
        return False  # a frame is read whole: no event is told from its bytes

    def read(self, event: dict[str, Any]) -> int:
        return self._reader.read(event)

    def check_end(self) -> None:
        self._reader.check_end()

    def finish(self) -> None:
        self._reader.finish()

    def after_end(self, event: dict[str, Any] | None) -> StreamProtocolError:
        return self._reader.after_end(event)

    def encode(self, events: list[dict[str, Any]]) -> bytes:
        return b"".join(encode_event(event) for event in events)
