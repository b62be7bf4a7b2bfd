"""Light views of raw stream events: what the adapter reads, over the parsed JSON object.

The adapter reads a handful of attributes of each raw event (`type`, `index`, `delta`,
`content_block`, and of those `type`, `text`, `partial_json`, `stop_reason`, `id`,
`name`, `input`). The SDK's event objects have them, at a cost: `import anthropic` and
pydantic's models. Where no SDK object reaches user code (`harness replay`, `coverage`,
`faults`, `diff`), replay feeds the adapter these views instead, so one set of rules
serves both. A view reads what the SDK's object would hold for the same line:
- a field the line lacks reads as None (the SDK's lenient construction leaves None);
- any other value reads as the line has it (a number where text belongs stays a
  number), nested objects (`input`, `message`) as the line's own dicts;
- `index` reads as an int (the schema's integer admits `1.0`; the SDK makes it 1);
- a `delta` or `content_block` that is not an object (which the schema refuses in a
  cassette, and a server may send to the guard) reads as an empty one, its fields None.
`tests/test_views.py` checks that the adapter gives the same outcome over views and over
the SDK's objects on every library cassette and every fault variant.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EventView", "PartView"]


def _index(value: Any) -> Any:
    return int(value) if type(value) is float and value.is_integer() else value


class PartView:
    """A `delta` or a `content_block` of a raw event, as the adapter reads it."""

    __slots__ = ("_data", "type")

    def __init__(self, data: Any) -> None:
        if type(data) is not dict:  # missing, or what a server should not have sent
            data = {}
        self._data: dict[str, Any] = data
        #: read at once: the adapter reads every part's type (a property costs a call more)
        self.type: Any = data.get("type")

    @property
    def text(self) -> Any:
        return self._data.get("text")

    @property
    def partial_json(self) -> Any:
        return self._data.get("partial_json")

    @property
    def stop_reason(self) -> Any:
        return self._data.get("stop_reason")

    @property
    def id(self) -> Any:
        return self._data.get("id")

    @property
    def name(self) -> Any:
        return self._data.get("name")

    @property
    def input(self) -> Any:
        return self._data.get("input")

    def __repr__(self) -> str:
        return f"PartView({self._data!r})"


class EventView:
    """One raw stream event (a cassette line's object), read as the SDK's object would be."""

    __slots__ = ("_data", "delta", "type")

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data
        #: read at once: the adapter reads every event's type, and almost every event is
        #: a delta (a property costs a call more)
        self.type: Any = data.get("type")
        self.delta = PartView(data.get("delta"))

    @property
    def data(self) -> dict[str, Any]:
        """The line's own object."""
        return self._data

    @property
    def index(self) -> Any:
        return _index(self._data.get("index"))

    @property
    def content_block(self) -> PartView:
        return PartView(self._data.get("content_block"))

    @property
    def message(self) -> Any:
        return self._data.get("message")

    def __repr__(self) -> str:
        return f"EventView({self._data!r})"
