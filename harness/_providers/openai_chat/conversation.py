"""The agent loop's conversation as a Chat Completions request (`messages`, `tools`).

`request_params` takes the conversation in the loop's own JSON shape (the Messages API
shape of `harness.agent.messages.messages_to_api`: `text`, `tool_use` and `tool_result`
blocks) and the tools' definitions (`name`, `description`, `input_schema`), and gives the
keyword arguments of `chat.completions.create` (without `stream`):

- the system prompt is a first `{"role": "system"}` message;
- a user turn's text is a `{"role": "user"}` message; its `tool_result`s come first, one
  `{"role": "tool", "tool_call_id", "content"}` message each, right after the assistant
  message whose call they answer (Chat has no error flag: the content says it);
- an assistant turn is one message: its text as `content` (`None` when it had only
  calls), its calls as `tool_calls` (`type: function`, the input as JSON `arguments`);
- a tool is `{"type": "function", "function": {"name", "description", "parameters"}}`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ["request_params"]


def request_params(
    *,
    model: str,
    system: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The `chat.completions.create` keyword arguments for one turn (see the module)."""
    chat: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        chat.extend(_messages(message))
    params: dict[str, Any] = {"model": model, "messages": chat}
    if tools:
        params["tools"] = [_tool(tool) for tool in tools]
    if max_tokens is not None:
        params["max_completion_tokens"] = max_tokens
    return params


def _messages(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = message["content"]
    text = "".join(block["text"] for block in blocks if block["type"] == "text")
    if message["role"] == "assistant":
        calls = [_call(block) for block in blocks if block["type"] == "tool_use"]
        answer: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            answer["tool_calls"] = calls
        return [answer]
    found = [
        {"role": "tool", "tool_call_id": block["tool_use_id"], "content": block["content"]}
        for block in blocks
        if block["type"] == "tool_result"
    ]
    if text:
        found.append({"role": "user", "content": text})
    return found


def _call(block: dict[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(block["input"], ensure_ascii=False)
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": arguments},
    }


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["input_schema"],
    }
    return {"type": "function", "function": function}
