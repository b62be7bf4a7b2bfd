"""`StreamBuilder`: a raw Anthropic Messages stream in a few lines.

    stream = (
        StreamBuilder()
        .text(0, "Let me look.")
        .tool(1, "read", {"path": "a.md"}, pieces=3)
        .stop("tool_use")
    )
    stream.events()                      # raw event dicts, as the API's SSE data carries them
    stream.write("cassettes/x.jsonl", "what it shows")

High-level calls (`text`, `thinking`, `tool`, `stop`) emit a whole block or ending, the
way the API does (a tool block opens with an empty `partial_json`); low-level calls
(`block_start`, `tool_start`, `json_delta`, `text_delta`, `block_stop`, `message_delta`,
`message_stop`, `ping`, `error`, `raw`) place single events, for interleaving and for
deliberately broken streams. `message_start` is added first unless `start=False`.
`interleave` merges blocks built apart, event by event, in a chosen order:

    a = StreamBuilder(start=False).tool(1, "read", {"path": "a.md"})
    b = StreamBuilder(start=False).tool(3, "read", {"path": "b.md"})
    StreamBuilder().interleave([a, b], order=[0, 0, 1, 1, 1, 0, 0, 1]).stop("tool_use")
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Self

from harness.builder.base import Builder, split_json

__all__ = ["StreamBuilder"]

DEFAULT_MODEL = "claude-sonnet-4-5-20250929"


class StreamBuilder(Builder):
    """Accumulates raw stream events; every method returns the builder for chaining."""

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        message_id: str = "msg_01HarnessSyntheticStream",
        input_tokens: int = 25,
        start: bool = True,
    ) -> None:
        super().__init__(model=model)
        self._output_tokens = 1
        self._tools_opened = 0
        if start:
            self.message_start(message_id=message_id, input_tokens=input_tokens)

    # -- low level: one event each ------------------------------------------------------

    def message_start(
        self, *, message_id: str = "msg_01HarnessSyntheticStream", input_tokens: int = 25
    ) -> Self:
        message: dict[str, Any] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        }
        return self.raw({"type": "message_start", "message": message})

    def ping(self) -> Self:
        return self.raw({"type": "ping"})

    def block_start(self, index: int, block: dict[str, Any]) -> Self:
        return self.raw({"type": "content_block_start", "index": index, "content_block": block})

    def tool_start(
        self,
        index: int,
        name: str,
        *,
        id: str | None = None,
        input: object = None,
        kind: str = "tool_use",
    ) -> Self:
        """Open a tool block; `input` is the start's `input` (the API sends `{}`)."""
        self._tools_opened += 1
        block = {
            "type": kind,
            "id": id or f"toolu_01HarnessSynthetic{self._tools_opened:02d}x{index}",
            "name": name,
            "input": {} if input is None else input,
        }
        return self.block_start(index, block)

    def delta(self, index: int, delta: dict[str, Any]) -> Self:
        self._output_tokens += 1
        return self.raw({"type": "content_block_delta", "index": index, "delta": delta})

    def text_delta(self, index: int, text: str) -> Self:
        return self.delta(index, {"type": "text_delta", "text": text})

    def json_delta(self, index: int, partial_json: str) -> Self:
        return self.delta(index, {"type": "input_json_delta", "partial_json": partial_json})

    def block_stop(self, index: int) -> Self:
        return self.raw({"type": "content_block_stop", "index": index})

    def message_delta(self, stop_reason: str | None) -> Self:
        return self.raw(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": self._output_tokens},
            }
        )

    def message_stop(self) -> Self:
        return self.raw({"type": "message_stop"})

    def error(self, error_type: str = "overloaded_error", message: str = "Overloaded") -> Self:
        """A mid-stream API `error` event (the SDK raises `APIStatusError` for it)."""
        return self.raw({"type": "error", "error": {"type": error_type, "message": message}})

    # -- high level: a whole block or ending ----------------------------------------------

    def text(self, index: int, *pieces: str) -> Self:
        """A text block: start with empty text, one `text_delta` a piece, stop."""
        self.block_start(index, {"type": "text", "text": ""})
        for piece in pieces:
            self.text_delta(index, piece)
        return self.block_stop(index)

    def thinking(self, index: int, *pieces: str, signature: str = "EqQBCgIYAhIM") -> Self:
        """A thinking block with its deltas and signature; the adapter yields nothing for it."""
        self.block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
        for piece in pieces:
            self.delta(index, {"type": "thinking_delta", "thinking": piece})
        self.delta(index, {"type": "signature_delta", "signature": signature})
        return self.block_stop(index)

    def tool(
        self,
        index: int,
        name: str,
        input: dict[str, Any],
        *,
        pieces: int | Sequence[int] = 1,
        id: str | None = None,
    ) -> Self:
        """A whole tool block: start, the API's empty first delta, the JSON in pieces, stop."""
        self.tool_start(index, name, id=id)
        for part in ["", *split_json(json.dumps(input), pieces)]:
            self.json_delta(index, part)
        return self.block_stop(index)

    def _merged(self, blocks: Sequence[StreamBuilder]) -> None:
        self._output_tokens += sum(block._output_tokens - 1 for block in blocks)

    def stop(self, stop_reason: str | None = "end_turn") -> Self:
        """End the message: `message_delta` with the stop reason, then `message_stop`."""
        return self.message_delta(stop_reason).message_stop()
