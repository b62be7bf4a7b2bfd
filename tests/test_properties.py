"""Properties of the adapter on generated builder streams, clean and randomly broken.

Streams are built with `StreamBuilder`: text, thinking, tool and server-tool blocks at
distinct indexes, their events interleaved in a random order, pings sprinkled in, the
tool JSON cut into random pieces; then, most of the time, broken by a catalogue fault or
a random mutation (an event dropped, repeated, moved, the stream cut, a stop reason
changed). Every run is deterministic (`derandomize`, no example database); the tests
together generate 5,600 streams, the adapter's each read by both drivers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness import (
    ERROR_TABLE,
    DoneEvent,
    ModelEvent,
    StreamProtocolError,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    ato_model_events,
    replay_outcome,
    to_model_events,
    write_cassette,
)
from harness.builder import StreamBuilder
from harness.faults import CATALOGUE, fault_named

#: thousands of generated streams: left out of the inner loop (`-m 'not slow'`)
pytestmark = pytest.mark.slow

Events = list[dict[str, Any]]


def _settings(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


#: Examples per test; the sum is the number of streams a CI run generates. (A test of its
#: own for the drivers, derandomized alike, generated the same streams again.)
EXAMPLES = {"properties": 5200, "wire": 400}

# -- strategies ---------------------------------------------------------------------------------

SCALARS = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8)
#: Two levels of nesting: the adapter only parses, so depth adds cost and no new case.
JSON_VALUES = (
    SCALARS
    | st.lists(SCALARS, max_size=3)
    | st.dictionaries(st.text(max_size=4), SCALARS, max_size=2)
)
TOOL_INPUTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3)
TOOL_NAMES = st.sampled_from(["read", "write", "search", "list_dir"])


@dataclass(slots=True)
class Generated:
    """A generated stream, and what a clean one must replay to."""

    events: Events
    broken: str | None = None
    calls_in_stop_order: list[ToolCall] = field(default_factory=list)
    text: str = ""


@st.composite
def _block(draw: st.DrawFn, index: int, rng: Random) -> tuple[StreamBuilder, ToolCall | None]:
    """One whole block at `index`, built apart, and its tool call if it is a tool block."""
    block = StreamBuilder(start=False)
    kind = draw(st.sampled_from(["tool", "text", "tool", "text", "thinking", "server_tool"]))
    if kind == "text":
        return block.text(index, *draw(st.lists(st.text(max_size=10), max_size=4))), None
    if kind == "thinking":
        return block.thinking(index, *draw(st.lists(st.text(max_size=10), max_size=3))), None
    if kind == "server_tool":
        block.tool_start(index, "web_search", kind="server_tool_use")
        for piece in draw(st.lists(st.text(max_size=6), max_size=3)):
            block.json_delta(index, piece)
        return block.block_stop(index), None
    call = ToolCall(f"toolu_{index:02d}", draw(TOOL_NAMES), draw(TOOL_INPUTS))
    if not call.input and rng.random() < 0.5:  # zero-argument tool: only the empty delta
        block.tool_start(index, call.name, id=call.id).json_delta(index, "").block_stop(index)
    else:
        text = json.dumps(call.input, ensure_ascii=rng.random() < 0.5)
        cuts = [rng.randint(0, len(text)) for _ in range(rng.randint(0, 6))]
        block.tool(index, call.name, call.input, pieces=cuts, id=call.id)
    return block, call


@st.composite
def clean_streams(draw: st.DrawFn) -> Generated:
    """A stream that must complete: blocks interleaved at random, consistent stop reason.

    The indexes, the interleaving, the JSON cuts and the pings come from one seeded
    `Random`: drawing each of them through Hypothesis would cost several times more.
    """
    rng = draw(st.randoms(use_true_random=True))
    blocks, calls = [], {}
    for index in sorted(rng.sample(range(10), draw(st.integers(1, 5)))):
        block, call = draw(_block(index, rng))
        blocks.append(block)
        if call is not None:
            calls[index] = call
    order = [position for position, block in enumerate(blocks) for _ in block.events()]
    rng.shuffle(order)
    builder = StreamBuilder().interleave(blocks, order)
    events = builder.stop("tool_use" if calls else "end_turn").events()
    for _ in range(rng.randint(0, 3)):
        events.insert(rng.randint(0, len(events)), {"type": "ping"})
    stops = [e["index"] for e in events if e["type"] == "content_block_stop"]
    return Generated(
        events=events,
        calls_in_stop_order=[calls[index] for index in stops if index in calls],
        text=_text_in_event_order(events),
    )


def _text_in_event_order(events: Events) -> str:
    return "".join(
        event["delta"]["text"]
        for event in events
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta"
    )


MUTATIONS = ["drop", "repeat", "move", "cut", "stop_reason", "orphan"]
STOP_REASONS = [None, "end_turn", "tool_use", "max_tokens", "pause_turn", "refusal", "other"]


@st.composite
def broken_streams(draw: st.DrawFn) -> Generated:
    """A clean stream, then (four times in five) a catalogue fault or a random mutation.

    Faults whose outcome is an API error are left out: the SDK raises those before the
    adapter sees anything (the wire test adds them, replayed through the SDK); so are the
    HTTP-level and wire-level rows, whose directives only a client acts on.
    """
    stream = draw(clean_streams())
    events = stream.events
    how = draw(st.sampled_from(["mutation", "fault", "mutation", "fault", "clean"]))
    if how == "clean":
        return stream
    if how == "fault":
        faults = [f for f in CATALOGUE if not f.expect.startswith("api_error") and not f.wire]
        fault = draw(st.sampled_from(faults))
        derived = fault.derive(events)
        return Generated(derived, fault.name) if derived is not None else stream
    mutation = draw(st.sampled_from(MUTATIONS))
    rng = draw(st.randoms(use_true_random=True))  # positions: uniform, not biased to 0
    at = rng.randrange(len(events))
    broken = list(events)
    if mutation == "drop":
        del broken[at]
    elif mutation == "repeat":
        broken.insert(at, broken[at])
    elif mutation == "move":
        broken.insert(rng.randrange(len(broken)), broken.pop(at))
    elif mutation == "cut":
        broken = broken[: max(1, at)]
    elif mutation == "stop_reason":
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": draw(st.sampled_from(STOP_REASONS))},
        }
        broken.insert(at, delta)
    else:
        partial = draw(st.text(max_size=6))
        delta = {"type": "input_json_delta", "partial_json": partial}
        broken.insert(
            at, {"type": "content_block_delta", "index": rng.randint(0, 12), "delta": delta}
        )
    return Generated(broken, f"{mutation}@{at}")


# -- drivers ----------------------------------------------------------------------------------


def _sdk_objects(events: Events) -> list[Any]:
    """The SDK's event objects for the raw events, as its stream yields them (pings skipped)."""
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent

    return [
        construct_type(type_=RawMessageStreamEvent, value=event)
        for event in events
        if event["type"] != "ping"
    ]


