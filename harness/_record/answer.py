"""Answer to lines: how one live HTTP answer is kept as a cassette's lines, for any provider.

The recording client (the cassette clients' record modes, `harness._record.live`),
`harness record` and the recording proxy (`harness proxy`) keep every answer through
this module: `lines_of_answer` for an answer read whole, `StreamLines` for a stream read
as it arrives. Its header is built by the one `make_header` (`harness._cassette.codec`),
as every cassette's is. What a provider's body means is its own `interop` module's (a
`harness._providers.recorded.Recorded`, the same reading `harness import` makes): an
OpenAI stream's `data` objects are its lines, Chat's `[DONE]` the `done` directive; a
plain answer (a `chat.completion`, a `response`) the lines a stream of it carries. A
`dialect` of None is Anthropic's Messages API, read as it always was.

What a recording keeps of each line is `harness._redact.kept_line`'s: credential-like
fields removed and the credentials the request carried masked wherever they appear, so
an upstream that repeats the key it was sent in an event or an error writes no key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from harness._cassette.codec import EVENT_SCHEMAS, _schema_reason
from harness._directives import DONE, HTTP_ERROR
from harness._exceptions import ANTHROPIC
from harness._hosts import Host, framed_as
from harness._json import MAX_LINE_BYTES, crowded, too_many_values
from harness._providers import providers
from harness._providers.anthropic.message import events_from_message
from harness._providers.recorded import Recorded
from harness._providers.sse import FieldsDecoder, SSEFormatError, StreamingDecoder
from harness._redact import mask_text

__all__ = ["RETRY_HEADERS", "StreamLines", "lines_of_answer", "recorded_dialect"]

#: Headers of an HTTP error answer a cassette keeps: the ones a client's retries read, and
#: the one an AWS SDK reads the error's code from (`x-amzn-errortype`).
RETRY_HEADERS: Final = ("retry-after", "retry-after-ms", "x-should-retry", "x-amzn-errortype")


def recorded_dialect(method: str, path: str) -> Recorded | None:
    """The dialect, other than the default provider's (read as it always was), whose call
    a `POST` to `path` is, by how the path ends (its `interop`'s `is_call`:
    `.../chat/completions`, `.../responses`, under any prefix: `/v1`, none, Azure's
    deployments); None for any other request (the resume `GET` included)."""
    if method.upper() != "POST":
        return None
    for found in providers():
        if found.name == ANTHROPIC or not found.has("interop"):
            continue
        dialect = found.recorded
        if dialect.is_call("POST", path):
            return dialect
    return None


def lines_of_answer(
    status: int,
    headers: Mapping[str, str],
    body: bytes | bytearray,
    dialect: Recorded | None = None,
    secrets: tuple[str, ...] = (),
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The cassette lines one whole HTTP answer becomes, and the header fields it adds.

    An SSE stream keeps its events; a non-streaming answer becomes the events a stream
    of it carries (`synthesized_from: "message"` in the header says so); an HTTP error
    becomes an `http_error` line with its status, its retry headers and the API's error
    JSON. Anything else raises `ValueError` saying what it is, `secrets` masked in it.
    A stream is read within the bounds of one read as it arrives (`MAX_LINE_BYTES` a line
    or an event, `StreamLines`). The lines are as read: `kept_line` is what a recording
    keeps of each.
    """
    kept = {str(name).lower(): str(value) for name, value in headers.items()}
    if status >= 400:
        error = _json_object(body, f"the {status} answer")
        retry = {name: kept[name] for name in RETRY_HEADERS if name in kept}
        line = {"harness": HTTP_ERROR, "status": status, "headers": retry}
        return [{**line, "body": error}], {}
    what = "a Messages answer" if dialect is None else f"a {dialect.call} answer"
    if status != 200:
        raise ValueError(f"status {status} is not {what}")
    framed = framed_as(kept.get("content-type", ""))
    if dialect is not None and dialect.frames is not None:  # its own frames, not a host's
        framed = None
        if kept.get("content-type", "").partition(";")[0].strip() == dialect.content_type:
            reader = StreamLines(dialect, max_line=MAX_LINE_BYTES, secrets=secrets)
            events = [*reader.feed(bytes(body)), *reader.finish()]
            if reader.events == 0:
                raise ValueError("the stream held no event")
            return events, {}
    own = (
        dialect is not None
        and dialect.stream_reader is not None
        and bytes(body).lstrip()[:1] == b"["
    )
    if own or framed is not None or "text/event-stream" in kept.get("content-type", ""):
        reader = StreamLines(dialect, max_line=MAX_LINE_BYTES, secrets=secrets, host=framed)
        events = [*reader.feed(bytes(body)), *reader.finish()]
        if reader.events == 0:
            raise ValueError("the stream held no event")
        return events, {}
    answer = _json_object(body, "the answer")
    if dialect is not None:
        lines = _checked(dialect, dialect.answer_lines(answer), secrets=secrets)
        return lines, {"synthesized_from": "message"}
    if answer.get("type") != "message":
        raise ValueError("the answer is neither a stream nor a Message")
    return events_from_message(answer), {"synthesized_from": "message"}


