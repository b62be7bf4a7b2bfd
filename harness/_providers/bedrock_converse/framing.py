"""How a ConverseStream cassette goes over the wire, streamed or not.

Streamed (`POST /model/{modelId}/converse-stream`), each line is one AWS event-stream
frame (`harness._providers.eventstream`), `application/vnd.amazon.eventstream`: an
event's frame has `:message-type` `event`, `:event-type` its name and `:content-type`
`application/json`, its payload the event's object with Bedrock's `p` padding field
added (fixed here, so the bytes are stable; readers pass over it); an exception line's
frame has `:message-type` `exception` and `:exception-type` its name, its payload
`{"message": ...}`. This is what botocore's event-stream parser reads for the
`bedrock-runtime` service model's `ConverseStreamOutput`.

Not streamed (`POST /model/{modelId}/converse`), the events fold into the `Converse`
answer (`converse_from_events`): `output.message` with its content blocks in index
order (text joined, a tool's input parsed, reasoning with its signature), `stopReason`,
`usage` and `metrics` from `metadata`; a stream with no `messageStart` or cut before its
`messageStop` holds no answer, and the request is refused (`ReplayError`, the 404 that
names the cassette). An exception line answers as the HTTP error it
stands for (raised as `APIErrorEvent`: its status, its body as Bedrock's JSON errors
are, `message` and `__type`). The model is in the path (`PATHS`), so the request's body
is kept with it put back (`harness._providers.wire.ModelPaths`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

import orjson

from harness._exceptions import APIErrorEvent
from harness._json import MAX_LINE_BYTES, crowded, too_many_values
from harness._providers.bedrock_converse.adapter import EXCEPTIONS, event_name
from harness._providers.eventstream import Frame, FrameDecoder, FrameError, encode_frame
from harness._providers.frame_rows import Framed
from harness._providers.wire import Framing, ModelPaths
from harness._redact import excerpt

__all__ = [
    "CONTENT_TYPE",
    "FRAMED",
    "FRAMING",
    "MATCH_ON",
    "PATHS",
    "EventDecoder",
    "converse_from_events",
    "encode_event",
    "error_answer",
    "error_body",
]

#: A streamed answer's content type.
CONTENT_TYPE: Final = "application/vnd.amazon.eventstream"
#: The two paths, the model in each (`modelId`: one segment of a `request_path`, an ARN's
#: `/` kept `%2F` there, as boto3 sends it).
PATHS: Final = ModelPaths(
    re.compile(r"/model/(?P<model>[^/]+)/converse-stream"),
    re.compile(r"/model/(?P<model>[^/]+)/converse"),
    "/model/{model}/converse-stream",
    "/model/{model}/converse",
)
#: The request fields a replayed request is compared on by default.
MATCH_ON: Final = ("model", "messages", "toolConfig")
#: Bedrock's padding: a field the readers pass over (fixed here, so bytes are stable).
_PADDING: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"


def _headers(name: str, kind: str) -> dict[str, str]:
    return {
        ":event-type" if kind == "event" else ":exception-type": name,
        ":content-type": "application/json",
        ":message-type": kind,
    }


def encode_event(line: dict[str, Any]) -> bytes:
    """The frame Bedrock sends a line's event (or exception) in."""
    name = event_name(line)
    value = line.get(name)
    payload = dict(value) if isinstance(value, dict) else {}
    if name in EXCEPTIONS:
        return encode_frame(_headers(name, "exception"), orjson.dumps(payload))
    payload.setdefault("p", _PADDING[: len(name) * 2 % len(_PADDING)])
    return encode_frame(_headers(name, "event"), orjson.dumps(payload))


class EventDecoder:
    """A streamed body's lines out of its frames as they arrive, refusing what botocore
    refuses (`FrameError`: `bad_frame`, `truncated_frame` at `finish`) and a frame that
    is neither an event nor an exception, or whose payload is not a JSON object
    (`bad_frame`); an event's `p` padding passed over. Bounded whatever the peer sends:
    a frame over `MAX_LINE_BYTES` is refused at its prelude, a payload that may hold more
    than `MAX_VALUES` values before it is parsed (both `bad_frame`)."""

    def __init__(self) -> None:
        self._frames = FrameDecoder(max_frame=MAX_LINE_BYTES)
        self._count = 0

    @property
    def rest_at(self) -> int:
        """Where in the last piece fed its last whole frame ends (-1: none ended in it),
        as the guard asks of a body's decoder (`answers.BodyDecoder`)."""
        return self._frames.rest_at

    @property
    def ends(self) -> list[int]:
        """Where in the last piece fed each line's frame ends."""
        return self._frames.ends

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        """The lines `piece` completes; `FrameError` at the first bad frame, with the
        lines before it (`before`)."""
        lines: list[dict[str, Any]] = []
        try:
            for frame in self._frames.frames(piece):
                lines.append(self._line(frame))
        except FrameError as error:
            error.before = lines
            raise
        return lines

    def finish(self) -> None:
        self._frames.finish()

    def _line(self, frame: Frame) -> dict[str, Any]:
        self._count += 1
        kind, name = frame.message_type, frame.event_type
        if kind not in ("event", "exception") or not isinstance(name, str):
            raise FrameError(
                "bad_frame",
                f"frame {self._count}: :message-type {excerpt(repr(kind))} is no event or "
                "exception",
            )
        if too_many_values(frame.payload):
            raise FrameError("bad_frame", f"frame {self._count}: {crowded('its payload')}")
        try:
            payload = orjson.loads(frame.payload) if frame.payload else {}
        except orjson.JSONDecodeError:
            payload = None
        if type(payload) is not dict:
            raise FrameError("bad_frame", f"frame {self._count}: its payload is no JSON object")
        if kind == "event":
            payload.pop("p", None)
        return {name: payload}


