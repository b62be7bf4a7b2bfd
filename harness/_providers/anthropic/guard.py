"""The Anthropic Messages reading the guard drives (`AnthropicReader`), the default one.

`StreamingDecoder` (the Anthropic SDK's rules, `harness._providers.sse`) and a
`StreamAdapter(text=False)` fed the light event views; `message_delta` completes an
answer. It moves to Anthropic's own subpackage with the provider registry.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from harness._exceptions import StreamProtocolError
from harness._json import MAX_LINE_BYTES
from harness._providers.answers import API_ERROR, COMPLETING, GO, HARMLESS
from harness._providers.anthropic.adapter import COMPLETE_STOP_REASONS, StreamAdapter
from harness._providers.sse import StreamingDecoder
from harness._views import EventView

__all__ = ["TEXT_DELTA", "AnthropicReader"]

#: Each text delta `StreamingDecoder.text_delta` tells, as the adapter reads it when it
#: builds no `TextEvent`: a delta of type `text_delta`, nothing more read.
TEXT_DELTA: Final = EventView({"type": "content_block_delta", "delta": {"type": "text_delta"}})


class AnthropicReader:
    """A Messages stream's reading: `StreamingDecoder` (the Anthropic SDK's rules) and a
    `StreamAdapter(text=False)` fed the light event views; `message_delta` completes."""

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
            self._adapter.feed(EventView(event))
            return GO
        if kind == "ping":
            return HARMLESS
        if kind == "error":
            return API_ERROR
        self._adapter.feed(EventView(event))
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