@dataclass(slots=True)
class Run:
    """What a driver gave: the events, then the protocol error (code and message) if any."""

    events: list[ModelEvent] = field(default_factory=list)
    code: str | None = None
    message: str | None = None


def _run_sync(objects: Iterable[Any]) -> Run:
    run = Run()
    try:
        for event in to_model_events(objects):
            run.events.append(event)
    except StreamProtocolError as error:
        run.code, run.message = error.code, str(error)
    return run


async def _run_async(objects: list[Any]) -> Run:
    async def source() -> AsyncIterator[Any]:
        for item in objects:
            yield item

    run = Run()
    try:
        async for event in ato_model_events(source()):
            run.events.append(event)
    except StreamProtocolError as error:
        run.code, run.message = error.code, str(error)
    return run


def _own_deltas_input(events: Events, call: ToolCall) -> object:
    """The input the call's own block carries: its index's deltas between its start and stop."""
    start = next(
        position
        for position, event in enumerate(events)
        if event["type"] == "content_block_start" and event["content_block"].get("id") == call.id
    )
    index, text = events[start]["index"], ""
    for event in events[start + 1 :]:
        if event.get("index") != index:
            continue
        if event["type"] == "content_block_stop":
            break
        if event["type"] == "content_block_delta":
            text += event["delta"]["partial_json"]
    return json.loads(text) if text else events[start]["content_block"]["input"]


# -- properties ---------------------------------------------------------------------------------


@_settings(EXAMPLES["properties"])
@given(broken_streams())
def test_adapter_yields_only_its_events_or_a_known_protocol_error(stream: Generated) -> None:
    objects = _sdk_objects(stream.events)
    run = _run_sync(objects)
    assert asyncio.run(_run_async(objects)) == run  # the sync and async drivers agree
    assert all(isinstance(e, TextEvent | ToolCallEvent | DoneEvent) for e in run.events)
    assert run.code is None or run.code in ERROR_TABLE
    dones = [position for position, e in enumerate(run.events) if isinstance(e, DoneEvent)]
    assert dones == ([len(run.events) - 1] if run.code is None else [])
    for event in run.events:
        if isinstance(event, ToolCallEvent):
            assert event.call.input == _own_deltas_input(stream.events, event.call)
    if stream.broken is None:
        assert run.code is None, run.message
        assert [e.call for e in run.events if isinstance(e, ToolCallEvent)] == (
            stream.calls_in_stop_order
        )
        assert "".join(e.text for e in run.events if isinstance(e, TextEvent)) == stream.text


def _overloaded(stream: Generated) -> Generated:
    derived = fault_named("overloaded_mid_stream").derive(stream.events)
    return Generated(derived, "overloaded_mid_stream") if derived is not None else stream


@_settings(EXAMPLES["wire"])
@given(broken_streams() | clean_streams().map(_overloaded), st.integers(0, 2**16))
def test_the_sdk_wire_path_agrees_with_direct_replay(stream: Generated, seed: int) -> None:
    from harness import Chunking, outcome_via_sdk

    with TemporaryDirectory() as folder:
        path = Path(folder) / "stream.jsonl"
        write_cassette(path, stream.events)
        direct = replay_outcome(path)
        wire = outcome_via_sdk(path, Chunking(seed=seed))
    assert wire.events == direct.events
    assert str(wire.error) == str(direct.error)
    assert type(wire.error) is type(direct.error)