#: Its frames: the binary fault rows break them, import reads a body with them.
FRAMED: Final = Framed(encode_event, EventDecoder)


def _exception_type(name: str) -> str:
    """The error code an HTTP answer names an exception by (`ThrottlingException`)."""
    return name[:1].upper() + name[1:]


def error_body(name: str, message: str) -> dict[str, Any]:
    """Bedrock's JSON error: its `message`, and its type (`__type`), which botocore reads
    as the error's code."""
    return {"message": message, "__type": _exception_type(name)}


def error_answer(status: int, message: str) -> dict[str, Any]:
    """The error a server of ours refuses a Bedrock request with, in Bedrock's shape."""
    if status >= 500:
        name = "internalServerException"
    elif status == 404:
        name = "resourceNotFoundException"
    elif status == 429:
        name = "throttlingException"
    else:
        name = "validationException"
    return error_body(name, message)


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _block(kind: str, pieces: list[Any], start: dict[str, Any]) -> dict[str, Any]:
    if kind == "toolUse":
        use = _object(start.get("toolUse"))
        joined = "".join(piece for piece in pieces if isinstance(piece, str))
        try:
            value = orjson.loads(joined) if joined.strip() else {}
        except orjson.JSONDecodeError:
            value = joined
        return {"toolUse": {**use, "input": value}}
    if kind == "reasoningContent":
        text = "".join(_object(piece).get("text") or "" for piece in pieces)
        reasoning: dict[str, Any] = {"text": text}
        signature = next(
            (_object(p)["signature"] for p in pieces if "signature" in _object(p)), None
        )
        if signature is not None:
            reasoning["signature"] = signature
        return {"reasoningContent": {"reasoningText": reasoning}}
    if kind == "text":
        return {"text": "".join(piece for piece in pieces if isinstance(piece, str))}
    return {kind: start.get(kind, {})}


def converse_from_events(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The `Converse` answer a non-streaming request gets for these events; an exception
    line raises `APIErrorEvent`, no messageStart or no messageStop `ValueError` (a
    stream cut before its stop holds no answer: a `Converse` answer always has its
    `stopReason`, and one without it was read by boto3 as an answer lacking the key)."""
    role: Any = None
    stopped = False
    blocks: dict[Any, tuple[str, list[Any], dict[str, Any]]] = {}
    stop: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for line in events:
        name = event_name(line)
        event = _object(line.get(name))
        if name in EXCEPTIONS:
            message = event.get("message")
            body = error_body(name, message if isinstance(message, str) else "")
            raise APIErrorEvent(body, EXCEPTIONS[name])
        index = event.get("contentBlockIndex")
        if name == "messageStart":
            role = event.get("role", "assistant")
        elif name == "contentBlockStart":
            start = _object(event.get("start"))
            blocks.setdefault(index, (next(iter(start), "text"), [], start))
        elif name == "contentBlockDelta":
            delta = _object(event.get("delta"))
            kind = next(iter(delta), "text")
            block = blocks.setdefault(index, (kind, [], {}))
            value = delta.get(kind)
            block[1].append(_object(value).get("input") if kind == "toolUse" else value)
        elif name == "messageStop":
            stop, stopped = event, True
        elif name == "metadata":
            metadata = event
    if role is None:
        raise ValueError("the cassette holds no messageStart to fold")
    if not stopped:
        raise ValueError(
            "its stream ends before messageStop, so it holds no Converse answer "
            "(one always has a stopReason)"
        )
    content = [_block(*blocks[index]) for index in sorted(blocks, key=_order)]
    answer: dict[str, Any] = {
        "output": {"message": {"role": role, "content": content}},
        "stopReason": stop.get("stopReason"),
        "usage": metadata.get("usage", {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}),
        "metrics": {"latencyMs": _object(metadata.get("metrics")).get("latencyMs", 0)},
    }
    if "additionalModelResponseFields" in stop:
        answer["additionalModelResponseFields"] = stop["additionalModelResponseFields"]
    return answer


def _order(index: object) -> tuple[int, str]:
    return (index, "") if isinstance(index, int) else (1 << 62, repr(index))


#: The ConverseStream wire, as replay reads it (`provider("bedrock-converse").framing`).
FRAMING: Final = Framing(
    encode_event,
    converse_from_events,
    MATCH_ON,
    endpoints=(PATHS.stream_route, PATHS.plain_route),
    error_answer=error_answer,
    content_type=CONTENT_TYPE,
    paths=PATHS,
    frames=FRAMED,
)
