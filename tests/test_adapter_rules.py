"""The adapter's rules (docs/adapter.md), one test each, fed the SDK's own event objects."""

from __future__ import annotations

import json
import traceback
from typing import Any

import pytest
from anthropic._models import construct_type
from anthropic.types import RawMessageStreamEvent
from conftest import library_streams
from hypothesis import given, settings, strategies as st

from harness import (
    DoneEvent,
    ModelEvent,
    StreamAdapter,
    StreamProtocolError,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    to_model_events,
)
from harness._strict.guard import TEXT_DELTA
from harness._views import EventView
from harness.builder import StreamBuilder, split_json

PREFIX = "Anthropic stream protocol error: "


def sdk(builder: StreamBuilder) -> list[Any]:
    """The builder's raw events as the SDK's stream constructs them (`construct_type`)."""
    return [construct_type(type_=RawMessageStreamEvent, value=raw) for raw in builder.events()]


def adapt(builder: StreamBuilder) -> list[ModelEvent]:
    return list(to_model_events(sdk(builder)))


def failure(builder: StreamBuilder) -> tuple[list[ModelEvent], StreamProtocolError]:
    """The events yielded before the stream failed, and the error it failed with."""
    yielded: list[ModelEvent] = []
    with pytest.raises(StreamProtocolError) as caught:
        for event in to_model_events(sdk(builder)):
            yielded.append(event)
    return yielded, caught.value


def call(id: str, name: str, **input: Any) -> ToolCallEvent:
    return ToolCallEvent(ToolCall(id, name, input))


# -- rule 1: message_start first ----------------------------------------------------------


def test_first_event_must_be_message_start() -> None:
    events, error = failure(StreamBuilder(start=False).text(0, "Hi").stop())
    assert events == []
    assert error.code == "missing_message_start"
    assert str(error) == PREFIX + "stream began with content_block_start instead of message_start"


def test_pings_before_message_start_are_allowed() -> None:
    builder = StreamBuilder(start=False).ping().ping().message_start().text(0, "Hi").stop()
    assert adapt(builder) == [TextEvent("Hi"), DoneEvent()]


def test_dispatch_is_on_type_string_not_sdk_class() -> None:
    # The SDK builds an unknown event type leniently as some other class
    # (a RawMessageStartEvent, today): only its `type` string may count.
    builder = StreamBuilder(start=False).raw({"type": "future_event"}).message_start().stop()
    _, error = failure(builder)
    assert str(error) == PREFIX + "stream began with future_event instead of message_start"


# -- rules 2 and 3: text ---------------------------------------------------------------------


def test_text_block_start_with_text_yields_it() -> None:
    builder = StreamBuilder().block_start(0, {"type": "text", "text": "Hello"}).block_stop(0)
    assert adapt(builder.stop()) == [TextEvent("Hello"), DoneEvent()]


def test_text_block_start_with_empty_text_yields_nothing() -> None:
    builder = StreamBuilder().block_start(0, {"type": "text", "text": ""}).block_stop(0)
    assert adapt(builder.stop()) == [DoneEvent()]


def test_each_text_delta_yields_exactly_its_text() -> None:
    builder = StreamBuilder().text(0, "Line one\n", "  indented", "", " é")
    assert adapt(builder.stop()) == [
        TextEvent("Line one\n"),
        TextEvent("  indented"),
        TextEvent(""),
        TextEvent(" é"),
        DoneEvent(),
    ]


# -- rules 4, 5 and 6: tool blocks ----------------------------------------------------------


def test_json_deltas_yield_nothing_until_the_stop() -> None:
    adapter = StreamAdapter()
    events = sdk(StreamBuilder().tool(0, "read", {"path": "a.md"}, pieces=3, id="t0"))
    *before_stop, stop = events
    assert [adapter.feed(event) for event in before_stop] == [[], [], [], [], [], []]
    assert adapter.feed(stop) == [call("t0", "read", path="a.md")]


def test_tool_calls_follow_stop_order_not_start_order() -> None:
    builder = (
        StreamBuilder()
        .tool_start(1, "read", id="first_started")
        .tool_start(3, "read", id="first_stopped")
        .json_delta(1, '{"path": "a.md"}')
        .json_delta(3, '{"path": "b.md"}')
        .block_stop(3)
        .block_stop(1)
        .stop("tool_use")
    )
    assert adapt(builder) == [
        call("first_stopped", "read", path="b.md"),
        call("first_started", "read", path="a.md"),
        DoneEvent(),
    ]


