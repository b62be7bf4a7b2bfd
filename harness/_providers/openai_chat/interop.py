"""Chat Completions as import and export read and write it: the call, its body, its answer.

A Chat Completions call is a `POST` whose path ends in `/chat/completions`, on any host
(OpenAI, Azure's `/openai/deployments/<name>/chat/completions?api-version=...`,
OpenRouter, vLLM, Ollama, Groq...). Its SSE body becomes the cassette's lines as the
`openai` SDK reads it (`harness._providers.openai_framing`): each `data` object a line,
`data: [DONE]` the sentinel where the body had it (the cassette's `{"harness": "done"}`
line: the importer writes it). A plain answer (a
`chat.completion` object) becomes the chunks a stream of it carries: per choice its role,
its reasoning, text or refusal, each tool call's first piece and its arguments, then the
finish; the usage chunk; `[DONE]`. Export writes the lines back as the API frames them
(`data: <json>`, no `event:` line).
"""

from __future__ import annotations

from typing import Any, Final

from harness._providers.openai_chat.errors import PROVIDER
from harness._providers.openai_framing import DONE_DATA, Item, data_frame, read_data
from harness._providers.recorded import Recorded
from harness._providers.sse import sse_fields

__all__ = [
    "API_URL",
    "DONE_DATA",
    "RECORDED",
    "REQUEST_HEADERS",
    "answer_lines",
    "exported_call",
    "is_call",
    "model_of",
    "request_of",
    "sse_body",
    "stream_lines",
]

API_URL: Final = "https://api.openai.com/v1/chat/completions"
REQUEST_HEADERS: Final[dict[str, list[str]]] = {}
#: The fields of a `chat.completion` that each of its chunks repeats.
_CHUNK_FIELDS: Final = ("id", "created", "model", "system_fingerprint", "service_tier")


def is_call(method: str, path: str) -> bool:
    return method == "POST" and path.endswith("/chat/completions")


def request_of(method: str, uri: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request a cassette keeps: the (redacted) body."""
    return body


def stream_lines(fields: list[tuple[str | None, bytes]]) -> list[Item]:
    """The items of an SSE body's events (name, data): each `data` object, and
    `DONE_DATA` where the body sent `[DONE]`; `ValueError` names an event that is neither."""
    return [read_data(data, number) for number, (_, data) in enumerate(fields, 1)]


def _chunk(common: dict[str, Any], index: int, delta: dict[str, Any], finish: Any) -> Any:
    choice = {"index": index, "delta": delta, "finish_reason": finish}
    return {**common, "choices": [choice]}


def _choice_chunks(common: dict[str, Any], choice: Any) -> list[dict[str, Any]]:
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise ValueError("a choice without a message")
    index, message = choice.get("index", 0), choice["message"]
    chunks = [
        _chunk(common, index, {"role": message.get("role") or "assistant", "content": ""}, None)
    ]
    for field in ("reasoning_content", "reasoning", "content", "refusal"):
        value = message.get(field)
        if isinstance(value, str) and value:
            chunks.append(_chunk(common, index, {field: value}, None))
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ValueError("tool_calls is not a list")
    for number, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise ValueError(f"tool call {number} has no function")
        first = {
            "index": number,
            "id": call.get("id"),
            "type": call.get("type", "function"),
            "function": {"name": function.get("name"), "arguments": ""},
        }
        chunks.append(_chunk(common, index, {"tool_calls": [first]}, None))
        arguments = function.get("arguments")
        if arguments:
            piece = {"index": number, "function": {"arguments": arguments}}
            chunks.append(_chunk(common, index, {"tool_calls": [piece]}, None))
    chunks.append(_chunk(common, index, {}, choice.get("finish_reason")))
    return chunks


def answer_lines(completion: Any) -> list[Item]:
    """The lines of the stream a `chat.completion` answer carries; `ValueError` (the
    reason) for other JSON."""
    kind = completion.get("object") if isinstance(completion, dict) else type(completion).__name__
    if not isinstance(completion, dict) or not isinstance(completion.get("choices"), list):
        raise ValueError(f"the JSON response is a {kind!r}, not a chat completion")
    if kind not in (None, "chat.completion"):
        raise ValueError(f"the JSON response is a {kind!r}, not a chat completion")
    common = {key: completion[key] for key in _CHUNK_FIELDS if key in completion}
    common = {"id": common.pop("id", None), "object": "chat.completion.chunk", **common}
    lines: list[Item] = [
        chunk for choice in completion["choices"] for chunk in _choice_chunks(common, choice)
    ]
    if completion.get("usage") is not None:
        lines.append({**common, "choices": [], "usage": completion["usage"]})
    return [*lines, DONE_DATA]


def model_of(lines: list[Item]) -> Any:
    """The model the first chunk names, if any."""
    return lines[0].get("model") if lines and isinstance(lines[0], dict) else None


def exported_call(request: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    """The method, URI and JSON body of the call an export replays."""
    return "POST", API_URL, {**request, "stream": True}


def sse_body(lines: list[Item]) -> bytes:
    """The items as the API sends them: `data: <chunk>`, and `data: [DONE]`."""
    return b"".join(data_frame(item, named=False) for item in lines)


#: The Chat Completions API, as import and export read and write it.
RECORDED: Final = Recorded(
    provider=PROVIDER,
    call="Chat Completions",
    answer="a chat completion",
    http_errors=True,
    is_call=is_call,
    request_of=request_of,
    stream_lines=lambda body: stream_lines(sse_fields(body)),
    field_lines=stream_lines,
    answer_lines=answer_lines,
    model_of=model_of,
    exported_call=exported_call,
    request_headers=REQUEST_HEADERS,
    sse_body=sse_body,
    done=DONE_DATA,
)
