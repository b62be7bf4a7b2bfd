"""The Responses adapter's rules (docs/openai-adapters.md), one test a table row, the
tolerated deviations and good streams, fed event dicts shaped on the real API."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from harness._events import DoneEvent, ModelEvent, TextEvent, ToolCall, ToolCallEvent
from harness._exceptions import APIErrorEvent, StreamProtocolError, error_pattern
from harness._providers.openai_responses.adapter import (
    ResponsesAdapter,
    ato_model_events,
    to_model_events,
)
from harness._providers.openai_responses.errors import ERROR_TABLE, PROVIDER
from harness._replay.direct import failure_code
from harness.builder import split_json

PREFIX = "OpenAI stream protocol error: "
RESPONSE_ID = "resp_68af4030592c81938ec0a5fbab4a3e9f"


def response(status: str = "in_progress", **extra: Any) -> dict[str, Any]:
    return {
        "id": extra.pop("id", RESPONSE_ID),
        "object": "response",
        "created_at": 1764644400,
        "status": status,
        "model": "gpt-5-mini-2025-08-07",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        **extra,
    }


def created() -> list[dict[str, Any]]:
    return [
        {"type": "response.created", "response": response()},
        {"type": "response.in_progress", "response": response()},
    ]


def completed(status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"type": "response.completed", "response": response(status, **extra)}


def message(index: int, *pieces: str, item_id: str = "msg_1") -> list[dict[str, Any]]:
    """A message item with one output_text part, streamed in `pieces`."""
    item = {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant"}
    part = {"type": "output_text", "text": "", "annotations": []}
    at = {"item_id": item_id, "output_index": index, "content_index": 0}
    full = "".join(pieces)
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "content": []},
        },
        {"type": "response.content_part.added", **at, "part": part},
        *(
            {"type": "response.output_text.delta", **at, "delta": piece, "logprobs": []}
            for piece in pieces
        ),
        {"type": "response.output_text.done", **at, "text": full, "logprobs": []},
        {"type": "response.content_part.done", **at, "part": {**part, "text": full}},
        {
            "type": "response.output_item.done",
            "output_index": index,
            "item": {**item, "status": "completed", "content": [{**part, "text": full}]},
        },
    ]


def function_call(
    index: int,
    name: str,
    pieces: list[str],
    *,
    call_id: str = "call_1",
    final: str | None = None,
) -> list[dict[str, Any]]:
    item_id = f"fc_{index}"
    arguments = "".join(pieces) if final is None else final
    item = {"id": item_id, "type": "function_call", "call_id": call_id, "name": name}
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "arguments": "", "status": "in_progress"},
        },
        *(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": item_id,
                "output_index": index,
                "delta": piece,
            }
            for piece in pieces
        ),
        {
            "type": "response.function_call_arguments.done",
            "item_id": item_id,
            "output_index": index,
            "name": name,
            "arguments": "".join(pieces),
        },
        {
            "type": "response.output_item.done",
            "output_index": index,
            "item": {**item, "arguments": arguments, "status": "completed"},
        },
    ]


def reasoning(index: int) -> list[dict[str, Any]]:
    item = {"id": "rs_1", "type": "reasoning", "summary": []}
    at = {"item_id": "rs_1", "output_index": index, "summary_index": 0}
    return [
        {"type": "response.output_item.added", "output_index": index, "item": item},
        {
            "type": "response.reasoning_summary_part.added",
            **at,
            "part": {"type": "summary_text", "text": ""},
        },
        {"type": "response.reasoning_summary_text.delta", **at, "delta": "Thinking."},
        {"type": "response.reasoning_summary_text.done", **at, "text": "Thinking."},
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def web_search(index: int) -> list[dict[str, Any]]:
    item = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    at = {"item_id": "ws_1", "output_index": index}
    return [
        {"type": "response.output_item.added", "output_index": index, "item": item},
        {"type": "response.web_search_call.in_progress", **at},
        {"type": "response.web_search_call.searching", **at},
        {"type": "response.web_search_call.completed", **at},
        {
            "type": "response.output_item.done",
            "output_index": index,
            "item": {**item, "status": "completed", "action": {"type": "search", "query": "x"}},
        },
    ]


def numbered(events: list[dict[str, Any]], start: int = 0) -> list[dict[str, Any]]:
    """The events with their `sequence_number`s, from `start`, as the API numbers them."""
    return [{**event, "sequence_number": start + n} for n, event in enumerate(events)]


def stream(*parts: list[dict[str, Any]], end: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """A whole answer: created, the parts' events, then `end` or `response.completed`
    carrying the finished items, as the API's does."""
    events = [event for part in parts for event in part]
    if end is None:
        done = [event["item"] for event in events if event["type"] == "response.output_item.done"]
        end = completed(output=done)
    return numbered([*created(), *events, end])


def call(id: str, name: str, **input: Any) -> ToolCallEvent:
    return ToolCallEvent(ToolCall(id, name, input))


def adapt(events: list[Any], **options: Any) -> list[ModelEvent]:
    return list(to_model_events(events, **options))


def failure(events: list[Any], **options: Any) -> tuple[list[ModelEvent], StreamProtocolError]:
    """The events yielded before the stream failed, and the error it failed with."""
    yielded: list[ModelEvent] = []
    with pytest.raises(StreamProtocolError) as caught:
        for event in to_model_events(events, **options):
            yielded.append(event)
    assert caught.value.provider == PROVIDER
    assert str(caught.value).startswith(PREFIX)
    return yielded, caught.value