def test_each_tool_input_is_built_from_its_own_index_deltas() -> None:
    builder = (
        StreamBuilder()
        .tool_start(1, "read", id="one")
        .tool_start(3, "grep", id="three")
        .json_delta(3, '{"pattern"')
        .json_delta(1, '{"path": ')
        .json_delta(3, ': "TODO"}')
        .json_delta(1, '"a.md"}')
        .block_stop(1)
        .block_stop(3)
        .stop("tool_use")
    )
    assert adapt(builder) == [
        call("one", "read", path="a.md"),
        call("three", "grep", pattern="TODO"),
        DoneEvent(),
    ]


@pytest.mark.parametrize("index", [[1], {"block": 1}], ids=["list", "object"])
def test_an_index_no_dict_can_key_is_read_by_its_json_text(index: Any) -> None:
    """A broken server's index of a list or an object: the SDK builds it as it came, and the
    rules read it as any other index, never with a bare TypeError (docs/adapter.md)."""
    good = StreamBuilder().tool_start(9, "read", id="t").json_delta(9, '{"path": "a"}')
    lines = good.block_stop(9).stop("tool_use").events()
    for line in lines:
        if line.get("index") == 9:
            line["index"] = json.loads(json.dumps(index))  # equal, not the same object
    events = [construct_type(type_=RawMessageStreamEvent, value=line) for line in lines]
    assert list(to_model_events(events)) == [call("t", "read", path="a"), DoneEvent()]
    adapter = StreamAdapter()
    adapter.feed(lines[0])
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed({**lines[2], "index": [[1]]})
    assert str(caught.value) == (
        PREFIX + "input_json_delta arrived without an open tool_use block at index [[1]]"
    )


def test_start_input_stands_when_deltas_are_empty() -> None:
    builder = (
        StreamBuilder()
        .tool_start(0, "locate", id="t0", input={"near": "here"})
        .json_delta(0, "")
        .json_delta(0, "")
        .block_stop(0)
        .stop("tool_use")
    )
    assert adapt(builder) == [call("t0", "locate", near="here"), DoneEvent()]


def test_start_input_stands_when_no_delta_arrives() -> None:
    builder = StreamBuilder().tool_start(0, "list_files", id="t0").block_stop(0).stop("tool_use")
    assert adapt(builder) == [call("t0", "list_files"), DoneEvent()]


def test_deltas_replace_start_input() -> None:
    builder = (
        StreamBuilder()
        .tool_start(0, "read", id="t0", input={"path": "from-start"})
        .json_delta(0, '{"path": "from-deltas"}')
        .block_stop(0)
        .stop("tool_use")
    )
    assert adapt(builder) == [call("t0", "read", path="from-deltas"), DoneEvent()]


def test_second_start_of_an_open_tool_block_is_duplicate_tool_start() -> None:
    builder = StreamBuilder().tool_start(2, "read").tool_start(2, "read")
    _, error = failure(builder)
    assert (error.code, str(error)) == (
        "duplicate_tool_start",
        PREFIX + "duplicate tool_use start for block 2",
    )


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(StreamBuilder(), id="never-opened"),
        pytest.param(StreamBuilder().tool(4, "read", {"path": "a"}), id="already-stopped"),
        pytest.param(StreamBuilder().block_start(4, {"type": "text", "text": ""}), id="text-block"),
    ],
)
def test_json_delta_without_an_open_tool_block_is_orphan(where: StreamBuilder) -> None:
    _, error = failure(where.json_delta(4, "{}"))
    assert error.code == "orphan_json_delta"
    assert (
        str(error) == PREFIX + "input_json_delta arrived without an open tool_use block at index 4"
    )


@pytest.mark.parametrize("kind", ["server_tool_use", "mcp_tool_use", "future_tool_use"])
def test_server_tool_use_deltas_are_passed_over(kind: str) -> None:
    builder = (
        StreamBuilder()
        .tool_start(0, "web_search", id="srv", kind=kind)
        .json_delta(0, '{"query": "x"}')
        .block_stop(0)
        .text(1, "Found it.")
        .stop("end_turn")
    )
    assert adapt(builder) == [TextEvent("Found it."), DoneEvent()]


def test_invalid_tool_json_is_raised_at_the_stop_not_at_a_delta() -> None:
    adapter = StreamAdapter()
    *before_stop, stop = sdk(
        StreamBuilder().tool_start(0, "read").json_delta(0, '{"path": ').block_stop(0)
    )
    assert [adapter.feed(event) for event in before_stop] == [[], [], []]
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed(stop)
    assert caught.value.code == "invalid_tool_json"


