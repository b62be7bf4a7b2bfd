"""How a trace row names a ConverseStream event (`harness replay --trace`).

A line's row is its event's name, at its `contentBlockIndex` where it has one, and its
head says what the adapter acts on: `start(N) tool NAME ID` (a server tool's `start(N)
server ...`), `text(N)` with the text as the excerpt, `input(N)` with the piece of a
tool's input, `reasoning(N)`, `stop(N)`, `stop REASON`, `metadata`, `role R`, or the
exception's name and message. `shown_text` is the text a line carries, as `harness
record` shows it while it records; `arguments` the piece of tool input it carries, at
its block's index.
"""

from __future__ import annotations

from typing import Any, Final

from harness._providers.bedrock_converse.adapter import (
    EXCEPTIONS,
    ConverseAdapter,
    event_name,
    is_client_tool,
)
from harness._terminal import printable

__all__ = ["arguments", "compared", "describe", "machine", "open_items", "shown_text"]

#: What a lane of `harness view` is in this dialect, short and in full.
LANES: Final = ("block", "block")


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def describe(
    data: dict[str, Any], nothing: object, *, short: bool = False
) -> tuple[str, int | None, str, object]:
    """The row's event, index, head and excerpt (`nothing`: none) of a line."""
    name = event_name(data)
    event = _object(data.get(name))
    index = event.get("contentBlockIndex")
    index = index if type(index) is int else None
    at = "" if index is None else str(index)
    shown = printable(name)
    if name in EXCEPTIONS:
        message = event.get("message")
        return shown, None, shown, message if isinstance(message, str) else nothing
    if name == "contentBlockDelta":
        delta = _object(event.get("delta"))
        if isinstance(delta.get("text"), str):
            return shown, index, f"text({at})", delta["text"] or nothing
        use = _object(delta.get("toolUse"))
        if "toolUse" in delta:
            piece = use.get("input")
            return shown, index, f"input({at})", piece if isinstance(piece, str) else nothing
        kind = next(iter(delta), "delta")
        return shown, index, f"{printable(kind)}({at})", nothing
    if name == "contentBlockStart":
        start = _object(event.get("start"))
        use = _object(start.get("toolUse"))
        if use and is_client_tool(use):
            named = " ".join(printable(str(use.get(key))) for key in ("name", "toolUseId"))
            return shown, index, f"start({at}) tool {named}", nothing
        return shown, index, f"start({at}) server {printable(str(next(iter(start), '')))}", nothing
    if name == "contentBlockStop":
        return shown, index, f"stop({at})", nothing
    if name == "messageStop":
        return shown, None, f"stop {printable(str(event.get('stopReason')))}", nothing
    if name == "messageStart":
        return shown, None, f"role {printable(str(event.get('role')))}", nothing
    return shown, None, shown or "event", nothing


def machine(**options: Any) -> ConverseAdapter:
    """A new adapter for the trace to feed, line by line."""
    return ConverseAdapter(**options)


def compared(data: dict[str, Any], *, ids: bool) -> object:
    """What of a line two traces must share beyond its row: its stop reason."""
    stop = data.get("messageStop")
    return _object(stop).get("stopReason") if stop is not None else None


def open_items(adapter: ConverseAdapter, limit: int) -> tuple[tuple[int, ...], int]:
    """The first `limit` tool blocks the adapter holds open, and how many are open."""
    opened = adapter.open_tool_blocks
    return opened[:limit], len(opened)


def shown_text(data: dict[str, Any]) -> str:
    """The text of a text delta, "" for any other line."""
    delta = _object(_object(data.get("contentBlockDelta")).get("delta"))
    text = delta.get("text")
    return text if isinstance(text, str) else ""


def arguments(data: dict[str, Any]) -> list[tuple[int, str]]:
    """The piece of a tool's input a line carries, at its block's index; [] for another."""
    event = _object(data.get("contentBlockDelta"))
    piece = _object(_object(event.get("delta")).get("toolUse")).get("input")
    index = event.get("contentBlockIndex")
    return [(index, piece)] if type(index) is int and isinstance(piece, str) else []