TEXT_STREAM = stream(message(0, "Hello", "! How can", " I help?"))
ONE_TOOL_STREAM = stream(function_call(0, "get_weather", ['{"location":', '"Paris"}']))
PARALLEL_TOOLS_STREAM = stream(
    function_call(0, "read", ['{"path": ', '"a.md"}'], call_id="call_a"),
    function_call(1, "grep", ['{"pattern": "TODO"}'], call_id="call_b"),
)
ZERO_ARGUMENT_STREAM = stream(function_call(0, "list_files", ["{}"], call_id="call_z"))
REASONING_STREAM = stream(reasoning(0), web_search(1), message(2, "Found it."))


# -- good streams -------------------------------------------------------------------------


def test_text_stream_yields_each_delta_and_done() -> None:
    assert adapt(TEXT_STREAM) == [
        TextEvent("Hello"),
        TextEvent("! How can"),
        TextEvent(" I help?"),
        DoneEvent(),
    ]


def test_a_call_is_yielded_at_its_output_item_done_with_call_id_as_its_id() -> None:
    adapter = ResponsesAdapter()
    *before, done, end = ONE_TOOL_STREAM
    assert [adapter.feed(event) for event in before] == [[]] * len(before)
    assert adapter.feed(done) == [call("call_1", "get_weather", location="Paris")]
    assert adapter.feed(end) == []
    assert adapter.finish() == [DoneEvent()]


def test_parallel_calls_are_yielded_each_at_its_own_done() -> None:
    assert adapt(PARALLEL_TOOLS_STREAM) == [
        call("call_a", "read", path="a.md"),
        call("call_b", "grep", pattern="TODO"),
        DoneEvent(),
    ]


def test_a_zero_argument_call_has_input_empty_object() -> None:
    assert adapt(ZERO_ARGUMENT_STREAM) == [call("call_z", "list_files"), DoneEvent()]


def test_empty_arguments_are_an_empty_object_too() -> None:
    assert adapt(stream(function_call(0, "list_files", [], call_id="c"))) == [
        call("c", "list_files"),
        DoneEvent(),
    ]


def test_reasoning_and_hosted_tool_items_yield_nothing() -> None:
    assert adapt(REASONING_STREAM) == [TextEvent("Found it."), DoneEvent()]


def test_annotations_and_unknown_event_types_yield_nothing() -> None:
    events = message(0, "See [1].")
    annotation = {
        "type": "response.output_text.annotation.added",
        "item_id": "msg_1",
        "output_index": 0,
        "content_index": 0,
        "annotation_index": 0,
        "annotation": {"type": "url_citation", "url": "https://example.com"},
    }
    events.insert(3, annotation)
    events.insert(4, {"type": "response.something_new", "x": 1})
    assert adapt(stream(events)) == [TextEvent("See [1]."), DoneEvent()]


def test_an_accepted_incomplete_reason_completes_the_answer() -> None:
    end = {
        "type": "response.incomplete",
        "response": response("incomplete", incomplete_details={"reason": "max_output_tokens"}),
    }
    events = stream(message(0, "Cut sh"), end=end)
    assert adapt(events, incomplete_reasons={"max_output_tokens"}) == [
        TextEvent("Cut sh"),
        DoneEvent(),
    ]


def test_a_refusal_is_text_when_the_caller_says_it_is_an_answer() -> None:
    assert adapt(stream(refusing()), refusal_is_answer=True) == [
        TextEvent("I can't help."),
        DoneEvent(),
    ]


def test_a_resumed_stream_starts_after_its_cursor_without_response_created() -> None:
    whole = stream(message(0, "Hello", " there", " friend."))
    # resumed after the first delta: the item and its part were added before the cursor
    first_delta = next(n for n, e in enumerate(whole) if e["type"] == "response.output_text.delta")
    resumed = whole[first_delta + 1 :]
    assert adapt(resumed, starting_after=first_delta) == [
        TextEvent(" there"),
        TextEvent(" friend."),
        DoneEvent(),
    ]


def test_a_resumed_stream_yields_a_call_added_before_its_cursor() -> None:
    whole = ONE_TOOL_STREAM
    resumed = whole[4:]  # after the call's first delta
    assert adapt(resumed, starting_after=3) == [
        call("call_1", "get_weather", location="Paris"),
        DoneEvent(),
    ]


def test_text_false_checks_the_same_rules_and_builds_no_text() -> None:
    events = stream(message(0, "Hi"), function_call(1, "read", ["{}"], call_id="c"))
    assert adapt(events, text=False) == [call("c", "read"), DoneEvent()]


@pytest.mark.slow
def test_sdk_event_objects_are_read_as_their_lines() -> None:
    from openai._models import construct_type
    from openai.types.responses import ResponseStreamEvent

    objects = [
        construct_type(type_=ResponseStreamEvent, value=event) for event in PARALLEL_TOOLS_STREAM
    ]
    assert adapt(objects) == adapt(PARALLEL_TOOLS_STREAM)


def test_the_async_driver_runs_the_same_machine() -> None:
    import asyncio

    async def events() -> Any:
        for event in ONE_TOOL_STREAM:
            yield event

    async def run() -> list[ModelEvent]:
        return [event async for event in ato_model_events(events())]

    assert asyncio.run(run()) == adapt(ONE_TOOL_STREAM)


# -- the error table, a row a test ----------------------------------------------------------


