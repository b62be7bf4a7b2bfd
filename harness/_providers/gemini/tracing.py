"""How a trace row names a Gemini chunk (`harness replay --trace`).

A chunk's row is event `chunk` (an `{"error": ...}` chunk, `error`), at the position of
its first function call, and its head says the one thing the chunk carries that the
adapter acts on, first found in this order: an API error, a function call (`call(N)
NAME`, its args as the excerpt; `args(N)` for a streamed call's pieces), text (`text`,
the text), a thought (`thought`), the finish reason (`finish R`), a blocked prompt
(`blocked R`), usage alone (`usage`); else just `chunk`. N counts the calls of the chunk
only (a trace row is one line). `shown_text` is the text a chunk carries (thoughts
left out), `arguments` the JSON of the calls' args it carries, each at its position in
the chunk.
"""

from __future__ import annotations

import json
from typing import Any, Final

from harness._providers.gemini.adapter import GeminiAdapter
from harness._terminal import printable

__all__ = ["arguments", "compared", "describe", "machine", "open_items", "shown_text"]

#: What a lane of `harness view` is in this dialect, short and in full.
LANES: Final = ("call", "function call")


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _candidate(data: dict[str, Any]) -> dict[str, Any]:
    candidates = data.get("candidates")
    return _object(candidates[0] if isinstance(candidates, list) and candidates else None)


def _parts(data: dict[str, Any]) -> list[dict[str, Any]]:
    parts = _object(_candidate(data).get("content")).get("parts")
    return [_object(part) for part in parts] if isinstance(parts, list) else []


def describe(
    data: dict[str, Any], nothing: object, *, short: bool = False
) -> tuple[str, int | None, str, object]:
    """The row's event, index, head and excerpt (`nothing`: none) of a chunk line."""
    if data.get("error"):
        error = _object(data["error"])
        return (
            "error",
            None,
            f"error {printable(str(error.get('status') or error.get('code')))}",
            nothing,
        )
    parts = _parts(data)
    calls = [_object(part["functionCall"]) for part in parts if "functionCall" in part]
    if calls:
        first = calls[0]
        args = first.get("args")
        excerpt = json.dumps(args) if isinstance(args, dict) else nothing
        name = first.get("name")
        if isinstance(name, str) and name:
            return "chunk", 0, f"call(0) {printable(name)}", excerpt
        return "chunk", 0, "args(0)", nothing
    texts = [part for part in parts if isinstance(part.get("text"), str) and part["text"]]
    said = [part["text"] for part in texts if not part.get("thought")]
    if said:
        return "chunk", None, "text", "".join(said)
    if texts:
        return "chunk", None, "thought", texts[0]["text"]
    reason = _candidate(data).get("finishReason")
    if reason is not None:
        return "chunk", None, f"finish {printable(str(reason))}", nothing
    blocked = _object(data.get("promptFeedback")).get("blockReason")
    if blocked:
        return "chunk", None, f"blocked {printable(str(blocked))}", nothing
    if "usageMetadata" in data and not parts:
        return "chunk", None, "usage", nothing
    return "chunk", None, "chunk", nothing


def machine(**options: Any) -> GeminiAdapter:
    """A new adapter for the trace to feed, line by line."""
    return GeminiAdapter(**options)


def compared(data: dict[str, Any], *, ids: bool) -> object:
    """What of a line two traces must share beyond its row: nothing more."""
    return None


def open_items(adapter: GeminiAdapter, limit: int) -> tuple[tuple[int, ...], int]:
    """The first `limit` calls the adapter holds until the finish, and how many are held."""
    held = adapter.open_function_calls
    return held[:limit], len(held)


def shown_text(data: dict[str, Any]) -> str:
    """The text (not thoughts) of a chunk's candidate 0, "" for any other chunk."""
    return "".join(
        part["text"]
        for part in _parts(data)
        if isinstance(part.get("text"), str) and not part.get("thought")
    )


def arguments(data: dict[str, Any]) -> list[tuple[int, str]]:
    """The JSON of each function call's `args` a chunk carries, at its position in the chunk."""
    found: list[tuple[int, str]] = []
    calls = [_object(part["functionCall"]) for part in _parts(data) if "functionCall" in part]
    for position, call in enumerate(calls):
        if isinstance(call.get("args"), dict):
            found.append((position, json.dumps(call["args"])))
    return found