def test_invalid_tool_json_message() -> None:
    _, error = failure(StreamBuilder().tool_start(7, "read").json_delta(7, "{,}").block_stop(7))
    assert str(error) == PREFIX + "tool_use block 7 had invalid input_json_delta JSON"


def test_non_string_partial_json_is_invalid_tool_json() -> None:
    builder = StreamBuilder().tool_start(0, "read")
    builder.delta(0, {"type": "input_json_delta", "partial_json": None})
    _, error = failure(builder.block_stop(0))
    assert error.code == "invalid_tool_json"


@pytest.mark.parametrize(
    "text",
    ['{"n": NaN}', '{"n": Infinity}', '{"n": -Infinity}', '{"n": [1e400]}', '{"n": -1e999}'],
    ids=["NaN", "Infinity", "-Infinity", "overflow", "negative-overflow"],
)
def test_non_finite_numbers_are_invalid_tool_json_as_rfc_8259_says(text: str) -> None:
    _, error = failure(StreamBuilder().tool_start(0, "read").json_delta(0, text).block_stop(0))
    assert error.code == "invalid_tool_json"


@pytest.mark.parametrize(("depth", "valid"), [(254, True), (255, False), (3000, False)])
def test_tool_json_may_nest_254_levels(depth: int, valid: bool) -> None:
    text = '{"a": ' * depth + "1" + "}" * depth
    builder = StreamBuilder().tool_start(0, "read").json_delta(0, text).block_stop(0)
    if valid:
        assert isinstance(adapt(builder.stop("tool_use"))[0], ToolCallEvent)
    else:
        assert failure(builder)[1].code == "invalid_tool_json"


def test_finite_numbers_and_lone_surrogates_stay_valid_tool_input() -> None:
    builder = StreamBuilder().tool_start(0, "read")
    builder.json_delta(0, '{"n": 1e308, "s": "\\ud800", "i": 123456789012345678901234567890}')
    events = adapt(builder.block_stop(0).stop("tool_use"))
    call = events[0]
    assert isinstance(call, ToolCallEvent)
    assert call.call.input == {"n": 1e308, "s": "\ud800", "i": 123456789012345678901234567890}


@pytest.mark.parametrize("text", ["null", "[1, 2]", '"a.md"', "42", "true"])
def test_tool_input_must_be_a_json_object(text: str) -> None:
    _, error = failure(StreamBuilder().tool_start(5, "read").json_delta(5, text).block_stop(5))
    assert error.code == "non_object_tool_input"
    assert str(error) == PREFIX + "tool_use block 5 returned non-object input"


def test_null_start_input_without_deltas_is_non_object() -> None:
    builder = StreamBuilder().block_start(
        0, {"type": "tool_use", "id": "t0", "name": "read", "input": None}
    )
    _, error = failure(builder.block_stop(0))
    assert error.code == "non_object_tool_input"


def test_text_block_stop_closes_nothing() -> None:
    builder = (
        StreamBuilder()
        .tool_start(1, "read", id="t1")
        .block_start(0, {"type": "text", "text": ""})
        .block_stop(0)
        .block_stop(9)  # never opened: also closes nothing
        .json_delta(1, '{"path": "a.md"}')
        .block_stop(1)
        .stop("tool_use")
    )
    assert adapt(builder) == [call("t1", "read", path="a.md"), DoneEvent()]


# -- rule 7: stop reason ---------------------------------------------------------------------


def test_last_stop_reason_counts() -> None:
    builder = StreamBuilder().text(0, "Hi").message_delta("tool_use").message_delta("end_turn")
    assert adapt(builder.message_stop()) == [TextEvent("Hi"), DoneEvent()]


def test_a_later_null_stop_reason_replaces_an_earlier_one() -> None:
    builder = StreamBuilder().text(0, "Hi").message_delta("end_turn").message_delta(None)
    _, error = failure(builder.message_stop())
    assert error.code == "missing_stop_reason"


# -- rule 8: message_stop --------------------------------------------------------------------


def test_open_tool_blocks_at_message_stop_are_unclosed_in_opening_order() -> None:
    builder = StreamBuilder().tool_start(3, "read").tool_start(1, "read").message_stop()
    adapter = StreamAdapter()
    *before, message_stop = sdk(builder)
    for event in before:
        adapter.feed(event)
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed(message_stop)
    assert str(caught.value) == PREFIX + "stream ended with unclosed tool_use block(s): 3, 1"


def test_event_after_message_stop_is_an_error_but_ping_is_not() -> None:
    builder = StreamBuilder().text(0, "Hi").stop().ping().message_delta("end_turn")
    events, error = failure(builder)
    assert events == [TextEvent("Hi")]
    assert str(error) == PREFIX + "message_delta arrived after message_stop"


