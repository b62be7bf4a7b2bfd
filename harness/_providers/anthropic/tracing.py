"""How a trace row names a Messages stream event (`harness replay --trace`).

A row's event is the event's `type`, at its content block's `index`; block events are
named as in the picture of docs/replay.md, `start(i)`, `delta(i)`, `stop(i)`: a block's
start with its type (a text block's text as the excerpt; a tool block's name and id, as
its `tool_call` will show them, and its input), a delta with its kind and its text,
partial JSON or thinking, `message_delta` with its stop reason, an `error` with its type.
What two traces compare of a line (`harness diff --trace`) is what the adapter reads of
it: a block's start (its id only with ids), a delta, a stop reason; not a message id.
`shown_text` is the text an event carries, as a recording shows it arriving; `arguments`
the piece of a tool block's JSON it carries, at its block's index (`harness view` draws a
block's JSON growing piece by piece).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from harness._providers.anthropic.adapter import StreamAdapter
from harness._terminal import json_text, printable

__all__ = ["arguments", "compared", "describe", "machine", "open_items", "shown_text"]

#: Delta kinds as the side-by-side form names them, to leave room for the excerpt (a text
#: delta's emit says what it is).
_SHORT_KINDS: Final = {"text_delta": "", "input_json_delta": "json"}


#: What a lane of `harness view` is in this dialect, short and in full.
LANES: Final = ("block", "block")


def describe(
    data: Mapping[str, Any], nothing: object, *, short: bool = False
) -> tuple[str, int | None, str, object]:
    """The row's event, index, head and excerpt (`nothing`: none) of an event line;
    `short` names the two common delta kinds `text` and `json`."""
    event = str(data["type"])
    at = data.get("index")
    index = at if isinstance(at, int) else None
    shown = "" if index is None else str(index)
    if event == "content_block_start":
        block = data.get("content_block") or {}
        kind = printable(str(block.get("type")))
        if kind == "text":
            return event, index, f"start({shown}) text", block.get("text", nothing)
        if "name" in block:  # a tool block: its name and id, as its tool_call will show them
            named = " ".join(printable(str(block[key])) for key in ("name", "id") if key in block)
            return event, index, f"start({shown}) {kind} {named}", block.get("input", nothing)
        return event, index, f"start({shown}) {kind}", nothing
    if event == "content_block_delta":
        delta = data.get("delta") or {}
        kind = printable(str(delta.get("type")))
        head = f"delta({shown}) {_SHORT_KINDS.get(kind, kind) if short else kind}".rstrip()
        for field in ("text", "partial_json", "thinking"):
            if field in delta:
                return event, index, head, delta[field]
        return event, index, head, nothing
    if event == "content_block_stop":
        return event, index, f"stop({shown})", nothing
    if event == "message_delta":
        reason = (data.get("delta") or {}).get("stop_reason")
        return event, index, f"message_delta stop_reason={json_text(reason)}", nothing
    if event == "error":
        details = data.get("error") or {}
        return event, index, f"error {printable(str(details.get('type')))}", nothing
    return event, index, printable(event), nothing


def compared(data: Mapping[str, Any], *, ids: bool) -> object:
    """What of an event line two traces must share beyond its row: what the adapter reads
    of it (a block's start, its id only if `ids`; a delta; a stop reason), else None."""
    event = data.get("type")
    if event == "content_block_start":
        block = data.get("content_block") or {}
        return block if ids else {key: value for key, value in block.items() if key != "id"}
    if event == "content_block_delta":
        return data.get("delta")
    if event == "message_delta":
        return (data.get("delta") or {}).get("stop_reason")
    return None


def machine(**options: Any) -> StreamAdapter:
    """A new adapter for the trace to feed, line by line, with the keywords the
    cassette header's request implies (`Provider.request_options`)."""
    return StreamAdapter(**options)


def open_items(adapter: StreamAdapter, limit: int) -> tuple[tuple[int, ...], int]:
    """The first `limit` tool blocks the adapter holds open, in opening order, and how
    many are open, at a cost bounded by `limit` (however many are open)."""
    return adapter.first_open_tool_blocks(limit), adapter.open_tool_count


def shown_text(data: Mapping[str, Any]) -> str:
    """The text of a `text_delta`, "" for any other event."""
    delta = data.get("delta") if data.get("type") == "content_block_delta" else None
    text = (
        delta.get("text") if isinstance(delta, dict) and delta.get("type") == "text_delta" else None
    )
    return text if isinstance(text, str) else ""


def arguments(data: Mapping[str, Any]) -> list[tuple[int, str]]:
    """The piece of tool input JSON an `input_json_delta` carries, with its block's index;
    [] for any other event."""
    delta = data.get("delta") if data.get("type") == "content_block_delta" else None
    if not isinstance(delta, dict) or delta.get("type") != "input_json_delta":
        return []
    index, piece = data.get("index"), delta.get("partial_json")
    return [(index, piece)] if type(index) is int and isinstance(piece, str) else []
