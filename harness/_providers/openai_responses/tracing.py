"""How a trace row names a Responses event (`harness replay --trace`).

A row's event is the event's `type`, at its `output_index`; its head is the type
without the `response.` prefix, the index in parentheses, and what the event carries
that the adapter acts on: an item's type (and a call's name and `call_id`) at
`output_item.added` / `.done`, a delta's text or arguments as the excerpt, a terminal
event's status, an error's code. `shown_text` is the text an event carries, as
`harness record` shows it while it records; `arguments` the piece of a call's arguments
a `function_call_arguments.delta` carries, at its `output_index`.
"""

from __future__ import annotations

from typing import Any, Final

from harness._providers.openai_responses.adapter import ResponsesAdapter
from harness._terminal import printable

__all__ = ["arguments", "compared", "describe", "machine", "open_items", "shown_text"]


#: What a lane of `harness view` is in this dialect, short and in full.
LANES: Final = ("item", "output item")


def describe(
    data: dict[str, Any], nothing: object, *, short: bool = False
) -> tuple[str, int | None, str, object]:
    """The row's event, index, head and excerpt (`nothing`: none) of an event line; the
    head is as short as the side-by-side form (`short`) needs already."""
    kind = str(data.get("type"))
    index = data.get("output_index")
    index = index if isinstance(index, int) else None
    if "type" not in data and isinstance(data.get("error"), dict):
        return "error", None, f"error {printable(str(data['error'].get('code')))}", nothing
    bare = kind.removeprefix("response.")
    head = printable(bare if index is None else f"{bare}({index})")
    item = data.get("item") if isinstance(data.get("item"), dict) else None
    if item is not None:
        named = [item.get(key) for key in ("type", "name", "call_id") if item.get(key) is not None]
        return kind, index, " ".join([head, *(printable(str(value)) for value in named)]), nothing
    if kind == "error":
        return kind, None, f"error {printable(str(data.get('code')))}", nothing
    for field in ("delta", "arguments"):
        if isinstance(data.get(field), str):
            return kind, index, head, data[field]
    response = data.get("response") if isinstance(data.get("response"), dict) else None
    if response is not None and "status" in response:
        return kind, index, f"{head} status={printable(str(response['status']))}", nothing
    return kind, index, head, nothing


def machine(**options: Any) -> ResponsesAdapter:
    """A new adapter for the trace to feed, line by line, with the keywords the
    cassette header's request implies (`Provider.request_options`)."""
    return ResponsesAdapter(**options)


def compared(data: dict[str, Any], *, ids: bool) -> object:
    """What of a line two traces must share beyond its row: nothing, its row's index and
    emits say what the adapter read of it."""
    return None


def open_items(adapter: ResponsesAdapter, limit: int) -> tuple[tuple[int, ...], int]:
    """The first `limit` output items the adapter holds open, in opening order, and how many
    are open."""
    opened = adapter.open_output_items
    return opened[:limit], len(opened)


def shown_text(data: dict[str, Any]) -> str:
    """The text of a `response.output_text.delta`, "" for any other event."""
    delta = data.get("delta")
    text = data.get("type") == "response.output_text.delta" and isinstance(delta, str)
    return delta if text and isinstance(delta, str) else ""


def arguments(data: dict[str, Any]) -> list[tuple[int, str]]:
    """The piece of a function call's arguments a `response.function_call_arguments.delta`
    carries, with its `output_index`; [] for any other event (`.done` repeats the whole)."""
    if data.get("type") != "response.function_call_arguments.delta":
        return []
    index, piece = data.get("output_index"), data.get("delta")
    return [(index, piece)] if type(index) is int and isinstance(piece, str) else []
