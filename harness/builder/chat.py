"""`ChatStreamBuilder`: a raw OpenAI Chat Completions stream in a few lines.

    stream = (
        ChatStreamBuilder()                            # the role chunk first
        .text("Let me ", "look.")
        .tool(0, "get_weather", {"city": "Paris"}, id="call_01Paris")
        .stop(usage=True)                              # finish_reason tool_calls, usage, [DONE]
    )
    stream.write("chat.jsonl", "what it shows", request={"model": "gpt-4.1-mini", ...})

Each line is a `chat.completion.chunk` as the API's SSE `data` carries it (choice 0, the
usage chunk with `choices: []`), and Chat's `data: [DONE]` is the line `{"harness":
"done"}` (docs/cassettes.md). High-level calls write what the API sends for a whole part:
`text`, `reasoning` (DeepSeek's `reasoning_content`), `refusal`, `tool` (an opening piece
with the call's `index`, `id`, `type` and `function.name` and empty `arguments`, then the
arguments in pieces), `stop` (the finish chunk, the usage chunk if asked, `[DONE]`).
Low-level calls place one line each, for interleaving and broken streams: `chunk`,
`role`, `content`, `call_start`, `arguments`, `finish`, `usage`, `error`, `done`, `directive`,
`raw`. Parallel calls whose pieces interleave, as the API sends them:

    a = ChatStreamBuilder(start=False).tool(0, "get_weather", {"city": "Paris"})
    b = ChatStreamBuilder(start=False).tool(1, "get_weather", {"city": "Rome"})
    ChatStreamBuilder().interleave([a, b], order=[0, 1, 0, 1]).stop()
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final, Self

from harness.builder.base import Builder, split_json

__all__ = ["ChatStreamBuilder"]

DEFAULT_MODEL: Final = "gpt-4.1-mini"
#: 2026-01-01T00:00:00Z: the `created` of every chunk, so a written cassette is reproducible
CREATED: Final = 1767225600


class ChatStreamBuilder(Builder):
    """Accumulates Chat Completions chunks; every method returns the builder for chaining."""

    provider = "openai-chat"

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        completion_id: str = "chatcmpl-HarnessSynthetic",
        created: int = CREATED,
        start: bool = True,
    ) -> None:
        super().__init__(model=model)
        self.completion_id = completion_id
        self.created = created
        self._calls_opened = 0
        if start:
            self.role()

    # -- low level: one line each ---------------------------------------------------------

    def chunk(
        self,
        delta: dict[str, Any] | None = None,
        finish_reason: str | None = None,
        *,
        index: int = 0,
        completion_id: str | None = None,
    ) -> Self:
        """One `chat.completion.chunk` of choice `index` (another `completion_id` for a
        chunk of some other completion)."""
        choice = {"index": index, "delta": delta or {}, "finish_reason": finish_reason}
        return self.raw({**self._envelope(completion_id), "choices": [choice]})

    def _envelope(self, completion_id: str | None = None) -> dict[str, Any]:
        return {
            "id": completion_id or self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }

    def role(self, role: str = "assistant") -> Self:
        """The first chunk: the message's role and empty content."""
        return self.chunk({"role": role, "content": ""})

    def content(self, text: str) -> Self:
        """One content piece."""
        return self.chunk({"content": text})

    def call_start(
        self, index: int, name: str | None, *, id: str | None = None, arguments: str = ""
    ) -> Self:
        """A call's opening piece: its `index`, `id`, `type` and `function.name` (the API's
        empty `arguments` unless given; `name=None` leaves the name out)."""
        self._calls_opened += 1
        function = (
            {"arguments": arguments} if name is None else {"name": name, "arguments": arguments}
        )
        ident = id or f"call_HarnessSynthetic{self._calls_opened:02d}x{index}"
        piece = {"index": index, "id": ident, "type": "function", "function": function}
        return self.chunk({"tool_calls": [piece]})

    def arguments(self, index: int, text: str) -> Self:
        """One more piece of the arguments of the call at `index`."""
        return self.chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]})

    def finish(self, finish_reason: str | None = "stop") -> Self:
        """The chunk with choice 0's `finish_reason` and an empty delta."""
        return self.chunk(None, finish_reason)

    def usage(self, prompt_tokens: int = 25, completion_tokens: int = 9) -> Self:
        """The usage chunk `stream_options.include_usage` adds last: no choices."""
        totals = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        return self.raw({**self._envelope(), "choices": [], "usage": totals})

    def error(
        self,
        message: str = "The server had an error.",
        type: str = "server_error",
        *,
        code: object = None,
        param: object = None,
    ) -> Self:
        """An `{"error": ...}` line mid-stream (the SDK raises `APIError` for it)."""
        error = {"message": message, "type": type, "param": param, "code": code}
        return self.raw({"error": error})

    def done(self) -> Self:
        """Chat's `data: [DONE]`, as a cassette holds it: `{"harness": "done"}`."""
        return self.directive("done")

    # -- high level: a whole part or ending ------------------------------------------------

    def text(self, *pieces: str) -> Self:
        """The answer's text, one content chunk a piece."""
        for piece in pieces:
            self.content(piece)
        return self

    def reasoning(self, *pieces: str) -> Self:
        """`reasoning_content` pieces (DeepSeek's and others'), which the adapter passes over."""
        for piece in pieces:
            self.chunk({"reasoning_content": piece})
        return self

    def refusal(self, *pieces: str) -> Self:
        """`delta.refusal` pieces: the strict adapter's `refusal` by default."""
        for piece in pieces:
            self.chunk({"refusal": piece})
        return self

    def tool(
        self,
        index: int,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        pieces: int | Sequence[int] = 2,
        id: str | None = None,
    ) -> Self:
        """A whole call at `index`: its opening piece, then its arguments (a dict as JSON, or
        the text as it is, cut JSON included) in `pieces` near-equal parts or cut at the
        given offsets; an empty part is not sent, so `""` is a call of no arguments."""
        self.call_start(index, name, id=id)
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        for part in split_json(text, pieces):
            if part:
                self.arguments(index, part)
        return self

    def stop(self, finish_reason: str | None = None, *, usage: bool = False) -> Self:
        """End the answer: the finish chunk (`tool_calls` when a call was opened, else `stop`,
        unless given), the usage chunk if `usage`, then `[DONE]`."""
        if finish_reason is None:
            finish_reason = "tool_calls" if self._calls_opened else "stop"
        self.finish(finish_reason)
        if usage:
            self.usage()
        return self.done()

    def _merged(self, blocks: Sequence[ChatStreamBuilder]) -> None:
        self._calls_opened += sum(block._calls_opened for block in blocks)
