"""Gemini's fault rows: a good chunk stream broken the ways `GeminiAdapter` must catch.

A stream here is a cassette's lines: `GenerateContentResponse` chunks, and an
`{"error": ...}` chunk. The finish is the chunk whose candidate 0 carries
`finishReason`; the answer is the chunks before it. Every row's expected outcome is a
code of the Gemini table (`errors`) or `api_error:<status>`. The wire rows are
`fault_rows.wire_rows`, given a 500 and a 429 in the API's error shape.
"""

from __future__ import annotations

import copy
from typing import Any

from harness._json import dump_line
from harness._providers.fault_rows import Events, Fault, http_error, wire_rows, without
from harness._providers.gemini.errors import PROVIDER
from harness._providers.gemini.framing import encode_chunk

__all__ = ["CATALOGUE", "PROVIDER"]


def _candidate(line: dict[str, Any]) -> dict[str, Any] | None:
    candidates = line.get("candidates")
    if "harness" in line or not isinstance(candidates, list) or not candidates:
        return None
    first = candidates[0]
    return first if isinstance(first, dict) else None


def _finish(events: Events) -> int | None:
    """The position of the chunk giving candidate 0's finishReason."""
    return next(
        (
            position
            for position, line in enumerate(events)
            if (_candidate(line) or {}).get("finishReason") is not None
        ),
        None,
    )


def _span(events: Events) -> tuple[int, int] | None:
    """The first chunk and the finish chunk."""
    finish = _finish(events)
    first = next((p for p, line in enumerate(events) if _candidate(line) is not None), None)
    return None if finish is None or first is None else (first, finish)


def _with_reason(events: Events, reason: str | None) -> Events | None:
    finish = _finish(events)
    if finish is None:
        return None
    broken = copy.deepcopy(events)
    candidate = _candidate(broken[finish])
    assert candidate is not None
    if reason is None:
        del candidate["finishReason"]
    else:
        candidate["finishReason"] = reason
    return broken


def drop_finish_reason(events: Events) -> Events | None:
    return _with_reason(events, None)


def finish_max_tokens(events: Events) -> Events | None:
    return _with_reason(events, "MAX_TOKENS")


def finish_malformed_function_call(events: Events) -> Events | None:
    """The finish chunk becomes what the API sends for a call that did not parse: no content."""
    finish = _finish(events)
    if finish is None:
        return None
    broken = without(events, set(range(finish, len(events))))
    broken.append({"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}]})
    return broken


def _text_chunk(text: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}]}


def text_after_finish(events: Events) -> Events | None:
    finish = _finish(events)
    if finish is None:
        return None
    broken = copy.deepcopy(events)
    broken.insert(finish + 1, _text_chunk(" and more"))
    return broken


def _content(line: dict[str, Any]) -> bool:
    """Whether a chunk's candidate 0 carries any of the answer: text, a function call, or
    a part of another kind (what the adapter refuses after the finish)."""
    content = (_candidate(line) or {}).get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return any(
        isinstance(part, dict)
        and ("functionCall" in part or part.get("text") or set(part) - {"text", "thoughtSignature"})
        for part in (parts if isinstance(parts, list) else [])
    )


def finish_on_every_chunk(events: Events) -> Events | None:
    """The finish's reason on every chunk before it that carries content, as the API sent
    gemini-pro's answers in 2023-24 and translating proxies still do: the first such chunk
    ends the answer, and the content of the next comes after its finish. Left out where
    no content follows the first, or a streamed call is open around it."""
    finish = _finish(events)
    if finish is None:
        return None
    call_open = _call_open(events)
    marked = [
        at
        for at in range(finish)
        if _content(events[at]) and not call_open[at] and not (at and call_open[at - 1])
    ]
    if not marked or not any(_content(events[at]) for at in range(marked[0] + 1, finish)):
        return None
    broken = copy.deepcopy(events)
    reason = (_candidate(events[finish]) or {})["finishReason"]
    for at in range(marked[0], finish):
        candidate = _candidate(broken[at])
        if candidate is not None and _content(broken[at]):
            candidate["finishReason"] = reason
    return broken


def second_candidate(events: Events) -> Events | None:
    span = _span(events)
    if span is None:
        return None
    broken = copy.deepcopy(events)
    candidates = broken[span[0]]["candidates"]
    candidates.append({**copy.deepcopy(candidates[0]), "index": 1})
    return broken


