"""The agent loop's conversation as a `streamGenerateContent` request (`contents`,
`tools`, `systemInstruction`).

`request_params` takes the conversation in the loop's own JSON shape (the Messages API
shape of `harness.agent.messages.messages_to_api`: `text`, `tool_use` and `tool_result`
blocks) and the tools' definitions (`name`, `description`, `input_schema`), and gives the
request as a cassette keeps it: the body google-genai sends, with `model` for the model
its path names (`generate_content_stream(model=..., contents=..., config=...)`):

- the system prompt is `systemInstruction: {"parts": [{"text": ...}]}`;
- a message is a `{"role": "user" | "model", "parts": [...]}` content: its text a
  `{"text"}` part, a call a `{"functionCall": {"name", "args", "id"}}` part after its
  turn's text, a result a `{"functionResponse": {"name", "response", "id"}}` part before
  the user text of its turn, named after the call it answers (Gemini answers a call by
  its name), its text under `response.output`, or under `response.error` when it failed
  (the keys the API reads for each);
- a call's `id` is sent back (with its result's) only when the API gave it: an id the
  adapter made (`call_N` at position N, `adapter.call_id`) is the harness's, so neither
  the call nor its result carries it, as the API's own answer did not;
- the tools are one `{"functionDeclarations": [{"name", "description",
  "parameters_json_schema"}]}`, each schema the tool's JSON Schema as it is, under the
  name google-genai sends it by (the API reads `parametersJsonSchema` or it alike; the
  older `parameters` takes an OpenAPI subset google-genai rewrites);
- `max_tokens`, when set, is `generationConfig.maxOutputTokens`; google-genai sends a
  `generationConfig` whenever it is given a config (a system prompt, tools), `{}`
  without a limit, and so the request says it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness._providers.gemini.adapter import call_id

__all__ = ["request_params"]


def request_params(
    *,
    model: str,
    system: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The `streamGenerateContent` request for one turn, with its `model` (see the module)."""
    contents: list[dict[str, Any]] = []
    names: dict[str, tuple[str, bool]] = {}  # a call's id -> its name, whether the API's id
    for message in messages:
        contents.append(_content(message, names))
    params: dict[str, Any] = {"model": model, "contents": contents}
    if system:
        params["systemInstruction"] = {"parts": [{"text": system}]}
    if tools:
        params["tools"] = [{"functionDeclarations": [_declaration(tool) for tool in tools]}]
    if system or tools or max_tokens is not None:
        limit = {} if max_tokens is None else {"maxOutputTokens": max_tokens}
        params["generationConfig"] = limit
    return params


def _content(message: dict[str, Any], names: dict[str, tuple[str, bool]]) -> dict[str, Any]:
    """One message as a content; `names` learns an assistant turn's calls (their names,
    and whether their ids are the API's), which the next user turn's results answer."""
    blocks = message["content"]
    parts = [_response(block, names) for block in blocks if block["type"] == "tool_result"]
    parts.extend({"text": block["text"]} for block in blocks if block["type"] == "text")
    calls = [block for block in blocks if block["type"] == "tool_use"]
    for position, block in enumerate(calls):
        given = block["id"] != call_id(position)
        names[block["id"]] = (block["name"], given)
        call: dict[str, Any] = {"name": block["name"], "args": block["input"]}
        if given:
            call["id"] = block["id"]
        parts.append({"functionCall": call})
    return {"role": "model" if message["role"] == "assistant" else "user", "parts": parts}


def _response(block: dict[str, Any], names: dict[str, tuple[str, bool]]) -> dict[str, Any]:
    if block["tool_use_id"] not in names:
        raise ValueError(f"tool result {block['tool_use_id']!r} answers no call before it")
    name, given = names[block["tool_use_id"]]
    key = "error" if block.get("is_error") else "output"
    response: dict[str, Any] = {"name": name, "response": {key: block["content"]}}
    if given:
        response["id"] = block["tool_use_id"]
    return {"functionResponse": response}


def _declaration(tool: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": tool["name"],
        "description": tool["description"],
        "parameters_json_schema": tool["input_schema"],
    }
