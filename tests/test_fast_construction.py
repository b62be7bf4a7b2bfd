"""The fast event builder gives objects equal to the SDK's own `construct_type`.

Equal means more than `==`: the same class at every level, the same field values in the
same order, the same fields set, extras and private state, so that code inspecting the
objects cannot tell replay from the SDK's own construction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pydantic
import pytest
from anthropic._models import construct_type
from anthropic.types import RawMessageStreamEvent
from conftest import LIBRARY, library_cassettes

from bench.synthetic import SHAPES, synthetic_events
from harness._providers.anthropic.construct import event_builder

SKIPPED = ("ping", "error")  # never built: replay skips `ping` and raises at `error`


def assert_same(ours: Any, theirs: Any, where: str = "event") -> None:
    """Deep identity of two SDK values: classes, fields, fields set, extras, private state."""
    assert type(ours) is type(theirs), where
    if isinstance(theirs, pydantic.BaseModel):
        assert ours.model_fields_set == theirs.model_fields_set, where
        assert ours.__pydantic_extra__ == theirs.__pydantic_extra__, where
        assert ours.__pydantic_private__ == theirs.__pydantic_private__, where
        assert list(vars(ours)) == list(vars(theirs)), where
        for name, value in vars(theirs).items():
            assert_same(vars(ours)[name], value, f"{where}.{name}")
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        for key, value in theirs.items():
            assert_same(ours[key], value, f"{where}[{key!r}]")
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs), where
        for position, (mine, value) in enumerate(zip(ours, theirs, strict=True)):
            assert_same(mine, value, f"{where}[{position}]")
    assert ours == theirs, where


def sdk_built(data: dict[str, Any]) -> Any:
    return construct_type(type_=RawMessageStreamEvent, value=data)


def event_lines(path: Path) -> list[dict[str, Any]]:
    lines = [orjson.loads(raw) for raw in path.read_bytes().splitlines() if raw.strip()]
    return [
        line
        for line in lines
        if isinstance(line, dict)
        and "cassette" not in line
        and "harness" not in line
        and line.get("type") not in SKIPPED
    ]


CASSETTE_FILES = library_cassettes()


def test_every_cassette_is_checked() -> None:
    assert len(CASSETTE_FILES) >= 10


@pytest.mark.parametrize(
    "path", CASSETTE_FILES, ids=[str(p.relative_to(LIBRARY)) for p in CASSETTE_FILES]
)
def test_every_event_of_every_cassette_equals_the_sdk_construction(path: Path) -> None:
    build = event_builder()
    lines = event_lines(path)
    assert lines
    for data in lines:
        assert_same(build(data), sdk_built(data))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_synthetic_benchmark_streams_build_equal_objects(shape: str) -> None:
    build = event_builder()
    for data in synthetic_events(shape, 60):
        assert_same(build(data), sdk_built(data))


def delta_event(delta: Any, index: Any = 0, **extra: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta, **extra}


ODD_EVENTS = {
    "unknown delta kind": delta_event({"type": "future_delta", "value": 1}),
    "unknown block kind": {
        "type": "content_block_start",
        "index": 2,
        "content_block": {"type": "future_block", "payload": [1, 2]},
    },
    "text delta with an extra field": delta_event({"type": "text_delta", "text": "a", "x": 1}),
    "text delta with null text": delta_event({"type": "text_delta", "text": None}),
    "text delta with a number": delta_event({"type": "text_delta", "text": 5}),
    "text delta without text": delta_event({"type": "text_delta"}),
    "json delta with null": delta_event({"type": "input_json_delta", "partial_json": None}),
    "json delta, unicode": delta_event({"type": "input_json_delta", "partial_json": '"\\u00e9'}),
    "boolean index": delta_event({"type": "text_delta", "text": "a"}, index=True),
    "float index": delta_event({"type": "text_delta", "text": "a"}, index=1.0),
    "string index": delta_event({"type": "text_delta", "text": "a"}, index="1"),
    "negative index": delta_event({"type": "text_delta", "text": "a"}, index=-1),
    "extra top-level field": delta_event({"type": "text_delta", "text": "a"}, extra=True),
    "delta not an object": delta_event("text_delta"),
    "delta type not a string": delta_event({"type": 7, "text": "a"}),
    "tool start with null input": {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": None},
    },
    "message delta with an odd stop reason": {
        "type": "message_delta",
        "delta": {"stop_reason": "future_reason", "stop_sequence": None},
        "usage": {"output_tokens": 3},
    },
    "message start without usage": {
        "type": "message_start",
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    },
    "stop without index": {"type": "content_block_stop"},
    "unknown event type": {"type": "future_event", "index": 0},
}


@pytest.mark.parametrize("data", list(ODD_EVENTS.values()), ids=list(ODD_EVENTS))
def test_odd_and_unknown_kinds_build_what_the_sdk_builds(data: dict[str, Any]) -> None:
    assert_same(event_builder()(data), sdk_built(data))
