"""SSE read as the openai SDK reads it (`openai._streaming`), for both OpenAI dialects.

`OpenAIDecoder` is `harness._providers.sse.StreamingDecoder` (the same lines, limits and
`rest_at`) with the openai SDK's rules for what an event is, which are not the Anthropic
SDK's:

- the event's name decides nothing: every event a blank line ends is read (no `ping`
  skipped, no `error` name raised); its data is the event;
- data starting with `[DONE]` ends the stream: the SDK stops reading there (the event
  comes out as `DONE_EVENT`, the cassettes' spelling of it);
- any other data is read as JSON (leniently, as `json.loads`); an event the SDK would
  fail on (data that is not JSON, an event with a name and no data, or not a JSON object:
  no chunk or event of either dialect) raises `SSEFormatError`; an object whose `error`
  is set is the API's error (the SDK raises it; the adapters read it as one);
- an event named `thread.*` is read as an Assistants event, its data wrapped, and one
  no blank line ends never reaches the code: `HiddenEvent`, as the guard refuses one.

Not read as the SDK does: an `id:` field, after which the SDK dispatches an empty event
at every blank line (and fails on it); no OpenAI server sends one.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from harness._json import sdk_json
from harness._providers.sse import HiddenEvent, SSEFormatError, StreamingDecoder

__all__ = ["DONE_EVENT", "OpenAIDecoder", "is_done", "kind_of"]

#: What `OpenAIDecoder` gives for `data: [DONE]`: the line a cassette holds for it.
DONE_EVENT: Final[dict[str, Any]] = {"harness": "done"}


def is_done(event: dict[str, Any]) -> bool:
    """Whether a decoded event is `data: [DONE]`."""
    return event is DONE_EVENT


def kind_of(event: dict[str, Any]) -> str:
    """What an event is, as a message names it: its `type` (Responses), its `object`
    (Chat's chunks), `[DONE]`."""
    if is_done(event):
        return "[DONE]"
    kind = event.get("type") or event.get("object") or ("error" if "error" in event else "data")
    return str(kind)


class OpenAIDecoder(StreamingDecoder):
    """Events out of an OpenAI SSE body, read as the openai SDK reads them (see the module)."""

    def __init__(self, *, max_line: int | None = None) -> None:
        super().__init__(max_line=max_line, lenient=True)

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        if piece[:6] == b"data: ":  # a Chat chunk as the API sends it, one at a time
            event = self._whole_data(piece)
            if event is not None:
                self.rest_at = len(piece)
                self.ends = [self.rest_at]
                return [event]
        return super().feed(piece)

    def _whole_data(self, piece: bytes) -> dict[str, Any] | None:
        """The event of `piece` when nothing is held and it is one whole `data: <json>`
        line and its blank line, its JSON an object (what `feed` gives, in fewer steps);
        None for any other piece, which `feed` reads line by line."""
        if (
            self._line_bytes
            or self._data
            or self._name is not None
            or self._after_cr
            or piece[-2:] != b"\n\n"
            or piece.find(b"\n") != len(piece) - 2
            or piece.find(b"\r") >= 0
            or self._read_by_lines(piece)
        ):
            return None
        data = piece[6:-2]
        if data[:6] == b"[DONE]":
            self._count += 1
            return DONE_EVENT
        try:
            event = orjson.loads(data)  # which checks that the data is UTF-8, too
        except orjson.JSONDecodeError:
            return None
        if type(event) is not dict:
            return None
        self._count += 1
        return event

    def whole_event(self, piece: bytes) -> dict[str, Any] | None:
        if piece[7:14] == b"thread.":  # what the SDK reads otherwise: `feed` refuses it
            return None
        return super().whole_event(piece)

    def _dispatch(self) -> dict[str, Any] | None:
        name, self._name = self._name or None, None
        had_data = bool(self._data)
        data = self._joined_data()
        if not had_data and name is None:
            return None  # a blank line after nothing: the SDK dispatches nothing
        self._count += 1
        if bytes(data[:6]) == b"[DONE]":
            return DONE_EVENT
        event = self._object(data)
        if name is not None and name.startswith("thread."):
            why = "the SDK reads an event named thread.* as an Assistants event, its data wrapped"
            raise HiddenEvent(self._count, event, why, kind=kind_of(event))
        return event

    def _object(self, data: bytes | memoryview) -> dict[str, Any]:
        try:
            event = sdk_json(data)
        except ValueError as error:
            raise SSEFormatError(f"event {self._count} is not JSON: {error}") from None
        if not isinstance(event, dict):
            raise SSEFormatError(f"event {self._count} is not a JSON object")
        return event

    def finish(self) -> list[dict[str, Any]]:
        """The body ended: an event no blank line ended never reaches the code."""
        self._after_cr = False
        if self._line_bytes:
            line = bytes(self._line_bytes)
            self._line_bytes.clear()
            self._line(line)
        self._name = None
        data = self._joined_data()
        if data:
            event: dict[str, Any] | None
            if bytes(data[:6]) == b"[DONE]":
                event = DONE_EVENT
            else:
                try:
                    event = self._object(data)
                except SSEFormatError:
                    event = None
            if event is not None:
                why = "the body ends before the blank line that would end it"
                raise HiddenEvent(self._count + 1, event, why, kind=kind_of(event))
        return []