def refusing() -> list[dict[str, Any]]:
    item = {
        "id": "msg_r",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    at = {"item_id": "msg_r", "output_index": 0, "content_index": 0}
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", **at, "part": {"type": "refusal", "refusal": ""}},
        {"type": "response.refusal.delta", **at, "delta": "I can't help."},
        {"type": "response.refusal.done", **at, "refusal": "I can't help."},
        {
            "type": "response.content_part.done",
            **at,
            "part": {"type": "refusal", "refusal": "I can't help."},
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                **item,
                "status": "completed",
                "content": [{"type": "refusal", "refusal": "I can't help."}],
            },
        },
    ]


def test_missing_response_created() -> None:
    _, error = failure(numbered([*message(0, "Hi"), completed()]))
    assert (error.code, error.detail) == (
        "missing_response_created",
        "stream began with response.output_item.added instead of response.created",
    )


@pytest.mark.parametrize(
    ("events", "detail"),
    [
        (
            [
                {
                    "type": "response.output_text.delta",
                    "item_id": "m",
                    "output_index": 3,
                    "content_index": 0,
                    "delta": "x",
                }
            ],
            "response.output_text.delta arrived without an open output item at output index 3",
        ),
        (
            [*message(0, "Hi"), message(0, "again")[2]],
            "response.output_text.delta arrived without an open output item at output index 0",
        ),
        (
            [message(0, "Hi")[0], message(0, "Hi")[2]],
            "response.output_text.delta arrived without an open content part 0 at output index 0",
        ),
        (
            [function_call(2, "read", ["{}"])[1]],
            "response.function_call_arguments.delta arrived without an open output item"
            " at output index 2",
        ),
        (
            [{**message(1, "x")[1]}],
            "response.content_part.added arrived without an open output item at output index 1",
        ),
        (
            [refusing()[0], refusing()[2]],
            "response.refusal.delta arrived without an open content part 0 at output index 0",
        ),
        (
            [message(5, "x")[-1]],
            "response.output_item.done arrived without an open output item at output index 5",
        ),
        (
            message(-1, "x"),
            "response.output_item.added arrived without an open output item at output index -1",
        ),
    ],
    ids=[
        "text-never-added",
        "text-item-done",
        "text-part-never-added",
        "arguments",
        "part",
        "refusal",
        "item-done",
        "negative-index",
    ],
)
def test_orphan_delta(events: list[dict[str, Any]], detail: str) -> None:
    _, error = failure(stream(events))
    assert (error.code, error.detail) == ("orphan_delta", detail)


@pytest.mark.parametrize("second", [0, 1], ids=["open", "done"])
def test_duplicate_output_item(second: int) -> None:
    first = function_call(0, "read", ["{}"])
    events = first[:1] if second == 0 else first
    _, error = failure(stream(events, function_call(0, "read", ["{}"])[:1]))
    assert (error.code, error.detail) == (
        "duplicate_output_item",
        "duplicate response.output_item.added for output index 0",
    )


@pytest.mark.parametrize(
    "arguments",
    ['{"path": ', '{"n": NaN}', '{"n": -Infinity}', "{,}"],
    ids=["truncated", "NaN", "Infinity", "garbage"],
)
def test_invalid_tool_json(arguments: str) -> None:
    _, error = failure(stream(function_call(1, "read", [arguments])))
    assert (error.code, error.detail) == (
        "invalid_tool_json",
        "function_call item 1 had arguments that are not JSON",
    )


@pytest.mark.parametrize("arguments", ["null", "[1]", '"a.md"', "7"])
def test_non_object_tool_input(arguments: str) -> None:
    _, error = failure(stream(function_call(2, "read", [arguments])))
    assert (error.code, error.detail) == (
        "non_object_tool_input",
        "function_call item 2 had arguments that are not a JSON object",
    )


def test_arguments_mismatch() -> None:
    events = function_call(0, "read", ['{"path": ', '"a.md"}'], final='{"path": "b.md"}')
    _, error = failure(stream(events))
    assert (error.code, error.detail) == (
        "arguments_mismatch",
        "function_call item 0 has final arguments other than its deltas",
    )


def test_arguments_done_other_than_the_final_arguments_is_a_mismatch_too() -> None:
    events = function_call(0, "read", ["{}"])
    events[2] = {**events[2], "arguments": '{"x": 1}'}
    assert failure(stream(events))[1].code == "arguments_mismatch"


def _whole(events: list[dict[str, Any]], *, arguments_done: bool) -> list[dict[str, Any]]:
    """A call's events without its deltas (and without its `arguments.done`, if so)."""
    dropped = {"response.function_call_arguments.delta"}
    if not arguments_done:
        dropped.add("response.function_call_arguments.done")
    return [event for event in events if event["type"] not in dropped]


@pytest.mark.parametrize("arguments_done", [True, False], ids=["with-done", "item-only"])
def test_a_call_without_deltas_is_a_call_sent_whole(arguments_done: bool) -> None:
    """LM Studio: the arguments only in `arguments.done` and the done item, as Chat reads
    a call in one piece; not `arguments_mismatch`."""
    events = _whole(function_call(0, "read", ['{"path": ', '"a.md"}']), arguments_done=True)
    events = _whole(events, arguments_done=arguments_done)
    assert adapt(stream(events)) == [call("call_1", "read", path="a.md"), DoneEvent()]


