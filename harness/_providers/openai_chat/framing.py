"""How a Chat Completions cassette goes over the wire, streamed or not.

Streamed, each chunk line is `data: <json>\\n\\n` (no `event:` field: Chat names none)
and the `{"harness": "done"}` line is `data: [DONE]\\n\\n` (`DONE_SSE`). Not streamed,
the chunks fold into the `chat.completion` object the API answers `stream=False` with
(`completion_from_chunks`): per choice, its `content` and `refusal` joined (None when it
sent none), its `tool_calls` assembled by `index` (id and name as the first piece gave
them, `arguments` joined), its `finish_reason`; the first chunk's id, model, created and
`system_fingerprint`; the usage chunk's `usage`. A line whose `error` is set (beside
`choices` too, as OpenRouter and Groq send it) answers as the HTTP error it stands for
(raised as `APIErrorEvent`, its body the line itself, its status the error type's).
Replay's transports read them as `FRAMING` (`harness._providers.wire.Framing`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Final

from harness._exceptions import APIErrorEvent
from harness._json import dump_line
from harness._providers.openai_shared import (
    carries_error,
    error_answer,
    error_status,
)
from harness._providers.wire import Framing

__all__ = [
    "DONE_SSE",
    "ENDPOINT",
    "FRAMING",
    "MATCH_ON",
    "completion_from_chunks",
    "encode_chunk",
]

#: The path a Chat Completions request is POSTed to.
ENDPOINT: Final = "/v1/chat/completions"
#: The request fields a replayed request is compared on by default.
MATCH_ON: Final = ("model", "messages", "tools")
#: `data: [DONE]`, as the API ends a streamed body.
DONE_SSE: Final = b"data: [DONE]\n\n"


def encode_chunk(data: dict[str, Any]) -> bytes:
    """One line's object as Chat's SSE framing carries it, closing blank line included."""
    return b"data: " + dump_line(data) + b"\n\n"


def _object(value: object) -> dict[str, Any]:
    """A value read as an object: a dict as it is, anything else as an empty one."""
    return value if isinstance(value, dict) else {}


def _choice(choices: dict[int, dict[str, Any]], index: int) -> dict[str, Any]:
    return choices.setdefault(
        index, {"content": [], "refusal": [], "calls": {}, "finish_reason": None}
    )


def _fold_calls(calls: dict[Any, dict[str, Any]], pieces: Any) -> None:
    for piece in pieces if isinstance(pieces, list) else []:
        if not isinstance(piece, dict):
            continue
        call = calls.setdefault(
            piece.get("index"),
            {"id": None, "type": "function", "function": {"name": None, "arguments": ""}},
        )
        if call["id"] is None and piece.get("id") is not None:
            call["id"] = piece["id"]
        function: dict[str, Any] = _object(piece.get("function"))
        if call["function"]["name"] is None and function.get("name") is not None:
            call["function"]["name"] = function["name"]
        if isinstance(function.get("arguments"), str):
            call["function"]["arguments"] += function["arguments"]


def completion_from_chunks(chunks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The `chat.completion` a non-streaming request gets for these chunks; an error line
    raises `APIErrorEvent`, no chunk at all `ValueError`."""
    first: dict[str, Any] | None = None
    usage: Any = None
    choices: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        if carries_error(chunk):
            raise APIErrorEvent({"error": chunk["error"]}, error_status(chunk["error"]))
        first = first or chunk
        if chunk.get("usage") is not None:
            usage = copy.deepcopy(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or not isinstance(choice.get("index", 0), int):
                continue
            folded = _choice(choices, choice.get("index", 0))
            delta = _object(choice.get("delta"))
            for field in ("content", "refusal"):
                if isinstance(delta.get(field), str):
                    folded[field].append(delta[field])
            _fold_calls(folded["calls"], delta.get("tool_calls"))
            if choice.get("finish_reason") is not None:
                folded["finish_reason"] = choice["finish_reason"]
    if first is None:
        raise ValueError("the cassette holds no chat.completion.chunk to fold")
    completion: dict[str, Any] = {
        "id": first.get("id"),
        "object": "chat.completion",
        "created": first.get("created"),
        "model": first.get("model"),
        "choices": [_message(index, choices[index]) for index in sorted(choices)],
        "usage": usage,
    }
    for field in ("system_fingerprint", "service_tier"):
        if first.get(field) is not None:
            completion[field] = first[field]
    return completion


def _message(index: int, folded: dict[str, Any]) -> dict[str, Any]:
    content = "".join(folded["content"])
    message: dict[str, Any] = {
        "role": "assistant",
        # as the API answers: a string, but null beside tool calls or a refusal
        "content": None if not content and (folded["calls"] or folded["refusal"]) else content,
        "refusal": "".join(folded["refusal"]) if folded["refusal"] else None,
    }
    calls = folded["calls"]
    if calls:
        message["tool_calls"] = [calls[key] for key in calls]
    return {
        "index": index,
        "message": message,
        "finish_reason": folded["finish_reason"],
        "logprobs": None,
    }


#: The Chat Completions wire, as replay reads it (`provider("openai-chat").framing`).
FRAMING: Final = Framing(
    encode_chunk,
    completion_from_chunks,
    MATCH_ON,
    endpoints=(ENDPOINT,),
    done=DONE_SSE,
    error_answer=error_answer,
)