class StreamLines:
    """An SSE answer fed in pieces as it arrives, out as the cassette's lines: each event,
    and for Chat the `done` directive where the body sent `[DONE]`, as import reads a
    whole body. `SSEFormatError` (or `ValueError`) says why a body cannot be a
    cassette, `secrets` masked in it; a line or event past `max_line` bytes is refused
    as soon as it is held. At a host with a framing of its own (`host`: Bedrock's
    frames) its `decoder` reads the events instead, as the guard reads them (a frame it
    refuses is a `FrameError`, a `ValueError`); a dialect whose own wire is frames
    (`Recorded.frames`: ConverseStream's) reads them with its own decoder, wherever
    it is served, and one with a reader of its own (`Recorded.stream_reader`: Gemini's,
    SSE or the JSON array) reads its body with that."""

    def __init__(
        self,
        dialect: Recorded | None = None,
        *,
        max_line: int | None = None,
        secrets: tuple[str, ...] = (),
        host: Host | None = None,
    ) -> None:
        self._dialect = dialect
        self._secrets = secrets
        #: the events read so far (directives aside)
        self.events = 0
        self._decoder: Any
        frames = dialect.frames if dialect is not None else None
        if frames is None and host is not None:
            frames = host.frames
        self._own = dialect is not None and dialect.stream_reader is not None
        if frames is not None:
            self._decoder = frames.decoder()
            self._dialect = None  # the frames' decoder gives the events themselves
        elif dialect is not None and dialect.stream_reader is not None:
            self._decoder = dialect.stream_reader(max_line)  # its lines, in any framing
        elif dialect is None or dialect.field_lines is None:
            self._decoder = StreamingDecoder(max_line=max_line)
        else:
            self._decoder = FieldsDecoder(max_line=max_line)

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        return self._lines(self._decoder.feed(piece))

    def finish(self) -> list[dict[str, Any]]:
        return self._lines(self._decoder.finish() or [])

    def _lines(self, read: list[dict[str, Any]]) -> list[dict[str, Any]]:
        dialect = self._dialect
        if dialect is None or (dialect.field_lines is None and not self._own):
            self.events += len(read)
            return read
        if not read:
            return []
        if self._own:
            lines: list[Any] = read
        else:
            assert dialect.field_lines is not None
            lines = dialect.field_lines([(event["name"], event["data"]) for event in read])
        checked = _checked(dialect, lines, self.events, self._secrets)
        self.events += sum(1 for line in checked if "harness" not in line)
        return checked


def _checked(
    dialect: Recorded, lines: list[Any], before: int = 0, secrets: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """`lines` as a cassette of `dialect` holds them (its sentinel the `done` directive);
    `SSEFormatError` at an event its schema refuses (one with a `harness` key, say), its
    message (which may quote the event) with `secrets` masked."""
    definition = EVENT_SCHEMAS[dialect.provider]
    kept: list[dict[str, Any]] = []
    number = before
    for line in lines:
        if isinstance(line, bytes):
            kept.append({"harness": DONE})
            continue
        number += 1
        reason = _schema_reason("event", line, definition)  # a `harness` key is refused
        if reason is not None:
            raise SSEFormatError(mask_text(f"event {number}: {reason}", secrets))
        kept.append(line)
    return kept


def _json_object(body: bytes | bytearray, what: str) -> dict[str, Any]:
    """`body` read as the SDK reads it, unless it may hold more than `MAX_VALUES` values:
    counted first, a body of millions of `{}` is never parsed."""
    if too_many_values(body):
        raise ValueError(crowded(what))
    try:
        value = json.loads(body)
    except ValueError:
        raise ValueError(f"{what} is not JSON") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not a JSON object")
    return value