def test_a_call_sent_whole_still_checks_its_arguments_done_and_its_json() -> None:
    events = _whole(function_call(0, "read", ["{}"]), arguments_done=True)
    events[1] = {**events[1], "arguments": '{"x": 1}'}
    assert failure(stream(events))[1].code == "arguments_mismatch"
    cut = _whole(function_call(0, "read", ['{"path": '], final='{"path": '), arguments_done=False)
    assert failure(stream(cut))[1].code == "invalid_tool_json"


def test_an_empty_delta_is_a_delta_the_final_arguments_must_equal() -> None:
    """A delta that came, even empty, says the call was streamed: no whole-call reading."""
    events = function_call(0, "read", [""], final='{"path": "a.md"}')
    events = [event for event in events if event["type"] != "response.function_call_arguments.done"]
    assert failure(stream(events))[1].code == "arguments_mismatch"


def _completed_as(events: list[dict[str, Any]], change: Any) -> list[dict[str, Any]]:
    """A whole stream whose terminal event's output is `change(output)`."""
    broken: list[dict[str, Any]] = json.loads(json.dumps(events))
    broken[-1]["response"]["output"] = change(broken[-1]["response"]["output"])
    return broken


def _set(path: str, value: Any) -> Any:
    """The change setting `output[i][key]...` (the path `i.key...`) to `value`."""

    def change(output: list[Any]) -> list[Any]:
        *keys, last = [int(key) if key.isdigit() else key for key in path.split(".")]
        target: Any = output
        for key in keys:
            target = target[key]
        target[last] = value
        return output

    return change


_rome = _set("0.content.0.text", "Rome.")
PARIS = stream(message(0, "Par", "is."))


def test_output_mismatch() -> None:
    """Every event said Paris, the terminal event's output says Rome: what
    `get_final_response()` returns (below)."""
    yielded, error = failure(_completed_as(PARIS, _rome))
    assert yielded == [TextEvent("Par"), TextEvent("is.")]
    assert (error.code, error.detail) == (
        "output_mismatch",
        "response.completed's output disagrees with the stream: "
        "item 0 has content part 0 with other text than was streamed",
    )


CONTRADICTIONS: dict[str, tuple[list[dict[str, Any]], Any, str]] = {
    "type": (
        PARIS,
        _set("0.type", "reasoning"),
        "item 0 is of type 'reasoning', streamed as 'message'",
    ),
    "id": (PARIS, _set("0.id", "msg_2"), "item 0 has id 'msg_2', streamed as 'msg_1'"),
    "part-type": (
        PARIS,
        _set("0.content.0.type", "refusal"),
        "item 0 has content part 0 of type 'refusal', streamed as 'output_text'",
    ),
    "part-missing": (PARIS, _set("0.content", []), "item 0 lacks content part 0 of the stream"),
    "part-extra": (
        PARIS,
        lambda out: _set("0.content", out[0]["content"] * 2)(out),
        "item 0 has content part 1, which was never streamed",
    ),
    "item-extra": (PARIS, lambda out: out * 2, "item 1 was never streamed"),
    "item-missing": (PARALLEL_TOOLS_STREAM, lambda out: out[:1], "item 1 of the stream is missing"),
    "reordered": (
        PARALLEL_TOOLS_STREAM,
        lambda out: out[::-1],
        "item 0 has id 'fc_1', streamed as 'fc_0'",
    ),
    "name": (
        ONE_TOOL_STREAM,
        _set("0.name", "get_time"),
        "item 0 has name 'get_time', streamed as 'get_weather'",
    ),
    "call_id": (
        ONE_TOOL_STREAM,
        _set("0.call_id", "call_2"),
        "item 0 has call_id 'call_2', streamed as 'call_1'",
    ),
    "arguments": (
        ONE_TOOL_STREAM,
        _set("0.arguments", "{}"),
        "item 0 has other arguments than were streamed",
    ),
    "not-an-item": (PARIS, _set("0", "msg_1"), "item 0 is 'msg_1', not an item"),
    "not-a-list": (PARIS, lambda out: {"0": out[0]}, "it is a dict, not a list"),
    "no-such-index": (
        stream([*message(0, "Hi"), *message(1, "there")]),
        lambda out: out[:1],
        "item 1 of the stream is missing",
    ),
}


@pytest.mark.parametrize("case", sorted(CONTRADICTIONS))
def test_every_way_the_output_can_contradict_the_stream(case: str) -> None:
    events, change, what = CONTRADICTIONS[case]
    error = failure(_completed_as(events, change))[1]
    assert error.code == "output_mismatch"
    assert error.detail == f"response.completed's output disagrees with the stream: {what}"


def test_the_output_must_agree_with_the_done_text_too() -> None:
    """The output says what the deltas said, but the part's `.done` said otherwise."""
    events = json.loads(json.dumps(PARIS))
    done = next(e for e in events if e["type"] == "response.output_text.done")
    done["text"] = "Rome."
    assert failure(events)[1].code == "output_mismatch"


@pytest.mark.parametrize("output", [None, [], "absent"])
def test_an_absent_or_empty_output_says_nothing_to_contradict(output: Any) -> None:
    events = json.loads(json.dumps(PARIS))
    if output == "absent":
        del events[-1]["response"]["output"]
    else:
        events[-1]["response"]["output"] = output
    assert adapt(events) == [TextEvent("Par"), TextEvent("is."), DoneEvent()]


