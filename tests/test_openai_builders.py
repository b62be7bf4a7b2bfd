"""The OpenAI builders write streams as the API sends them: each replays to done through
its strict adapter and is read by the real `openai` SDK, whose helpers' final objects say
the same; low-level calls write the broken ones."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness import (
    Cassette,
    ChatStreamBuilder,
    DoneEvent,
    InputError,
    ResponsesStreamBuilder,
    TextEvent,
    ToolCall,
    ToolCallEvent,
    cassette_client,
    replay_outcome,
)
from harness._replay.direct import Outcome, acollect, collect
from harness._replay.sdk import areplay_events, replay_events
from harness._testing.coverage import outcome_code

PARIS = {"city": "Paris"}
ROME = {"city": "Rome"}


def chat_everything() -> ChatStreamBuilder:
    """Reasoning, text, two calls whose pieces interleave, a call of no arguments, usage."""
    paris = ChatStreamBuilder(start=False).tool(0, "get_weather", PARIS, id="call_P", pieces=3)
    rome = ChatStreamBuilder(start=False).tool(1, "get_weather", ROME, id="call_R", pieces=2)
    now = ChatStreamBuilder(start=False).tool(2, "get_time", "", id="call_T")
    return (
        ChatStreamBuilder()
        .reasoning("The user asks ", "about the weather.")
        .text("Let me ", "look.")
        .interleave([paris, rome, now], order=[0, 1, 0, 1, 2, 0, 1, 0])
        .stop(usage=True)
    )


def responses_everything() -> ResponsesStreamBuilder:
    """Reasoning, text, two calls, a call of no arguments, usage."""
    return (
        ResponsesStreamBuilder()
        .reasoning(0, "The user asks ", "about the weather.")
        .message(1, "Let me ", "look.")
        .call(2, "get_weather", PARIS, call_id="call_P", pieces=3)
        .call(3, "get_weather", ROME, call_id="call_R")
        .call(4, "get_time", "", call_id="call_T")
        .completed(usage=True)
    )


CALLS = [
    ToolCallEvent(ToolCall("call_P", "get_weather", PARIS)),
    ToolCallEvent(ToolCall("call_R", "get_weather", ROME)),
    ToolCallEvent(ToolCall("call_T", "get_time", {})),
]
TEXT = [TextEvent("Let me "), TextEvent("look.")]

#: every good stream the builders write: name -> (builder, the events replay yields)
GOOD: dict[str, tuple[Callable[[], Any], list[Any]]] = {
    "chat-everything": (chat_everything, [*TEXT, *CALLS, DoneEvent()]),
    "chat-text": (lambda: ChatStreamBuilder().text("Hi.").stop(), [TextEvent("Hi."), DoneEvent()]),
    "chat-zero-argument": (
        lambda: ChatStreamBuilder().tool(0, "get_time", {}, id="call_T").stop(usage=True),
        [CALLS[2], DoneEvent()],
    ),
    "responses-everything": (responses_everything, [*TEXT, *CALLS, DoneEvent()]),
    "responses-text": (
        lambda: ResponsesStreamBuilder().message(0, "Hi.").completed(),
        [TextEvent("Hi."), DoneEvent()],
    ),
}


def _written(tmp_path: Path, builder: Any, name: str = "stream") -> Path:
    path = tmp_path / f"{name}.jsonl"
    builder.write(path, name)
    return path


@pytest.mark.parametrize("name", sorted(GOOD))
def test_each_good_stream_replays_to_done_through_the_strict_adapter(
    tmp_path: Path, name: str
) -> None:
    build, expected = GOOD[name]
    assert replay_outcome(_written(tmp_path, build())) == Outcome(expected)


def _via_sdk(path: Path, reader: str, asynchronous: bool) -> Outcome:
    if asynchronous:
        return asyncio.run(acollect(areplay_events(path, via="sdk", reader=reader)))
    return collect(replay_events(path, via="sdk", reader=reader))


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("reader", ["create", "stream"])
@pytest.mark.parametrize("name", sorted(GOOD))
def test_each_good_stream_comes_out_of_the_sdks_readers_as_out_of_direct_replay(
    tmp_path: Path, name: str, reader: str, asynchronous: bool
) -> None:
    path = _written(tmp_path, GOOD[name][0]())
    assert _via_sdk(path, reader, asynchronous) == replay_outcome(path)


def test_the_chat_helpers_final_completion_is_what_the_builder_wrote(tmp_path: Path) -> None:
    client = cassette_client(_written(tmp_path, chat_everything()), sdk="openai")
    with client.chat.completions.stream(model="m", messages=[]) as stream:
        final = stream.get_final_completion()
    (choice,) = final.choices
    assert (choice.finish_reason, choice.message.content) == ("tool_calls", "Let me look.")
    calls = [
        (call.id, call.function.name, call.function.arguments)
        for call in choice.message.tool_calls or []
    ]
    assert calls == [
        ("call_P", "get_weather", json.dumps(PARIS)),
        ("call_R", "get_weather", json.dumps(ROME)),
        ("call_T", "get_time", ""),
    ]
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.total_tokens) == (25, 34)


def test_the_responses_helpers_final_response_is_what_the_builder_wrote(tmp_path: Path) -> None:
    client = cassette_client(_written(tmp_path, responses_everything()), sdk="openai")
    with client.responses.stream(model="m", input="hi") as stream:
        final = stream.get_final_response()
    assert final.status == "completed"
    assert [item.type for item in final.output] == [
        "reasoning",
        "message",
        "function_call",
        "function_call",
        "function_call",
    ]
    assert final.output_text == "Let me look."
    reasoning = final.output[0]
    assert reasoning.type == "reasoning"
    assert [part.text for part in reasoning.summary] == ["The user asks about the weather."]
    calls = [
        (item.call_id, item.name, item.arguments)
        for item in final.output
        if item.type == "function_call"
    ]
    assert calls == [
        ("call_P", "get_weather", json.dumps(PARIS)),
        ("call_R", "get_weather", json.dumps(ROME)),
        ("call_T", "get_time", ""),
    ]
    assert final.usage is not None and final.usage.total_tokens == 34
    # the events the helper yields come numbered 0.. in order, as the API numbers them
    again = cassette_client(_written(tmp_path, responses_everything(), "again"), sdk="openai")
    with again.responses.stream(model="m", input="hi") as stream:
        numbers = [event.sequence_number for event in stream]
    assert numbers == list(range(len(responses_everything().events())))


def test_a_refusal_is_the_strict_default_and_the_sdks_refusal(tmp_path: Path) -> None:
    chat = _written(tmp_path, ChatStreamBuilder().refusal("I can't ", "help.").stop(), "chat")
    assert outcome_code(replay_outcome(chat)) == "refusal"
    client = cassette_client(chat, sdk="openai")
    with client.chat.completions.stream(model="m", messages=[]) as stream:
        message = stream.get_final_completion().choices[0].message
    assert message.refusal == "I can't help."

    builder = ResponsesStreamBuilder().refusal(0, "I can't ", "help.").completed()
    responses = _written(tmp_path, builder, "responses")
    assert outcome_code(replay_outcome(responses)) == "refusal"
    client = cassette_client(responses, sdk="openai")
    with client.responses.stream(model="m", input="hi") as stream:
        (item,) = stream.get_final_response().output
    assert item.type == "message"
    assert [(part.type, getattr(part, "refusal", None)) for part in item.content] == [
        ("refusal", "I can't help.")
    ]


def test_a_responses_stream_numbers_its_events_and_ends_with_every_item_done() -> None:
    events = responses_everything().events()
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    done = [event["item"] for event in events if event["type"] == "response.output_item.done"]
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output"] == done
    call = next(item for item in done if item["type"] == "function_call")
    assert call["arguments"] == json.dumps(PARIS)  # the done item carries its final arguments
    kinds = [event["type"] for event in events if event.get("output_index") == 1]
    assert kinds == [
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ]


def test_responses_blocks_interleaved_are_numbered_again_in_the_merged_stream() -> None:
    a = ResponsesStreamBuilder(start=False).message(0, "a")
    b = ResponsesStreamBuilder(start=False).call(1, "f", {}, call_id="call_1")
    merged = ResponsesStreamBuilder().interleave([a, b], order=[0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 0])
    events = merged.completed().events()
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    assert [item["type"] for item in events[-1]["response"]["output"]] == [
        "message",
        "function_call",
    ]


def test_write_names_the_provider_and_keeps_the_request(tmp_path: Path) -> None:
    request = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Hi"}]}
    path = tmp_path / "chat.jsonl"
    ChatStreamBuilder().text("Hi.").stop().write(path, "a greeting", request=request)
    assert Cassette(path).header == {
        "cassette": 1,
        "description": "a greeting",
        "source": "synthetic",
        "request": request,
        "provider": "openai-chat",
        "model": "gpt-4.1-mini",
    }
    path = tmp_path / "responses.jsonl"
    ResponsesStreamBuilder(model="gpt-5").completed().write(path, "empty", expect="done")
    header = Cassette(path).header or {}
    assert (header["provider"], header["model"], header["expect"]) == (
        "openai-responses",
        "gpt-5",
        "done",
    )


@pytest.mark.parametrize(
    ("builder", "code"),
    [
        (ChatStreamBuilder().arguments(0, "{}").stop("tool_calls"), "orphan_arguments_delta"),
        (ChatStreamBuilder().tool(0, "f", '{"a": ').stop(), "invalid_tool_json"),
        (ChatStreamBuilder().text("Hi").finish("stop"), "missing_done"),
        (ChatStreamBuilder().tool(0, "f", {}).stop("stop"), "stop_with_tool_calls"),
        (ChatStreamBuilder().text("a").error("Busy.", "overloaded"), "api_error:overloaded"),
        (
            ResponsesStreamBuilder().call(0, "f", {}, final='{"b": 1}').completed(),
            "arguments_mismatch",
        ),
        (ResponsesStreamBuilder().message(0, "Hi").incomplete(), "response_incomplete"),
        (
            ResponsesStreamBuilder().raw({"type": "response.completed", "sequence_number": 9}),
            "sequence_gap",
        ),
        (ResponsesStreamBuilder().message(0, "Hi"), "missing_response_completed"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_low_level_calls_write_the_broken_streams_each_rule_refuses(
    tmp_path: Path, builder: Any, code: str
) -> None:
    assert outcome_code(replay_outcome(_written(tmp_path, builder))) == code


def test_interleave_refuses_an_order_that_miscounts_before_adding_anything() -> None:
    a = ChatStreamBuilder(start=False).tool(0, "f", {})
    builder = ChatStreamBuilder(start=False)
    with pytest.raises(InputError, match="block 0 has 3 and is named 1"):
        builder.interleave([a], order=[0])
    assert builder.events() == []


def test_a_stop_without_a_reason_says_what_the_api_would() -> None:
    assert ChatStreamBuilder().text("a").stop().events()[-2]["choices"][0]["finish_reason"] == (
        "stop"
    )
    with_call = ChatStreamBuilder().tool(0, "f", {}).stop().events()
    assert with_call[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert with_call[-1] == {"harness": "done"}
