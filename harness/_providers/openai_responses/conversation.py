"""The agent loop's conversation as a Responses request (`instructions`, `input`, `tools`).

`request_params` takes the conversation in the loop's own JSON shape (the Messages API
shape of `harness.agent.messages.messages_to_api`: `text`, `tool_use` and `tool_result`
blocks) and the tools' definitions (`name`, `description`, `input_schema`), and gives the
keyword arguments of `responses.create` (without `stream`). The whole conversation is
sent each turn (no `previous_response_id`):

- the system prompt is `instructions`;
- text is an input message, `{"role": "user" | "assistant", "content": text}`;
- a call is a `{"type": "function_call", "call_id", "name", "arguments"}` item (the
  input as JSON), after its turn's text; a result is a `{"type": "function_call_output",
  "call_id", "output"}` item (Responses has no error flag: the output says it), before
  the user text of its turn;
- a tool is `{"type": "function", "name", "description", "parameters", "strict": false}`
  (the loop's schemas are not written for strict mode).
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
    """The `responses.create` keyword arguments for one turn (see the module)."""
    items: list[dict[str, Any]] = []
    for message in messages:
        items.extend(_items(message))
    params: dict[str, Any] = {"model": model}
    if system:
        params["instructions"] = system
    params["input"] = items
    if tools:
        params["tools"] = [_tool(tool) for tool in tools]
    if max_tokens is not None:
        params["max_output_tokens"] = max_tokens
    return params


def _items(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = message["content"]
    text = "".join(block["text"] for block in blocks if block["type"] == "text")
    role = message["role"]
    found: list[dict[str, Any]] = []
    if role == "user":
        found.extend(_output(block) for block in blocks if block["type"] == "tool_result")
    if text:
        found.append({"role": role, "content": text})
    if role == "assistant":
        found.extend(_call(block) for block in blocks if block["type"] == "tool_use")
    return found


def _call(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": block["id"],
        "name": block["name"],
        "arguments": json.dumps(block["input"], ensure_ascii=False),
    }


def _output(block: dict[str, Any]) -> dict[str, Any]:
    call_id, output = block["tool_use_id"], block["content"]
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["input_schema"],
        "strict": False,
    }