def test_an_accepted_incomplete_answer_is_held_to_its_output_too() -> None:
    cut = response("incomplete", incomplete_details={"reason": "max_output_tokens"})
    end = {"type": "response.incomplete", "response": cut}
    events = stream(message(0, "Cut sh"), end=end)
    events[-1]["response"]["output"] = [message(0, "Cut short")[-1]["item"]]
    error = failure(events, incomplete_reasons={"max_output_tokens"})[1]
    assert error.detail.startswith("response.incomplete's output disagrees with the stream: ")


def test_a_text_sent_in_its_part_added_is_text_the_stream_delivered() -> None:
    events = message(0, "Paris.")
    events[1] = {**events[1], "part": {**events[1]["part"], "text": "Paris."}}
    del events[2]  # no delta: the whole text came in content_part.added
    assert adapt(stream(events)) == [TextEvent("Paris."), DoneEvent()]
    assert failure(_completed_as(stream(events), _rome))[1].code == "output_mismatch"


def test_a_resumed_stream_judges_only_what_it_saw() -> None:
    """Items done before the cursor are not judged, nor the text deltas before it; the
    `.done` text and the items after it are."""
    whole = stream(message(0, "Hello."), message(1, "Par", "is.", item_id="msg_2"))
    # inside item 1, after its first delta: item 0 was done before it, unseen
    cursor = next(n for n, e in enumerate(whole) if e.get("delta") == "Par")
    assert adapt(whole[cursor + 1 :], starting_after=cursor) == [TextEvent("is."), DoneEvent()]

    broken = _completed_as(whole, _set("1.content.0.text", "Rome."))[cursor + 1 :]
    assert failure(broken, starting_after=cursor)[1].code == "output_mismatch"
    unseen = _completed_as(whole, _rome)[cursor + 1 :]  # item 0's text: before the cursor
    assert adapt(unseen, starting_after=cursor)[-1] == DoneEvent()


def test_a_far_index_is_judged_without_counting_up_to_it() -> None:
    far = 10**12
    events = [{**event, "output_index": far} for event in message(0, "Hi")[2:]]  # resumed
    events.append(completed(output=[message(0, "Hi")[-1]["item"]]))
    error = failure(numbered(events, start=3), starting_after=2)[1]
    assert error.detail.endswith(f"item {far} of the stream is missing")


def unnumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events without `sequence_number`, as the API sent them before mid-2025."""
    return [{k: v for k, v in event.items() if k != "sequence_number"} for event in events]


@pytest.mark.parametrize(
    "good", [TEXT_STREAM, ONE_TOOL_STREAM, PARALLEL_TOOLS_STREAM, REASONING_STREAM]
)
def test_a_stream_without_sequence_numbers_reads_as_the_numbered_one(
    good: list[dict[str, Any]],
) -> None:
    assert adapt(unnumbered(good)) == adapt(good)


def test_a_null_sequence_number_throughout_is_unnumbered_too() -> None:
    nulls = [{**event, "sequence_number": None} for event in TEXT_STREAM]
    assert adapt(nulls) == adapt(TEXT_STREAM)


@pytest.mark.parametrize("at", [1, 4, -1])
def test_a_stream_numbering_some_events_and_not_others_is_a_sequence_gap(at: int) -> None:
    partly = unnumbered(TEXT_STREAM)
    partly[at] = {**partly[at], "sequence_number": at % len(partly)}
    _, error = failure(partly)
    assert (error.code, error.fields["expected"]) == ("sequence_gap", "none")


def test_a_resumed_stream_must_be_numbered() -> None:
    """Its cursor is a sequence number: an event without one is a gap."""
    _, error = failure(unnumbered(TEXT_STREAM[4:]), starting_after=3)
    assert error.detail == "response.output_text.delta has sequence_number null, expected 4"


@pytest.mark.parametrize(
    "end",
    [
        completed(),
        {
            "type": "response.incomplete",
            "response": response("incomplete", incomplete_details={"reason": "x"}),
        },
    ],
    ids=["completed", "accepted-incomplete"],
)
def test_unfinished_output_items(end: dict[str, Any]) -> None:
    events = stream(function_call(0, "read", ["{}"])[:2], message(1, "Hi")[:3], end=end)
    _, error = failure(events, incomplete_reasons={"x"})
    assert (error.code, error.detail) == (
        "unfinished_output_items",
        f"{end['type']} arrived with output item(s) 0, 1 not done",
    )


@pytest.mark.parametrize("cut", [None, 3], ids=["no-terminal", "mid-item"])
def test_missing_response_completed(cut: int | None) -> None:
    events = TEXT_STREAM[:-1] if cut is None else TEXT_STREAM[:cut]
    _, error = failure(events)
    assert (error.code, error.detail) == (
        "missing_response_completed",
        "stream ended before response.completed",
    )


def test_an_empty_body_is_missing_response_completed() -> None:
    assert failure([])[1].code == "missing_response_completed"


@pytest.mark.parametrize(
    ("end", "detail"),
    [
        (
            {
                "type": "response.incomplete",
                "response": response(
                    "incomplete", incomplete_details={"reason": "max_output_tokens"}
                ),
            },
            "response ended with status incomplete (max_output_tokens)",
        ),
        (
            {
                "type": "response.incomplete",
                "response": response("incomplete", incomplete_details={"reason": "content_filter"}),
            },
            "response ended with status incomplete (content_filter)",
        ),
        (completed("in_progress"), "response ended with status in_progress (no reason given)"),
    ],
    ids=["max_output_tokens", "content_filter", "completed-not-completed"],
)
def test_response_incomplete(end: dict[str, Any], detail: str) -> None:
    events, error = failure(stream(message(0, "Cut sh"), end=end))
    assert events == [TextEvent("Cut sh")]
    assert (error.code, error.detail) == ("response_incomplete", detail)


def test_response_failed_carries_the_apis_code_and_message() -> None:
    failed = response("failed", error={"code": "server_error", "message": "The model failed."})
    _, error = failure(
        stream(message(0, "Hi")[:3], end={"type": "response.failed", "response": failed})
    )
    assert (error.code, error.detail) == (
        "response_failed",
        "response failed: server_error: The model failed.",
    )


@pytest.mark.parametrize("late", [message(1, "x")[0], completed()], ids=["item", "completed-again"])
def test_event_after_response_completed(late: dict[str, Any]) -> None:
    events = [*TEXT_STREAM, {**late, "sequence_number": len(TEXT_STREAM)}]
    _, error = failure(events)
    assert (error.code, error.detail) == (
        "event_after_response_completed",
        f"{late['type']} arrived after response.completed",
    )


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        (
            lambda events: events[:3] + events[4:],
            "response.output_text.delta has sequence_number 4, expected 3",
        ),
        (
            lambda events: [events[0], events[0], *events[1:]],
            "response.created has sequence_number 0, expected 1",
        ),
        (
            lambda events: [{**events[0], "sequence_number": 1}, *events[1:]],
            "response.created has sequence_number 1, expected 0",
        ),
        (
            lambda events: [
                events[0],
                {k: v for k, v in events[1].items() if k != "sequence_number"},
            ],
            "response.in_progress has sequence_number null, expected 1",
        ),
    ],
    ids=["skipped", "repeated", "fresh-not-from-0", "missing"],
)
def test_sequence_gap(change: Any, detail: str) -> None:
    _, error = failure(change(TEXT_STREAM))
    assert (error.code, error.detail) == ("sequence_gap", detail)


def test_a_resumed_stream_must_start_right_after_its_cursor() -> None:
    _, error = failure(TEXT_STREAM[5:], starting_after=3)
    assert (error.code, error.detail) == (
        "sequence_gap",
        "response.output_text.delta has sequence_number 5, expected 4",
    )


def test_a_resumed_stream_still_refuses_deltas_of_an_item_already_done() -> None:
    events = numbered([*message(0, "a")[-1:], message(0, "b")[2]], start=8)
    assert failure(events, starting_after=7)[1].code == "orphan_delta"


def test_inconsistent_response() -> None:
    end = completed(id="resp_other")
    _, error = failure(stream(message(0, "Hi"), end=end))
    assert (error.code, error.detail) == (
        "inconsistent_response",
        f"response.completed is of response resp_other, not {RESPONSE_ID}",
    )


def test_refusal() -> None:
    events, error = failure(stream(refusing()))
    assert events == []
    assert (error.code, error.detail) == (
        "refusal",
        "output item 0 is a refusal (response.refusal.delta)",
    )


@pytest.mark.parametrize(
    ("item_type", "shown"),
    [
        ("custom_tool_call", "custom_tool_call"),
        ("computer_call", "computer_call"),
        ("mcp_approval_request", "mcp_approval_request"),
        ("something_new", "something_new"),
        # no item type: an object or a list, which no set of types can look up
        pytest.param({"a": 1}, "{'a': 1}", id="an_object"),
        pytest.param(["x"], "['x']", id="a_list"),
    ],
)
def test_unsupported_output_item(item_type: object, shown: str) -> None:
    item = {
        "id": "ctc_1",
        "type": item_type,
        "call_id": "call_c",
        "name": "code_exec",
        "input": "print(1)",
    }
    added = {"type": "response.output_item.added", "output_index": 1, "item": item}
    _, error = failure(stream(message(0, "Running."), [added]))
    assert (error.code, error.detail) == (
        "unsupported_output_item",
        f"output item 1 is a {shown}, which is not supported",
    )


def test_a_function_call_without_a_call_id_is_unsupported() -> None:
    events = function_call(0, "read", ["{}"])
    events[-1] = {**events[-1], "item": {**events[-1]["item"], "call_id": None}}
    _, error = failure(stream(events))
    assert (
        error.detail == "output item 0 is a function_call without a call_id, which is not supported"
    )


@pytest.mark.parametrize(
    ("event", "name"),
    [
        (
            {
                "type": "error",
                "code": "rate_limit_exceeded",
                "message": "Slow down.",
                "param": None,
            },
            "rate_limit_exceeded",
        ),
        (
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                    "message": "Too long.",
                },
            },
            "context_length_exceeded",
        ),
        ({"error": {"type": "server_error", "code": None, "message": "Oops."}}, "server_error"),
    ],
    ids=["flat", "nested", "nested-without-code"],
)
def test_an_error_event_is_the_api_error_replay_reports(event: dict[str, Any], name: str) -> None:
    adapter = ResponsesAdapter()
    for first in numbered(created()):
        adapter.feed(first)
    with pytest.raises(APIErrorEvent) as caught:
        adapter.feed({**event, "sequence_number": 2})
    assert failure_code(caught.value) == f"api_error:{name}"
    with pytest.raises(APIErrorEvent) as again:
        adapter.finish()
    assert again.value.__cause__ is caught.value


def test_every_row_of_the_table_is_tested_here_and_matches_its_pattern() -> None:
    """Each code's message, as raised, matches its own pattern only."""
    incomplete = {"type": "response.incomplete", "response": response("incomplete")}
    failed = {
        "type": "response.failed",
        "response": response("failed", error={"code": "c", "message": "m"}),
    }
    custom = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"type": "custom_tool_call"},
    }
    raised: dict[str, list[dict[str, Any]]] = {
        "missing_response_created": numbered([completed()]),
        "orphan_delta": stream([message(0, "x")[2]]),
        "duplicate_output_item": stream(message(0, "x")[:1] * 2),
        "invalid_tool_json": stream(function_call(0, "r", ["{"])),
        "non_object_tool_input": stream(function_call(0, "r", ["[]"])),
        "arguments_mismatch": stream(function_call(0, "r", ["{}"], final='{"a": 1}')),
        "output_mismatch": _completed_as(TEXT_STREAM, _rome),
        "unfinished_output_items": stream(message(0, "x")[:1]),
        "missing_response_completed": numbered(created()),
        "response_incomplete": stream(end=incomplete),
        "response_failed": stream(end=failed),
        "event_after_response_completed": [*TEXT_STREAM, TEXT_STREAM[-1]],
        "sequence_gap": TEXT_STREAM[1:2],
        "inconsistent_response": stream(end=completed(id="other")),
        "refusal": stream(refusing()),
        "unsupported_output_item": stream([custom]),
    }
    raised["sequence_gap"] = [TEXT_STREAM[0], TEXT_STREAM[2]]
    assert sorted(raised) == sorted(ERROR_TABLE)
    for code, events in raised.items():
        error = failure(events)[1]
        assert error.code == code
        matching = [
            other
            for other in ERROR_TABLE
            if re.match(error_pattern(other, provider=PROVIDER), str(error))
        ]
        assert matching == [code], str(error)


