"""The agent loop's conversation as a ConverseStream request (`messages`, `system`,
`toolConfig`).

`request_params` takes the conversation in the loop's own JSON shape (the Messages API
shape of `harness.agent.messages.messages_to_api`: `text`, `tool_use` and `tool_result`
blocks) and the tools' definitions (`name`, `description`, `input_schema`), and gives the
request as a cassette keeps it: the body of `POST /model/{modelId}/converse-stream` with
`model` for the path's `modelId` (boto3's `converse_stream(modelId=..., **the rest)`):

- the system prompt is `system: [{"text": ...}]`;
- a message keeps its role; its text is a `{"text"}` block, a call a `{"toolUse":
  {"toolUseId", "name", "input"}}` block (the input as an object, not JSON text) after
  its turn's text, and a result a `{"toolResult": {"toolUseId", "content": [{"text"}]}}`
  block before the user text of its turn, with `"status": "error"` when it failed (the
  field Converse has for it; a result that did not fail carries none);
- a tool is `{"toolSpec": {"name", "description", "inputSchema": {"json": schema}}}`
  under `toolConfig.tools`;
- `max_tokens`, when set, is `inferenceConfig.maxTokens`.
"""

from __future__ import annotations

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
    """The ConverseStream request for one turn, `model` its `modelId` (see the module)."""
    params: dict[str, Any] = {"model": model, "messages": [_message(m) for m in messages]}
    if system:
        params["system"] = [{"text": system}]
    if tools:
        params["toolConfig"] = {"tools": [_tool(tool) for tool in tools]}
    if max_tokens is not None:
        params["inferenceConfig"] = {"maxTokens": max_tokens}
    return params


def _message(message: dict[str, Any]) -> dict[str, Any]:
    blocks = message["content"]
    found = [_result(block) for block in blocks if block["type"] == "tool_result"]
    found.extend({"text": block["text"]} for block in blocks if block["type"] == "text")
    found.extend(_call(block) for block in blocks if block["type"] == "tool_use")
    return {"role": message["role"], "content": found}


def _call(block: dict[str, Any]) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": block["id"], "name": block["name"], "input": block["input"]}}


def _result(block: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "toolUseId": block["tool_use_id"],
        "content": [{"text": block["content"]}],
    }
    if block.get("is_error"):
        result["status"] = "error"
    return {"toolResult": result}


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    spec = {
        "name": tool["name"],
        "description": tool["description"],
        "inputSchema": {"json": tool["input_schema"]},
    }
    return {"toolSpec": spec}
