"""How a trace row names a Chat Completions chunk (`harness replay --trace`).

A chunk's row is event `chunk` (a line whose `error` is set, `error`), at the index of
its first tool-call piece, and its head says the one thing the chunk carries that the
adapter acts on, first found in this order: an API error, a tool call opened
(`call(N) NAME ID`, its first arguments as the excerpt), its arguments (`args(N)`),
content (`content`, the text), a refusal, the finish reason (`finish R`), the usage
chunk (`usage`), the role (`role R`); else just `chunk`. `shown_text` is the text a
chunk carries, as `harness record` shows it while it records; `arguments` the pieces of
the calls' arguments it carries, each at its call's `index` (all of a chunk's pieces,
where the row is named by the first).
"""

from __future__ import annotations

from typing import Any, Final

from harness._providers.openai_chat.adapter import ChatAdapter
from harness._providers.openai_shared import carries_error
from harness._terminal import printable

__all__ = ["arguments", "compared", "describe", "machine", "open_items", "shown_text"]


#: What a lane of `harness view` is in this dialect, short and in full.
LANES: Final = ("call", "call")


def _object(value: object) -> dict[str, Any]:
    """A value read as an object: a dict as it is, anything else as an empty one."""
    return value if isinstance(value, dict) else {}


def _piece(delta: dict[str, Any]) -> dict[str, Any] | None:
    pieces = delta.get("tool_calls")
    if isinstance(pieces, list) and pieces and isinstance(pieces[0], dict):
        return pieces[0]
    return None


def describe(
    data: dict[str, Any], nothing: object, *, short: bool = False
) -> tuple[str, int | None, str, object]:
    """The row's event, index, head and excerpt (`nothing`: none) of a chunk line; the
    head is as short as the side-by-side form (`short`) needs already."""
    if carries_error(data):
        error = _object(data.get("error"))
        named = printable(str(error.get("type") or error.get("code")))
        return "error", None, f"error {named}", nothing
    choices = data.get("choices") if isinstance(data.get("choices"), list) else []
    choice = _object(choices[0] if choices else None)
    delta = _object(choice.get("delta"))
    piece = _piece(delta)
    index = piece.get("index") if piece is not None else None
    index = index if isinstance(index, int) else None
    if piece is not None:
        function = _object(piece.get("function"))
        arguments = function.get("arguments")
        excerpt = arguments if isinstance(arguments, str) and arguments else nothing
        at = "" if index is None else str(index)
        if piece.get("id") is not None or function.get("name") is not None:
            named = " ".join(
                printable(str(value))
                for value in (function.get("name"), piece.get("id"))
                if value is not None
            )
            return "chunk", index, f"call({at}) {named}", excerpt
        return "chunk", index, f"args({at})", excerpt
    for field in ("content", "refusal"):
        if isinstance(delta.get(field), str) and delta[field]:
            return "chunk", None, field, delta[field]
    if choice.get("finish_reason") is not None:
        return "chunk", None, f"finish {printable(str(choice['finish_reason']))}", nothing
    if not choices and data.get("usage") is not None:
        return "chunk", None, "usage", nothing
    if delta.get("role") is not None:
        return "chunk", None, f"role {printable(str(delta['role']))}", nothing
    return "chunk", None, "chunk", nothing


def machine(**options: Any) -> ChatAdapter:
    """A new adapter for the trace to feed, line by line, with the keywords the
    cassette header's request implies (`Provider.request_options`)."""
    return ChatAdapter(**options)


def compared(data: dict[str, Any], *, ids: bool) -> object:
    """What of a line two traces must share beyond its row: nothing, its row's index and
    emits say what the adapter read of it."""
    return None


def open_items(adapter: ChatAdapter, limit: int) -> tuple[tuple[int, ...], int]:
    """The first `limit` tool calls the adapter holds open, in opening order, and how many
    are open."""
    opened = adapter.open_tool_calls
    return opened[:limit], len(opened)


def shown_text(data: dict[str, Any]) -> str:
    """The text (`content`) of a chunk's first choice, "" for any other chunk."""
    choices = data.get("choices") if isinstance(data.get("choices"), list) else []
    content = _object(_object(choices[0] if choices else None).get("delta")).get("content")
    return content if isinstance(content, str) else ""


def arguments(data: dict[str, Any]) -> list[tuple[int, str]]:
    """The pieces of tool-call arguments a chunk's first choice carries, each with its
    call's `index`, in the chunk's order; [] for a chunk without any."""
    choices = data.get("choices") if isinstance(data.get("choices"), list) else []
    pieces = _object(_object(choices[0] if choices else None).get("delta")).get("tool_calls")
    found: list[tuple[int, str]] = []
    for piece in pieces if isinstance(pieces, list) else []:
        index = _object(piece).get("index")
        text = _object(_object(piece).get("function")).get("arguments")
        if type(index) is int and isinstance(text, str):
            found.append((index, text))
    return found
