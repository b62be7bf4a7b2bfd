"""The loop's conversation messages and their Messages API JSON shape.

A message is a role and a tuple of content blocks: `text`, `tool_use` (the assistant
asks for a call) and `tool_result` (the user side answers it, `is_error` when the call
failed, was denied or was never run). `to_api` gives exactly what the API's `messages`
parameter takes, so the transcript the loop keeps is the request it sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from harness._events import ToolCall
from harness._terminal import json_text, printable

__all__ = [
    "ContentBlock",
    "Message",
    "TextBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "messages_to_api",
    "render_transcript",
]

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]

    @classmethod
    def from_call(cls, call: ToolCall) -> ToolUseBlock:
        return cls(call.id, call.name, call.input)


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False


ContentBlock: TypeAlias = TextBlock | ToolUseBlock | ToolResultBlock


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: tuple[ContentBlock, ...]

    @classmethod
    def user_text(cls, text: str) -> Message:
        return cls("user", (TextBlock(text),))

    def to_api(self) -> dict[str, Any]:
        """`{"role": ..., "content": [blocks]}` as the Messages API takes it."""
        return {"role": self.role, "content": [block_to_api(block) for block in self.content]}


def block_to_api(block: ContentBlock) -> dict[str, Any]:
    """One content block in the Messages API shape."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": block.content,
        "is_error": block.is_error,
    }


def messages_to_api(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [message.to_api() for message in messages]


def render_transcript(messages: Sequence[Message]) -> list[str]:
    """A readable transcript: one labelled line a block, continuation lines indented."""
    lines: list[str] = []

    def add(label: str, text: str) -> None:
        first, *rest = text.splitlines() or [""]
        lines.append(f"{label:<12}{first}".rstrip())
        lines.extend(f"{'':<12}{line}".rstrip() for line in rest)

    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                add(message.role, printable(block.text, keep="\n"))
            elif isinstance(block, ToolUseBlock):
                name, ident = printable(block.name), printable(block.id)
                add("tool_use", f"{name} {json_text(block.input)} ({ident})")
            else:
                status = "error" if block.is_error else "ok"
                content = printable(block.content, keep="\n")
                add("tool_result", f"{status} ({printable(block.tool_use_id)})\n{content}")
    return lines
