"""stream-harness: a strict adapter for Anthropic stream events, and a record/replay harness.

`import harness` is cheap: names are loaded on first use, and the Anthropic SDK only when
something needs its objects (replay, record), never by this import.

The function `replay` is not re-exported here: `harness.replay` is its module, and Python
sets that attribute to the module once it is imported, so `from harness import replay` would
give the function or the module depending on import order. Use `harness.replay.replay`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "TextEvent": "harness.events",
    "ToolCall": "harness.events",
    "ToolCallEvent": "harness.events",
    "DoneEvent": "harness.events",
    "ModelEvent": "harness.events",
    "to_model_events": "harness.adapter",
    "ato_model_events": "harness.adapter",
    "StreamAdapter": "harness.adapter",
    "StreamProtocolError": "harness.errors",
    "CassetteError": "harness.errors",
    "ERROR_TABLE": "harness.errors",
    "Cassette": "harness.cassette",
    "read_cassette": "harness.cassette",
    "write_cassette": "harness.cassette",
    "Outcome": "harness.replay",
    "areplay": "harness.replay",
    "replay_outcome": "harness.replay",
}

__all__ = [
    "ERROR_TABLE",
    "Cassette",
    "CassetteError",
    "DoneEvent",
    "ModelEvent",
    "Outcome",
    "StreamAdapter",
    "StreamProtocolError",
    "TextEvent",
    "ToolCall",
    "ToolCallEvent",
    "__version__",
    "areplay",
    "ato_model_events",
    "read_cassette",
    "replay_outcome",
    "to_model_events",
    "write_cassette",
]

if TYPE_CHECKING:
    from harness.adapter import StreamAdapter, ato_model_events, to_model_events
    from harness.cassette import Cassette, read_cassette, write_cassette
    from harness.errors import ERROR_TABLE, CassetteError, StreamProtocolError
    from harness.events import DoneEvent, ModelEvent, TextEvent, ToolCall, ToolCallEvent
    from harness.replay import Outcome, areplay, replay_outcome


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
