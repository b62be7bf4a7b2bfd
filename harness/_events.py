"""The three internal events the adapter emits, their JSON form, and `text_event`: a
`TextEvent` built at two thirds of its constructor's cost, for the adapters' hot paths.

Nothing outside the adapter sees an SDK event name: an agent loop consumes only these.
Each kind stands for something the consumer can act on at once: `text` can be shown,
`tool_call` is a complete, executable call, `done` means the provider closed cleanly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, TypeAlias

import orjson

from harness._exceptions import ANTHROPIC, StreamProtocolError


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete tool call: its input was parsed once, at the block's stop."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TextEvent:
    """A piece of assistant text, exactly as the provider sent it."""

    text: str
    type: ClassVar[Literal["text"]] = "text"


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """A tool call whose block has stopped and whose input is a JSON object."""

    call: ToolCall
    type: ClassVar[Literal["tool_call"]] = "tool_call"


@dataclass(frozen=True, slots=True)
class DoneEvent:
    """The provider closed the stream cleanly; whether the answer is usable is the loop's call."""

    type: ClassVar[Literal["done"]] = "done"


#: `text_event`'s two steps, for a loop that cannot afford even its call (an adapter's
#: text delta, almost every event): `new_event(TextEvent)` makes the object, then
#: `set_text(event, text)` sets its slot with the slot's own setter
new_event: Final = object.__new__
set_text: Final[Callable[[TextEvent, str], None]] = TextEvent.__dict__["text"].__set__


def text_event(text: str) -> TextEvent:
    """`TextEvent(text)` at about two thirds of the cost: the same object (equal, frozen,
    the same repr and pickle), its slot set by the slot's own setter rather than by the
    frozen `__init__`, which goes through `object.__setattr__`."""
    event = new_event(TextEvent)
    set_text(event, text)
    return event


ModelEvent: TypeAlias = TextEvent | ToolCallEvent | DoneEvent


def event_to_json(event: ModelEvent) -> dict[str, Any]:
    """The JSON form of an event (replay output, snapshots)."""
    if isinstance(event, TextEvent):
        return {"type": "text", "text": event.text}
    if isinstance(event, ToolCallEvent):
        call = event.call
        return {
            "type": "tool_call",
            "call": {"id": call.id, "name": call.name, "input": call.input},
        }
    return {"type": "done"}


class UnhashableIndex:
    """A content-block index no dict can key (a JSON array or object, as a broken server
    may send): `block_key` keys the block by this instead, so that the adapters' rules read
    it as any other index, and never raise a bare `TypeError`. Two are the same index when
    their JSON texts are equal; one that cannot be written as JSON (nested deeper than
    orjson writes) is the same as no other. It shows as its JSON text, cut at 60
    characters, in an error's message."""

    __slots__ = ("_text", "value")

    def __init__(self, value: object) -> None:
        self.value = value
        try:
            self._text: str | None = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        except orjson.JSONEncodeError:
            self._text = None

    def __eq__(self, other: object) -> bool:
        if self._text is None or type(other) is not UnhashableIndex:
            return self is other
        return self._text == other._text

    def __hash__(self) -> int:
        return id(self) if self._text is None else hash(self._text)

    def __repr__(self) -> str:
        if self._text is None:
            return f"a {type(self.value).__name__} nested too deep to show"
        return self._text if len(self._text) <= 60 else f"{self._text[:59]}…"

    __str__ = __repr__


def block_key(index: object) -> Any:
    """`index` itself where a dict can key it, else its `UnhashableIndex`."""
    try:
        hash(index)
    except TypeError:
        return UnhashableIndex(index)
    return index


def tool_input(value: object, index: int, *, provider: str = ANTHROPIC) -> dict[str, Any]:
    """Structural check of a tool call's input: it must be a JSON object. Every provider's
    adapter makes it here (`non_object_tool_input` of its own table; N is `index`).

    Field checks (is `path` a string?) belong to the tool, not here.
    """
    if not isinstance(value, dict):
        raise StreamProtocolError("non_object_tool_input", provider=provider, index=index)
    return value