# -- the machine ----------------------------------------------------------------------------


def test_machine_stays_failed_after_an_error() -> None:
    adapter = ResponsesAdapter()
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed(TEXT_STREAM[1])
    for event in TEXT_STREAM:
        with pytest.raises(StreamProtocolError) as again:
            adapter.feed(event)
        assert again.value.__cause__ is caught.value
    with pytest.raises(StreamProtocolError) as at_finish:
        adapter.finish()
    assert at_finish.value.code == "missing_response_created"


def test_check_end_raises_early() -> None:
    adapter = ResponsesAdapter()
    for event in TEXT_STREAM[:-1]:
        adapter.feed(event)
    with pytest.raises(StreamProtocolError) as caught:
        adapter.check_end()
    assert caught.value.code == "missing_response_completed"


# -- properties -----------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(deadline=None)
@given(
    tool_input=st.dictionaries(st.text(), JSON_VALUES, max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
@pytest.mark.slow
def test_any_chunking_of_the_arguments_gives_the_same_call(
    tool_input: dict[str, Any], cuts: list[int]
) -> None:
    text = json.dumps(tool_input)
    pieces = split_json(text, sorted({cut for cut in cuts if cut <= len(text)}))
    assert adapt(stream(function_call(0, "any", pieces, call_id="c"))) == [
        ToolCallEvent(ToolCall("c", "any", tool_input)),
        DoneEvent(),
    ]


@settings(deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=8), st.integers(min_value=0, max_value=20))
@pytest.mark.slow
def test_any_resume_point_gives_the_rest_of_the_text(pieces: list[str], cursor: int) -> None:
    whole = stream(message(0, *pieces))
    cursor = min(cursor, len(whole) - 2)
    rest = [e["delta"] for e in whole[cursor + 1 :] if e["type"] == "response.output_text.delta"]
    assert adapt(whole[cursor + 1 :], starting_after=cursor) == [
        *(TextEvent(piece) for piece in rest if piece),
        DoneEvent(),
    ]


JSON_ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-1, 3)
    | st.sampled_from(["", "x", "{}", "message", "function_call", "completed", RESPONSE_ID]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "item",
                    "type",
                    "output_index",
                    "content_index",
                    "delta",
                    "arguments",
                    "call_id",
                    "name",
                    "status",
                    "response",
                    "error",
                    "code",
                    "message",
                    "incomplete_details",
                    "reason",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)
EVENT_TYPES = st.sampled_from(
    sorted(
        {
            "response.created",
            "response.in_progress",
            "response.completed",
            "response.incomplete",
            "response.failed",
            "response.output_item.added",
            "response.output_item.done",
            "response.content_part.added",
            "response.content_part.done",
            "response.output_text.delta",
            "response.refusal.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "error",
            "response.future",
        }
    )
)


@settings(deadline=None)
@given(
    st.lists(
        st.tuples(
            EVENT_TYPES,
            st.dictionaries(
                st.sampled_from(
                    [
                        "output_index",
                        "content_index",
                        "item",
                        "response",
                        "delta",
                        "arguments",
                        "error",
                    ]
                ),
                JSON_ANY,
                max_size=4,
            ),
        ),
        max_size=8,
    )
)
@pytest.mark.slow
def test_any_input_ends_in_done_or_one_of_the_tables_errors(
    raw: list[tuple[str, dict[str, Any]]],
) -> None:
    """Whatever the events hold (a server's mistakes included), the machine answers with
    its events and `done`, a code of its table (its message matching the code's pattern),
    or the API's error: never a crash."""
    events = numbered([*created(), *({**fields, "type": kind} for kind, fields in raw)])
    try:
        result = adapt(events)
    except StreamProtocolError as error:
        assert re.match(error_pattern(error.code, provider=PROVIDER), str(error)), str(error)
    except APIErrorEvent as error:
        assert (failure_code(error) or "").startswith("api_error:")
    else:
        assert result[-1] == DoneEvent()