# -- rule 9: what yields nothing -------------------------------------------------------------


def test_thinking_and_redacted_thinking_blocks_yield_nothing() -> None:
    builder = (
        StreamBuilder()
        .ping()
        .thinking(0, "Let me think", " hard.")
        .block_start(1, {"type": "redacted_thinking", "data": "abc"})
        .block_stop(1)
        .stop("end_turn")
    )
    assert adapt(builder) == [DoneEvent()]


def test_citations_delta_and_unknown_delta_kinds_yield_nothing() -> None:
    builder = (
        StreamBuilder()
        .block_start(0, {"type": "text", "text": ""})
        .delta(0, {"type": "citations_delta", "citation": {"type": "char_location"}})
        .delta(0, {"type": "future_delta", "x": 1})
        .text_delta(0, "Cited.")
        .block_stop(0)
        .stop("end_turn")
    )
    assert adapt(builder) == [TextEvent("Cited."), DoneEvent()]


def test_second_message_start_yields_nothing() -> None:
    builder = StreamBuilder().text(0, "Hi").message_start().stop()
    assert adapt(builder) == [TextEvent("Hi"), DoneEvent()]


# -- rule 10: the end of the input -----------------------------------------------------------


@pytest.mark.parametrize(
    ("builder", "code"),
    [
        pytest.param(
            StreamBuilder().tool_start(0, "read"), "unclosed_tool_blocks", id="tools-first"
        ),
        pytest.param(StreamBuilder().text(0, "Hi"), "missing_message_stop", id="then-message-stop"),
        pytest.param(StreamBuilder().message_stop(), "missing_stop_reason", id="then-stop-reason"),
    ],
)
def test_end_checks_run_in_order(builder: StreamBuilder, code: str) -> None:
    _, error = failure(builder)
    assert error.code == code


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("max_tokens", "stop_reason max_tokens is not supported"),
        ("pause_turn", "stop_reason pause_turn is not supported"),
        ("refusal", "stop_reason refusal is not supported"),
        ("stop_sequence", "stop_reason stop_sequence is not supported"),
        (
            "model_context_window_exceeded",
            "stop_reason model_context_window_exceeded is not supported",
        ),
        ("something_new", "stop_reason something_new is not supported"),
    ],
)
def test_stop_reason_must_be_end_turn_or_tool_use(reason: str, message: str) -> None:
    _, error = failure(StreamBuilder().text(0, "Hi").stop(reason))
    assert (error.code, str(error)) == ("unsupported_stop_reason", PREFIX + message)


def test_end_turn_must_come_without_tool_calls() -> None:
    builder = StreamBuilder().tool(0, "a", {}).tool(1, "b", {}).tool(2, "c", {}).stop("end_turn")
    events, error = failure(builder)
    assert len(events) == 3
    assert str(error) == PREFIX + "stop_reason end_turn arrived with 3 tool call(s)"


def test_tool_use_must_come_with_a_tool_call() -> None:
    _, error = failure(StreamBuilder().text(0, "Hi").stop("tool_use"))
    assert str(error) == PREFIX + "stop_reason tool_use arrived without a tool call"


def test_done_is_yielded_last_and_only_at_the_end() -> None:
    adapter = StreamAdapter()
    fed = [
        event
        for raw in sdk(StreamBuilder().text(0, "a", "b").stop())
        for event in adapter.feed(raw)
    ]
    assert DoneEvent() not in fed
    assert adapter.finish() == [DoneEvent()]


# -- errors: what was yielded stays, nothing after, the machine stays failed -------------------


def test_events_before_an_error_stay_yielded_and_nothing_after() -> None:
    builder = (
        StreamBuilder()
        .text(0, "Before")
        .json_delta(1, "{}")  # orphan
        .text(2, "After")
        .stop("end_turn")
    )
    events, error = failure(builder)
    assert events == [TextEvent("Before")]
    assert error.code == "orphan_json_delta"


def test_machine_stays_failed_after_an_error() -> None:
    adapter = StreamAdapter()
    first, orphan, *rest = sdk(StreamBuilder().json_delta(0, "{}").text(1, "Hi").stop())
    adapter.feed(first)
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed(orphan)
    for event in rest:
        with pytest.raises(StreamProtocolError) as again:
            adapter.feed(event)
        assert again.value is not caught.value
        assert again.value.__cause__ is caught.value
        assert str(again.value) == str(caught.value)
    with pytest.raises(StreamProtocolError) as at_finish:
        adapter.finish()
    assert at_finish.value.__cause__ is caught.value
    assert at_finish.value.code == caught.value.code