def prompt_blocked(events: Events) -> Events | None:
    """The answer replaced by the chunk the API sends for a prompt it blocked:
    `promptFeedback.blockReason` and no candidates (the prompt's usage alone)."""
    span = _span(events)
    if span is None:
        return None
    first = events[span[0]]
    usage = first.get("usageMetadata")
    prompt = usage.get("promptTokenCount") if isinstance(usage, dict) else None
    if type(prompt) is not int:
        prompt = 0
    blocked: dict[str, Any] = {
        "promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt},
    }
    blocked.update(
        {k: copy.deepcopy(first[k]) for k in ("modelVersion", "responseId") if k in first}
    )
    return [*copy.deepcopy(events[: span[0]]), blocked]


def server_error_mid_stream(events: Events) -> Events | None:
    span = _span(events)
    if span is None:
        return None
    error = {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}
    return [*copy.deepcopy(events[: span[0] + 1]), error]


def _call_open(events: Events) -> list[bool]:
    """After each line, whether a streamed call is open (opened by a named `functionCall`
    with `willContinue`, closed by one without it), as the adapter reads the parts."""
    found: list[bool] = []
    open_call = False
    for line in events:
        content = (_candidate(line) or {}).get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict) or "functionCall" not in part:
                continue
            call = part["functionCall"] if isinstance(part["functionCall"], dict) else {}
            if call.get("name") is not None or open_call:
                open_call = call.get("willContinue") is True
        found.append(open_call)
    return found


def cut_connection(events: Events) -> Events | None:
    """The stream ends after its first chunk with no streamed call open, before the
    finish (inside a call it would end in `unfinished_function_call`)."""
    span = _span(events)
    if span is None:
        return None
    call_open = _call_open(events)
    at = next((at for at in range(*span) if not call_open[at]), None)
    return None if at is None else copy.deepcopy(events[: at + 1])


def _wire_size(line: dict[str, Any]) -> int:
    return len(encode_chunk(line)) if "harness" not in line else len(dump_line(line))


_HTTP_500 = http_error(
    500,
    {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}},
    {},
)
_HTTP_429 = http_error(
    429,
    {"error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}},
    {"retry-after": "0"},
)

#: The catalogue, in order: the dialect's rows, then the wire rows.
CATALOGUE: tuple[Fault, ...] = (
    Fault(
        "drop_finish_reason",
        "missing_finish_reason",
        "candidate 0's finishReason removed from the finish chunk",
        drop_finish_reason,
    ),
    Fault(
        "finish_max_tokens",
        "unsupported_finish_reason",
        "finishReason set to MAX_TOKENS (maxOutputTokens reached)",
        finish_max_tokens,
    ),
    Fault(
        "finish_malformed_function_call",
        "unsupported_finish_reason",
        "the finish chunk replaced by MALFORMED_FUNCTION_CALL without content",
        finish_malformed_function_call,
    ),
    Fault(
        "text_after_finish",
        "chunk_after_finish",
        "a text chunk after the finish chunk",
        text_after_finish,
    ),
    Fault(
        "finish_on_every_chunk",
        "chunk_after_finish",
        "the finish's reason on every chunk that carries content (gemini-pro's stream in "
        "2023-24, a translating proxy's): the first ends the answer, the rest come after it",
        finish_on_every_chunk,
    ),
    Fault(
        "second_candidate",
        "multiple_candidates",
        "the first chunk carries candidate 1 beside candidate 0 (as candidateCount 2 sends)",
        second_candidate,
    ),
    Fault(
        "prompt_blocked",
        "prompt_blocked",
        "the answer replaced by the API's chunk for a blocked prompt: promptFeedback."
        "blockReason SAFETY and no candidates",
        prompt_blocked,
    ),
    Fault(
        "server_error_mid_stream",
        "api_error:INTERNAL",
        'an {"error": ...} chunk (INTERNAL) after the first chunk, ending the stream',
        server_error_mid_stream,
    ),
    Fault(
        "cut_connection",
        "missing_finish_reason",
        "the stream ends after its first chunk with no streamed call open, before the finish",
        cut_connection,
    ),
    *wire_rows(
        (
            "http_500",
            "api_error:INTERNAL",
            "an HTTP 500 INTERNAL answer instead of a stream",
            _HTTP_500,
        ),
        _HTTP_429,
        _span,
        _wire_size,
    ),
)