# -- what the openai SDK does with the same streams (docs/openai-adapters.md) ----------------


def _sdk_final(events: list[dict[str, Any]]) -> Any:
    """The response `client.responses.stream(...)` accumulates from a body of `events`,
    served over `httpx2.MockTransport`, or the error it raised."""
    import httpx2
    import openai

    body = b"".join(
        f"event: {event.get('type')}\ndata: {json.dumps(event)}\n\n".encode() for event in events
    )

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = openai.OpenAI(
        api_key="test", base_url="http://test/v1", http_client=http, max_retries=0
    )
    try:
        with client.responses.stream(model="gpt-5-mini", input="x") as stream:
            return stream.get_final_response()
    except Exception as error:
        return error


def _broken() -> dict[str, tuple[list[dict[str, Any]], str | None]]:
    """code -> (a stream the adapter refuses with it, what the SDK's helper raises or None)."""
    failed = response("failed", error={"code": "server_error", "message": "The model failed."})
    incomplete = response("incomplete", incomplete_details={"reason": "max_output_tokens"})
    custom = {"id": "ctc_1", "type": "custom_tool_call", "call_id": "c", "name": "x", "input": "1"}
    late = {**message(1, "x")[0], "sequence_number": len(TEXT_STREAM)}
    flat_error = {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down."}
    never_completed = "RuntimeError: Didn't receive a `response.completed` event."
    return {
        "missing_response_created": (
            numbered([*message(0, "Hi"), completed()]),
            "RuntimeError: Expected to have received `response.created` before"
            " `response.output_item.added`",
        ),
        "orphan_delta": (
            stream([*message(0, "Hi"), message(0, "again")[2]]),
            None,
        ),
        "duplicate_output_item": (
            stream(function_call(0, "read", ["{}"]), function_call(0, "grep", ["{}"])),
            "RuntimeError: Duplicate response output index 0.",
        ),
        "invalid_tool_json": (stream(function_call(0, "read", ['{"n": NaN}'])), None),
        "non_object_tool_input": (stream(function_call(0, "read", ["[1, 2]"])), None),
        "arguments_mismatch": (
            stream(function_call(0, "read", ['{"a": 1}'], final='{"a": 2}')),
            None,
        ),
        "output_mismatch": (_completed_as(PARIS, _rome), None),
        "unfinished_output_items": (
            stream(function_call(0, "read", ["{}"])[:2]),
            "RuntimeError: Cannot complete response with unfinished output items.",
        ),
        "missing_response_completed": (numbered([*created(), *message(0, "Hi")]), never_completed),
        "response_incomplete": (
            stream(message(0, "Cut"), end={"type": "response.incomplete", "response": incomplete}),
            never_completed,
        ),
        "response_failed": (
            stream(message(0, "Hi")[:3], end={"type": "response.failed", "response": failed}),
            never_completed,
        ),
        "event_after_response_completed": ([*TEXT_STREAM, late], None),
        "sequence_gap": (TEXT_STREAM[:4] + TEXT_STREAM[5:], None),
        "inconsistent_response": (
            stream(message(0, "Hi"), end=completed(id="resp_other")),
            "RuntimeError: Lifecycle response identity changed.",
        ),
        "refusal": (stream(refusing()), None),
        "unsupported_output_item": (
            stream(
                [
                    {"type": "response.output_item.added", "output_index": 0, "item": custom},
                    {"type": "response.output_item.done", "output_index": 0, "item": custom},
                ]
            ),
            None,
        ),
        "api_error:rate_limit_exceeded": (
            numbered([*created(), *message(0, "Hi")[:3], flat_error]),
            never_completed,
        ),
    }


@pytest.mark.parametrize("code", sorted(_broken()))
def test_what_the_sdk_helper_does_with_each_stream_the_adapter_refuses(code: str) -> None:
    events, sdk = _broken()[code]
    try:
        list(to_model_events(events))
    except (StreamProtocolError, APIErrorEvent) as error:
        assert (failure_code(error) if isinstance(error, APIErrorEvent) else error.code) == code
    else:
        raise AssertionError("the adapter took it")
    final = _sdk_final(events)
    if sdk is None:
        assert not isinstance(final, Exception), final
    else:
        assert f"{type(final).__name__}: {final}" == sdk


def test_the_sdk_helper_keeps_the_final_arguments_and_the_completed_events_text() -> None:
    broken = _broken()
    call = _sdk_final(broken["arguments_mismatch"][0]).output[0]
    assert call.arguments == '{"a": 2}'
    lost = _sdk_final(broken["sequence_gap"][0]).output[0]
    assert lost.content[0].text == "Hello! How can I help?"  # the deltas it yielded lack one
    assert _sdk_final(broken["output_mismatch"][0]).output_text == "Rome."  # streamed: Paris.


def test_the_sdk_raises_its_api_error_for_a_nested_error_line() -> None:
    import openai

    nested = {
        "type": "error",
        "error": {"type": "server_error", "code": "server_error", "message": "Oops."},
    }
    assert isinstance(_sdk_final(numbered([*created(), nested])), openai.APIError)