def test_a_failed_machine_raises_errors_whose_tracebacks_do_not_grow() -> None:
    adapter = StreamAdapter()
    first, orphan, *_ = sdk(StreamBuilder().json_delta(0, "{}").text(1, "Hi").stop())
    adapter.feed(first)
    with pytest.raises(StreamProtocolError):
        adapter.feed(orphan)
    depths = []
    for _ in range(3):
        with pytest.raises(StreamProtocolError) as again:
            adapter.finish()
        depths.append(len(traceback.extract_tb(again.value.__traceback__)))
    assert depths[0] == depths[1] == depths[2]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(deadline=None)  # a slow machine must not fail a correct adapter
@given(
    tool_input=st.dictionaries(st.text(), JSON_VALUES, max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
    ensure_ascii=st.booleans(),
)
@pytest.mark.slow
def test_any_split_of_the_input_json_gives_the_same_call(
    tool_input: dict[str, Any], cuts: list[int], ensure_ascii: bool
) -> None:
    text = json.dumps(tool_input, ensure_ascii=ensure_ascii)
    offsets = sorted({cut for cut in cuts if cut <= len(text)})
    builder = StreamBuilder().tool_start(0, "any", id="t0").json_delta(0, "")
    for piece in split_json(text, offsets):
        builder.json_delta(0, piece)
    assert adapt(builder.block_stop(0).stop("tool_use")) == [
        ToolCallEvent(ToolCall("t0", "any", tool_input)),
        DoneEvent(),
    ]


def _is_text_delta(raw: dict[str, Any]) -> bool:
    delta = raw.get("delta")
    return (
        raw.get("type") == "content_block_delta"
        and isinstance(delta, dict)
        and delta.get("type") == "text_delta"
    )


def _checked(
    events: list[dict[str, Any]], adapter: StreamAdapter, *, stand_in: bool = False
) -> tuple[list[ModelEvent], Any]:
    """What an adapter yields over light views of `events`, and the error code it stops at;
    `stand_in`: each text delta fed as the guard feeds the ones it tells (`TEXT_DELTA`)."""
    yielded: list[ModelEvent] = []
    try:
        for raw in events:
            view = TEXT_DELTA if stand_in and _is_text_delta(raw) else EventView(raw)
            yielded += adapter.feed(view)
        yielded += adapter.finish()
    except StreamProtocolError as error:
        return yielded, error.code
    return yielded, None


@pytest.mark.parametrize("events", library_streams())
def test_text_false_checks_the_same_rules_and_builds_no_text(events: list[dict[str, Any]]) -> None:
    """The guard's adapter (`text=False`): every library stream and fault variant ends as
    the full adapter's does, with the same events but the text ones."""
    full, code = _checked(events, StreamAdapter())
    checked, checked_code = _checked(events, StreamAdapter(text=False))
    assert checked_code == code
    assert checked == [event for event in full if not isinstance(event, TextEvent)]
    assert _checked(events, StreamAdapter(text=False), stand_in=True) == (checked, code)


@pytest.mark.parametrize(
    "builder",
    [
        StreamBuilder(start=False).text_delta(0, "before the start"),
        StreamBuilder().text_delta(0, "at a block never started").stop("end_turn"),
        StreamBuilder().stop("end_turn").text_delta(0, "after the stop"),
        StreamBuilder().json_delta(5, "{").text_delta(0, "after an error"),
    ],
    ids=["before-start", "no-block", "after-stop", "after-error"],
)
def test_the_guard_stand_in_for_a_text_delta_meets_the_same_rules(
    builder: StreamBuilder,
) -> None:
    """`TEXT_DELTA`, what the guard feeds for each text delta it tells, reads as the whole
    event does to the guard's adapter, wherever in the stream it falls."""
    events = builder.events()
    expected = _checked(events, StreamAdapter(text=False))
    assert _checked(events, StreamAdapter(text=False), stand_in=True) == expected


def test_text_false_drops_text_events_only() -> None:
    builder = (
        StreamBuilder()
        .block_start(0, {"type": "text", "text": "Hello"})
        .text_delta(0, " there")
        .block_stop(0)
        .tool_start(1, "read", id="t1")
        .json_delta(1, '{"path": "a.md"}')
        .block_stop(1)
        .stop("tool_use")
    )
    kinds = [type(event) for event in _checked(builder.events(), StreamAdapter())[0]]
    assert kinds == [TextEvent, TextEvent, ToolCallEvent, DoneEvent]
    checked, code = _checked(builder.events(), StreamAdapter(text=False))
    assert (checked, code) == ([call("t1", "read", path="a.md"), DoneEvent()], None)
