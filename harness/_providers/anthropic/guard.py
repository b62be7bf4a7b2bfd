"""Messages under the guard: which answers, the reading it drives (`AnthropicReader`, the
default one), and a non-streaming `Message` checked whole.

`claims`: a `POST .../v1/messages` (under any base URL's path) is Messages'; the request
asks for a stream by its body's `"stream": true` (`answer_check`). `AnthropicReader`:
`StreamingDecoder` (the Anthropic SDK's rules, `harness._providers.sse`) and a
`StreamAdapter(text=False)` fed the events' dicts (read as their light views read them);
`message_delta` completes an answer. `check_message` applies the same rules to a
non-streaming `Message` JSON, as the events a stream of it carries
(`events_from_message`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, TypeGuard

from harness._exceptions import StreamProtocolError
from harness._json import MAX_LINE_BYTES
from harness._providers.answers import (
    API_ERROR,
    COMPLETING,
    GO,
    HARMLESS,
    AnswerCheck,
    asks_for_stream,
)
from harness._providers.anthropic.adapter import COMPLETE_STOP_REASONS, StreamAdapter
from harness._providers.anthropic.errors import PROVIDER
from harness._providers.anthropic.framing import ENDPOINT
from harness._providers.anthropic.message import events_from_message
from harness._providers.sse import StreamingDecoder

__all__ = [
    "TEXT_DELTA",
    "AnthropicReader",
    "answer_check",
    "check_message",
    "claims",
    "hosted_call",
    "is_message",
]

#: Each text delta `StreamingDecoder.text_delta` tells, as the adapter reads it when it
#: builds no `TextEvent`: a delta of type `text_delta`, nothing more read.
TEXT_DELTA: Final = {"type": "content_block_delta", "delta": {"type": "text_delta"}}


class AnthropicReader:
    """A Messages stream's reading: `StreamingDecoder` (the Anthropic SDK's rules) and a
    `StreamAdapter(text=False)` fed the events' dicts; `message_delta` completes."""

    completing = "message_delta"
    rewritten = False

    def __init__(
        self,
        *,
        stop_reasons: Collection[str] = COMPLETE_STOP_REASONS,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self.decoder = StreamingDecoder(max_line=max_line, lenient=True)
        self._adapter = StreamAdapter(stop_reasons=stop_reasons, text=False)

    def text_delta(self, chunk: bytes) -> bool:
        if self.decoder.text_delta(chunk):
            # The commonest event, told at once: of a text delta the adapter, building no
            # text (`text=False`), reads only that it is one.
            self._adapter.feed(TEXT_DELTA)
            return True
        return False

    def read(self, event: dict[str, Any]) -> int:
        kind = event["type"]
        if kind == "content_block_delta":  # almost every event: the fewest steps
            self._adapter.feed(event)
            return GO
        if kind == "ping":
            return HARMLESS
        # Vertex's `vertex_event` goes on to the adapter, which passes it over: the SDK
        # hands it on, so it keeps its place among the withheld events (never HARMLESS,
        # which would send it ahead of a held `message_delta`).
        if kind == "error":
            return API_ERROR
        self._adapter.feed(event)
        if kind == "message_stop":
            self._adapter.check_end()
        return COMPLETING if kind == "message_delta" else GO

    def check_end(self) -> None:
        self._adapter.check_end()

    def finish(self) -> None:
        self._adapter.finish()

    def after_end(self, event: dict[str, Any] | None) -> StreamProtocolError:
        kind = "message_delta" if event is None else str(event["type"])
        return StreamProtocolError("event_after_message_stop", event_type=kind)

    def encode(self, events: list[dict[str, Any]]) -> bytes:
        raise NotImplementedError("the Anthropic reading rewrites no event")


def claims(method: str, path: str) -> bool:
    """Whether a request is a Messages call: `POST .../v1/messages`, any base URL's path."""
    return method.upper() == "POST" and path.endswith(ENDPOINT)


def hosted_call(request: object) -> bool:
    """Whether a request at a host's path is a Messages call. Other models' calls share
    those paths (Bedrock's `/model/{id}/invoke-with-response-stream` serves Llama, Nova
    and Mistral, Vertex's `:streamRawPredict` Mistral and Llama), and neither the path nor
    the model id always tells (an inference profile's ARN names no model): the body does.
    A Messages call there names its `anthropic_version`, as `AnthropicBedrock` and
    `AnthropicVertex` always send it and both hosts require of a Claude request."""
    return isinstance(request, dict) and "anthropic_version" in request


def answer_check(
    method: str,
    path: str,
    params: Mapping[str, str],
    content: bytes,
    allowed: Collection[str],
    profile: str | None,
) -> AnswerCheck | None:
    """How the answer to a Messages call is checked (None for another request): a stream
    if its body asks for one, else a `Message`; `allowed` widens the stop reasons."""
    if not claims(method, path):
        return None
    stop_reasons = COMPLETE_STOP_REASONS | frozenset(allowed)

    def check_value(value: object) -> None:
        if is_message(value):
            check_message(value, stop_reasons=stop_reasons)

    return AnswerCheck(
        PROVIDER,
        asks_for_stream(content),
        lambda: AnthropicReader(stop_reasons=stop_reasons),
        check_value,
        answer="the Message",
        needs_json_request=True,
    )


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
        adapter.feed(event)
    adapter.finish()


def is_message(value: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(value, dict) and value.get("type") == "message"


def _readable(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    usage = message.get("usage")
    return {
        **message,
        "content": [block if isinstance(block, dict) else {} for block in blocks],
        "usage": usage if isinstance(usage, dict) else {},
    }
