"""The Chat Completions adapter's rules (docs/openai-adapters.md), one test a table row,
the tolerated deviations and good streams, fed chunk dicts shaped on the real API."""

from __future__ import annotations

import json
import pickle
import re
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from harness._events import DoneEvent, ModelEvent, TextEvent, ToolCall, ToolCallEvent
from harness._exceptions import APIErrorEvent, StreamProtocolError, error_pattern
from harness._providers.openai_chat.adapter import (
    DONE,
    ChatAdapter,
    ato_model_events,
    to_model_events,
)
from harness._providers.openai_chat.errors import ERROR_TABLE, PROVIDER
from harness._replay.direct import failure_code
from harness.builder import split_json

PREFIX = "OpenAI stream protocol error: "
ID = "chatcmpl-Bx7Qp2u1Yv9mZ3kR8aLw"


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    """One `chat.completion.chunk` as the API streams it (choice 0)."""
    choice = {"index": 0, "delta": {} if delta is None else delta, "logprobs": None}
    choice["finish_reason"] = finish
    return {
        "id": extra.pop("id", ID),
        "object": "chat.completion.chunk",
        "created": 1764644400,
        "model": "gpt-5-mini-2025-08-07",
        "service_tier": "default",
        "system_fingerprint": None,
        "choices": extra.pop("choices", [choice]),
        "obfuscation": "Fz3k",
        **extra,
    }


def role() -> dict[str, Any]:
    return chunk({"role": "assistant", "content": "", "refusal": None})


def text(*pieces: str) -> list[dict[str, Any]]:
    return [chunk({"content": piece}) for piece in pieces]


def opening(index: int, id: str, name: str, arguments: str | None = "") -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, "arguments": arguments}
    piece = {"index": index, "id": id, "type": "function", "function": function}
    return chunk({"tool_calls": [piece]})


def arguments(index: int, piece: str | None) -> dict[str, Any]:
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})


def usage() -> dict[str, Any]:
    totals = {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}
    return chunk(choices=[], usage=totals)


def call(id: str, name: str, **input: Any) -> ToolCallEvent:
    return ToolCallEvent(ToolCall(id, name, input))


# -- realistic streams, as the API sends them ---------------------------------------------

TEXT_STREAM = [role(), *text("Hello", "! How", " can I help?"), chunk(finish="stop"), DONE]

ONE_TOOL_STREAM = [
    chunk({"role": "assistant", "content": None, "refusal": None}),
    opening(0, "call_Vt4gqS2hQ1", "get_weather"),
    *(arguments(0, piece) for piece in ['{"', "location", '":"', "Paris", '"}']),
    chunk(finish="tool_calls"),
    usage(),
    DONE,
]

PARALLEL_TOOLS_STREAM = [
    chunk({"role": "assistant", "content": None, "refusal": None}),
    opening(0, "call_a1", "read"),
    arguments(0, '{"path": '),
    arguments(0, '"a.md"}'),
    opening(1, "call_b2", "grep"),
    arguments(1, '{"pattern": "TODO"}'),
    chunk(finish="tool_calls"),
    DONE,
]

ZERO_ARGUMENT_STREAM = [
    chunk({"role": "assistant", "content": None, "refusal": None}),
    opening(0, "call_z", "list_files", arguments=""),
    arguments(0, None),
    arguments(0, ""),
    chunk(finish="tool_calls"),
    DONE,
]

#: a reasoning model behind an OpenAI-compatible server (DeepSeek, vLLM, OpenRouter)
REASONING_STREAM = [
    chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
    chunk({"content": None, "reasoning_content": "The user greets; "}),
    chunk({"content": None, "reasoning": "answer briefly."}),
    *text("Hi", " there."),
    chunk(finish="stop"),
    DONE,
]

#: Azure OpenAI: a prompt filter chunk first, content filter results mid-stream
AZURE_STREAM = [
    {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
    },
    role(),
    *text("Safe", " text."),
    {
        "choices": [
            {
                "content_filter_offsets": {"check_offset": 0, "start_offset": 0, "end_offset": 9},
                "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}},
                "finish_reason": None,
                "index": 0,
            }
        ],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
    },
    chunk(finish="stop"),
    DONE,
]


def adapt(items: list[Any], **options: Any) -> list[ModelEvent]:
    return list(to_model_events(items, **options))


def failure(items: list[Any], **options: Any) -> tuple[list[ModelEvent], StreamProtocolError]:
    """The events yielded before the stream failed, and the error it failed with."""
    yielded: list[ModelEvent] = []
    with pytest.raises(StreamProtocolError) as caught:
        for event in to_model_events(items, **options):
            yielded.append(event)
    assert caught.value.provider == PROVIDER
    assert str(caught.value).startswith(PREFIX)
    return yielded, caught.value


# -- good streams -------------------------------------------------------------------------


def test_text_stream_yields_each_piece_and_done() -> None:
    assert adapt(TEXT_STREAM) == [
        TextEvent("Hello"),
        TextEvent("! How"),
        TextEvent(" can I help?"),
        DoneEvent(),
    ]


def test_one_tool_call_is_yielded_at_the_finish_reason() -> None:
    adapter = ChatAdapter()
    *before, finish, after_usage, done = ONE_TOOL_STREAM
    assert [adapter.feed(item) for item in before] == [[]] * len(before)
    assert adapter.feed(finish) == [call("call_Vt4gqS2hQ1", "get_weather", location="Paris")]
    assert adapter.feed(after_usage) == adapter.feed(done) == []
    assert adapter.finish() == [DoneEvent()]


def test_parallel_tool_calls_each_build_from_their_own_index() -> None:
    assert adapt(PARALLEL_TOOLS_STREAM) == [
        call("call_a1", "read", path="a.md"),
        call("call_b2", "grep", pattern="TODO"),
        DoneEvent(),
    ]


def test_interleaved_parallel_pieces_are_assembled_per_index() -> None:
    stream = [
        opening(1, "one", "read"),
        opening(3, "three", "grep"),
        arguments(3, '{"pattern"'),
        arguments(1, '{"path": '),
        arguments(3, ': "TODO"}'),
        arguments(1, '"a.md"}'),
        chunk(finish="tool_calls"),
        DONE,
    ]
    assert adapt(stream) == [
        call("one", "read", path="a.md"),
        call("three", "grep", pattern="TODO"),
        DoneEvent(),
    ]


def test_a_zero_argument_call_whose_arguments_stay_empty_has_input_empty_object() -> None:
    assert adapt(ZERO_ARGUMENT_STREAM) == [call("call_z", "list_files"), DoneEvent()]


def test_reasoning_deltas_yield_nothing() -> None:
    assert adapt(REASONING_STREAM) == [TextEvent("Hi"), TextEvent(" there."), DoneEvent()]


def test_azure_filter_chunks_are_passed_over() -> None:
    assert adapt(AZURE_STREAM) == [TextEvent("Safe"), TextEvent(" text."), DoneEvent()]


def test_usage_chunk_after_the_finish_is_passed_over() -> None:
    assert adapt([*text("Hi"), chunk(finish="stop"), usage(), DONE]) == [
        TextEvent("Hi"),
        DoneEvent(),
    ]


def test_text_and_a_call_in_one_answer() -> None:
    stream = [
        *text("Let me look."),
        opening(0, "c", "read", '{"path": "a"}'),
        chunk(finish="tool_calls"),
        DONE,
    ]
    assert adapt(stream) == [TextEvent("Let me look."), call("c", "read", path="a"), DoneEvent()]


def test_the_same_id_and_name_repeated_in_later_pieces_are_kept_once() -> None:
    stream = [
        opening(0, "call_1", "read", '{"path"'),
        opening(0, "call_1", "read", ': "a.md"}'),  # some servers repeat them in every piece
        chunk(finish="tool_calls"),
        DONE,
    ]
    assert adapt(stream) == [call("call_1", "read", path="a.md"), DoneEvent()]


def test_an_empty_delta_repeating_the_finish_reason_is_allowed() -> None:
    stream = [*text("Hi"), chunk(finish="stop"), chunk({}, finish="stop"), chunk({}), DONE]
    assert adapt(stream) == [TextEvent("Hi"), DoneEvent()]


def test_empty_content_yields_nothing() -> None:
    assert adapt([chunk({"content": ""}), *text("a"), chunk(finish="stop"), DONE]) == [
        TextEvent("a"),
        DoneEvent(),
    ]


def test_widened_finish_reasons_complete_the_answer() -> None:
    stream = [*text("Cut sh"), chunk(finish="length"), DONE]
    assert adapt(stream, finish_reasons={"stop", "tool_calls", "length"}) == [
        TextEvent("Cut sh"),
        DoneEvent(),
    ]


def test_a_refusal_is_text_when_the_caller_says_it_is_an_answer() -> None:
    stream = [
        chunk({"refusal": "I can't help"}),
        chunk({"refusal": " with that."}),
        chunk(finish="stop"),
        DONE,
    ]
    assert adapt(stream, refusal_is_answer=True) == [
        TextEvent("I can't help"),
        TextEvent(" with that."),
        DoneEvent(),
    ]


@pytest.mark.parametrize(
    "tool_choice",
    ["required", {"type": "function", "function": {"name": "read"}}],
    ids=["required", "named"],
)
def test_stop_with_calls_is_an_answer_when_the_request_forced_a_call(tool_choice: Any) -> None:
    stream = [opening(0, "c", "read", '{"path": "a"}'), chunk(finish="stop"), DONE]
    assert adapt(stream, tool_choice=tool_choice) == [call("c", "read", path="a"), DoneEvent()]


def test_text_false_checks_the_same_rules_and_builds_no_text() -> None:
    stream = [*text("Hi"), opening(0, "c", "read", "{}"), chunk(finish="tool_calls"), DONE]
    assert adapt(stream, text=False) == [call("c", "read"), DoneEvent()]


def test_sdk_chunk_objects_are_read_as_their_lines() -> None:
    from openai._models import construct_type
    from openai.types.chat import ChatCompletionChunk

    objects = [
        construct_type(type_=ChatCompletionChunk, value=item)
        for item in PARALLEL_TOOLS_STREAM
        if item != DONE
    ]
    assert adapt(objects, done_at_end=True) == adapt(PARALLEL_TOOLS_STREAM)


def test_the_async_driver_runs_the_same_machine() -> None:
    import asyncio

    async def items() -> Any:
        for item in ONE_TOOL_STREAM:
            yield item

    async def run() -> list[ModelEvent]:
        return [event async for event in ato_model_events(items())]

    assert asyncio.run(run()) == adapt(ONE_TOOL_STREAM)


# -- the error table, a row a test ----------------------------------------------------------


def test_orphan_arguments_delta() -> None:
    events, error = failure([*text("Hi"), arguments(2, '{"a": 1}')])
    assert events == [TextEvent("Hi")]
    assert (error.code, error.detail) == (
        "orphan_arguments_delta",
        "tool call piece for index 2, which no piece opened with an id and a name",
    )


@pytest.mark.parametrize(
    ("second", "part"),
    [(opening(0, "call_other", "read"), "id"), (opening(0, "call_1", "write"), "function name")],
    ids=["id", "name"],
)
def test_duplicate_tool_call(second: dict[str, Any], part: str) -> None:
    _, error = failure([opening(0, "call_1", "read"), second])
    assert (error.code, error.detail) == (
        "duplicate_tool_call",
        f"tool call 0 was opened again with another {part}",
    )


def test_an_empty_id_or_name_on_a_later_piece_is_none() -> None:
    """LM Studio sends `function.name: ""` (and may send `id: ""`) on a call's later
    pieces: no name, not a second one."""
    later = [
        chunk({"tool_calls": [{"index": 0, "id": "", "function": {"name": "", "arguments": a}}]})
        for a in ('{"path": ', '"a.md"}')
    ]
    stream = [opening(0, "call_1", "read"), *later, chunk(finish="tool_calls"), DONE]
    assert adapt(stream) == [call("call_1", "read", path="a.md"), DoneEvent()]


@pytest.mark.parametrize(
    ("content", "shape"),
    [
        ([{"type": "text", "text": "Paris."}], "a list"),
        ([], "a list"),
        ({"type": "text", "text": "Paris."}, "an object"),
        (7, "a number"),
        (False, "a boolean"),
    ],
    ids=["parts", "empty-list", "object", "number", "boolean"],
)
def test_non_string_content(content: object, shape: str) -> None:
    """Mistral's parts: refused, never passed over (replay said done, the text dropped)."""
    events, error = failure([*text("Well, "), chunk({"content": content}), chunk(finish="stop")])
    assert events == [TextEvent("Well, ")]
    assert (error.code, error.detail) == (
        "non_string_content",
        f"choice 0's delta.content is {shape}, not text",
    )


def test_null_content_is_no_content() -> None:
    stream = [chunk({"content": None}), *text("a"), chunk(finish="stop"), DONE]
    assert adapt(stream) == [TextEvent("a"), DoneEvent()]


@pytest.mark.parametrize(
    ("piece", "detail"),
    [
        (
            {"id": "c", "function": {"name": "read"}},
            "index null) has no non-negative integer index",
        ),
        (
            {"index": "0", "id": "c", "function": {"name": "read"}},
            "index '0') has no non-negative integer index",
        ),
        ({"index": 0, "function": {"name": "read", "arguments": ""}}, "index 0) has no id"),
        ({"index": 0, "id": "c", "function": {"arguments": "{}"}}, "index 0) has no function name"),
        ({"index": 0, "id": "", "function": {"name": "read"}}, "index 0) has no id"),
        (
            {"index": -1, "id": "c", "function": {"name": "read"}},
            "index -1) has no non-negative integer index",
        ),
    ],
    ids=["no-index", "string-index", "no-id", "no-name", "empty-id", "negative-index"],
)
def test_incomplete_tool_call_start(piece: dict[str, Any], detail: str) -> None:
    _, error = failure([chunk({"tool_calls": [piece]})])
    assert error.code == "incomplete_tool_call_start"
    assert error.detail == "first piece of a tool call (" + detail


@pytest.mark.parametrize(
    "text_",
    ['{"path": ', '{"n": NaN}', '{"n": Infinity}', "{,}", '{"n": 1e999}'],
    ids=["truncated", "NaN", "Infinity", "garbage", "overflow"],
)
def test_invalid_tool_json(text_: str) -> None:
    _, error = failure([opening(4, "c", "read", text_), chunk(finish="tool_calls"), DONE])
    assert (error.code, error.detail) == (
        "invalid_tool_json",
        "tool call 4 had arguments that are not JSON",
    )


def test_non_string_arguments_are_invalid_tool_json() -> None:
    stream = [
        opening(0, "c", "read"),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": {"a": 1}}}]}),
    ]
    _, error = failure([*stream, chunk(finish="tool_calls"), DONE])
    assert error.code == "invalid_tool_json"


@pytest.mark.parametrize("text_", ["null", "[1, 2]", '"a.md"', "42", "true"])
def test_non_object_tool_input(text_: str) -> None:
    _, error = failure([opening(1, "c", "read", text_), chunk(finish="tool_calls"), DONE])
    assert (error.code, error.detail) == (
        "non_object_tool_input",
        "tool call 1 had arguments that are not a JSON object",
    )


@pytest.mark.parametrize("ending", [[], [DONE]], ids=["body-ends", "at-done"])
def test_unfinished_tool_calls(ending: list[Any]) -> None:
    _, error = failure([opening(0, "a", "read", "{}"), opening(1, "b", "read", "{}"), *ending])
    assert (error.code, error.detail) == (
        "unfinished_tool_calls",
        "stream ended with tool call(s) 0, 1 and no finish_reason",
    )


def test_missing_done() -> None:
    events, error = failure([*text("Hi"), chunk(finish="stop")])
    assert events == [TextEvent("Hi")]
    assert (error.code, error.detail) == ("missing_done", "stream ended before data: [DONE]")


@pytest.mark.parametrize("stream", [[], [usage()]], ids=["empty", "usage-only"])
def test_a_body_without_done_is_missing_done(stream: list[Any]) -> None:
    assert failure(stream)[1].code == "missing_done"


def test_missing_finish_reason() -> None:
    _, error = failure([*text("Hi"), DONE])
    assert (error.code, error.detail) == (
        "missing_finish_reason",
        "choice 0 did not provide a finish_reason",
    )


@pytest.mark.parametrize("reason", ["length", "content_filter", "function_call", "something_new"])
def test_unsupported_finish_reason(reason: str) -> None:
    _, error = failure([*text("Hi"), chunk(finish=reason), DONE])
    assert (error.code, error.detail) == (
        "unsupported_finish_reason",
        f"finish_reason {reason} is not supported",
    )


def test_stop_with_tool_calls() -> None:
    stream = [
        opening(0, "a", "read", "{}"),
        opening(1, "b", "read", "{}"),
        chunk(finish="stop"),
        DONE,
    ]
    events, error = failure(stream)
    assert events == []  # the calls of a broken answer are never handed on
    assert (error.code, error.detail) == (
        "stop_with_tool_calls",
        "finish_reason stop arrived with 2 tool call(s)",
    )


def test_tool_calls_without_tool_calls() -> None:
    _, error = failure([*text("Hi"), chunk(finish="tool_calls"), DONE])
    assert (error.code, error.detail) == (
        "tool_calls_without_tool_calls",
        "finish_reason tool_calls arrived without a tool call",
    )


def test_inconsistent_chunk() -> None:
    _, error = failure([*text("Hi"), chunk({"content": "!"}, id="chatcmpl-other")])
    assert (error.code, error.detail) == (
        "inconsistent_chunk",
        f"a chunk of completion chatcmpl-other arrived in completion {ID}",
    )


@pytest.mark.parametrize(
    ("late", "what"),
    [
        (chunk({"content": "more"}), "content"),
        (opening(0, "c", "read"), "a tool call piece"),
        (chunk({"refusal": "no"}), "a refusal"),
        (chunk({}, finish="length"), "finish_reason length"),
    ],
    ids=["content", "tool-piece", "refusal", "other-reason"],
)
def test_chunk_after_finish(late: dict[str, Any], what: str) -> None:
    _, error = failure([*text("Hi"), chunk(finish="stop"), late, DONE])
    assert (error.code, error.detail) == (
        "chunk_after_finish",
        f"{what} arrived for choice 0 after its finish_reason",
    )


@pytest.mark.parametrize(
    "late", [chunk({"content": "x"}), usage(), DONE], ids=["chunk", "usage", "done"]
)
def test_chunk_after_done(late: Any) -> None:
    _, error = failure([*text("Hi"), chunk(finish="stop"), DONE, late])
    assert (error.code, error.detail) == ("chunk_after_done", "a chunk arrived after data: [DONE]")


def test_multiple_choices() -> None:
    second = {"index": 1, "delta": {"content": "Other"}, "finish_reason": None}
    _, error = failure([role(), chunk(choices=[second])])
    assert (error.code, error.detail) == (
        "multiple_choices",
        "a chunk carried choice 1; only choice 0 is read (n=1)",
    )


def test_refusal() -> None:
    stream = [
        role(),
        chunk({"refusal": "I'm sorry, I can't help with that."}),
        chunk(finish="stop"),
        DONE,
    ]
    _, error = failure(stream)
    assert (error.code, error.detail) == ("refusal", "choice 0 refused to answer (delta.refusal)")


def test_an_error_line_is_the_api_error_replay_reports() -> None:
    line = {
        "error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }
    adapter = ChatAdapter()
    adapter.feed(role())
    with pytest.raises(APIErrorEvent) as caught:
        adapter.feed(line)
    assert failure_code(caught.value) == "api_error:server_error"
    with pytest.raises(APIErrorEvent) as again:
        adapter.finish()
    assert again.value.__cause__ is caught.value


def test_an_error_line_without_a_type_is_named_by_its_code() -> None:
    line = {"error": {"message": "Rate limit reached", "type": None, "code": "rate_limit_exceeded"}}
    with pytest.raises(APIErrorEvent) as caught:
        ChatAdapter().feed(line)
    assert failure_code(caught.value) == "api_error:rate_limit_exceeded"


def test_every_row_of_the_table_is_tested_here_and_matches_its_pattern() -> None:
    """Each code's message, as raised above, matches its own pattern only."""
    raised: dict[str, list[Any]] = {
        "orphan_arguments_delta": [arguments(0, "{}")],
        "duplicate_tool_call": [opening(0, "a", "r"), opening(0, "b", "r")],
        "incomplete_tool_call_start": [chunk({"tool_calls": [{"index": 0, "id": "a"}]})],
        "invalid_tool_json": [opening(0, "a", "r", "{"), chunk(finish="tool_calls")],
        "non_object_tool_input": [opening(0, "a", "r", "[]"), chunk(finish="tool_calls")],
        "unfinished_tool_calls": [opening(0, "a", "r")],
        "missing_done": [chunk(finish="stop")],
        "missing_finish_reason": [DONE],
        "unsupported_finish_reason": [chunk(finish="length")],
        "stop_with_tool_calls": [opening(0, "a", "r"), chunk(finish="stop")],
        "tool_calls_without_tool_calls": [chunk(finish="tool_calls")],
        "inconsistent_chunk": [role(), chunk({}, id="x")],
        "chunk_after_finish": [chunk(finish="stop"), chunk({"content": "x"})],
        "chunk_after_done": [DONE, DONE],
        "multiple_choices": [chunk(choices=[{"index": 2, "delta": {}}])],
        "refusal": [chunk({"refusal": "no"})],
        "non_string_content": [chunk({"content": [{"type": "text", "text": "x"}]})],
    }
    assert sorted(raised) == sorted(ERROR_TABLE)
    for code, stream in raised.items():
        error = failure(stream)[1]
        assert error.code == code
        matching = [
            other
            for other in ERROR_TABLE
            if re.match(error_pattern(other, provider=PROVIDER), str(error))
        ]
        assert matching == [code], str(error)


# -- the machine ----------------------------------------------------------------------------


def test_machine_stays_failed_after_an_error() -> None:
    adapter = ChatAdapter()
    adapter.feed(role())
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed(arguments(0, "{}"))
    for item in [*text("x"), DONE]:
        with pytest.raises(StreamProtocolError) as again:
            adapter.feed(item)
        assert again.value.__cause__ is caught.value
        assert str(again.value) == str(caught.value)
    with pytest.raises(StreamProtocolError) as at_finish:
        adapter.finish()
    assert at_finish.value.code == "orphan_arguments_delta"


def test_check_end_raises_early_and_the_machine_goes_on() -> None:
    adapter = ChatAdapter()
    for item in [*text("Hi"), chunk(finish="stop")]:
        adapter.feed(item)
    with pytest.raises(StreamProtocolError) as caught:
        adapter.check_end()
    assert caught.value.code == "missing_done"


def test_check_end_passes_at_done_for_a_good_answer() -> None:
    adapter = ChatAdapter()
    for item in TEXT_STREAM:
        adapter.feed(item)
    adapter.check_end()
    assert adapter.finish() == [DoneEvent()]


def test_an_openai_error_pickles_with_its_provider() -> None:
    error = failure([DONE])[1]
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.provider, copy.code, str(copy)) == (
        StreamProtocolError,
        PROVIDER,
        error.code,
        str(error),
    )


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
    first_has_arguments=st.booleans(),
)
@pytest.mark.slow
def test_any_chunking_of_the_arguments_gives_the_same_call(
    tool_input: dict[str, Any], cuts: list[int], first_has_arguments: bool
) -> None:
    text_ = json.dumps(tool_input)
    pieces = split_json(text_, sorted({cut for cut in cuts if cut <= len(text_)}))
    head = pieces.pop(0) if first_has_arguments else None
    stream = [opening(0, "c", "any", head), *(arguments(0, piece) for piece in pieces)]
    assert adapt([*stream, chunk(finish="tool_calls"), DONE]) == [
        ToolCallEvent(ToolCall("c", "any", tool_input)),
        DoneEvent(),
    ]


@settings(deadline=None)
@given(st.lists(st.text(min_size=1), max_size=8), st.sets(st.integers(0, 8)))
@pytest.mark.slow
def test_usage_and_filter_chunks_anywhere_before_done_change_nothing(
    pieces: list[str], at: set[int]
) -> None:
    stream: list[Any] = [role(), *text(*pieces), chunk(finish="stop")]
    for position in sorted(at, reverse=True):
        stream.insert(min(position, len(stream)), AZURE_STREAM[0] if position % 2 else usage())
    assert adapt([*stream, DONE]) == [*(TextEvent(piece) for piece in pieces), DoneEvent()]


JSON_ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 2)
    | st.floats(0, 1)
    | st.sampled_from(["", "x", "stop", "tool_calls", "[DONE]", ID]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "object",
                    "choices",
                    "index",
                    "delta",
                    "content",
                    "tool_calls",
                    "function",
                    "name",
                    "arguments",
                    "finish_reason",
                    "refusal",
                    "error",
                    "type",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@settings(deadline=None)
@given(st.lists(JSON_ANY, max_size=8))
@pytest.mark.slow
def test_any_input_ends_in_done_or_one_of_the_tables_errors(items: list[Any]) -> None:
    """Whatever the lines hold (a server's mistakes included), the machine answers with
    its events and `done`, a code of its table (its message matching the code's pattern),
    or the API's error: never a crash."""
    try:
        events = adapt(items)
    except StreamProtocolError as error:
        assert re.match(error_pattern(error.code, provider=PROVIDER), str(error)), str(error)
    except APIErrorEvent as error:
        assert (failure_code(error) or "").startswith("api_error:")
    else:
        assert events[-1] == DoneEvent()


# -- what the openai SDK does with the same streams (docs/openai-adapters.md) ----------------


def _sdk_final(items: list[Any], **request: Any) -> Any:
    """The completion `client.chat.completions.stream(...)` accumulates from a body of
    `items`, served over `httpx2.MockTransport`, or the error it raised."""
    import httpx2
    import openai

    body = b"".join(
        b"data: " + (b"[DONE]" if item == DONE else json.dumps(item).encode()) + b"\n\n"
        for item in items
    )

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = openai.OpenAI(
        api_key="test", base_url="http://test/v1", http_client=http, max_retries=0
    )
    ask = {"model": "gpt-5-mini", "messages": [{"role": "user", "content": "x"}], **request}
    try:
        with client.chat.completions.stream(**ask) as stream:
            return stream.get_final_completion()
    except Exception as error:
        return error


SDK_TAKES: dict[str, list[Any]] = {
    "orphan_arguments_delta": [role(), arguments(0, '{"a": 1}'), chunk(finish="tool_calls"), DONE],
    "duplicate_tool_call": [
        opening(0, "call_1", "read", '{"path"'),
        opening(0, "call_2", "read", ': "a"}'),
        chunk(finish="tool_calls"),
        DONE,
    ],
    "incomplete_tool_call_start": [
        chunk({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": "{}"}}]}),
        chunk(finish="tool_calls"),
        DONE,
    ],
    "invalid_tool_json": [opening(0, "c", "read", '{"n": NaN}'), chunk(finish="tool_calls"), DONE],
    "non_object_tool_input": [opening(0, "c", "read", "[1, 2]"), chunk(finish="tool_calls"), DONE],
    "unfinished_tool_calls": [opening(0, "c", "read", "{}"), DONE],
    "missing_done": [*text("Hi"), chunk(finish="stop")],
    "missing_finish_reason": [*text("Hi"), DONE],
    "stop_with_tool_calls": [opening(0, "c", "read", "{}"), chunk(finish="stop"), DONE],
    "tool_calls_without_tool_calls": [*text("Hi"), chunk(finish="tool_calls"), DONE],
    "inconsistent_chunk": [
        *text("Hi"),
        chunk({"content": "!"}, id="other"),
        chunk(finish="stop"),
        DONE,
    ],
    "chunk_after_finish": [*text("Hi"), chunk(finish="stop"), chunk({"content": "!"}), DONE],
    "chunk_after_done": [*text("Hi"), chunk(finish="stop"), DONE, chunk({"content": "!"})],
    "multiple_choices": [
        *text("Hi"),
        chunk(choices=[{"index": 1, "delta": {"content": "Other"}, "finish_reason": None}]),
        chunk(finish="stop"),
        DONE,
    ],
    "refusal": [role(), chunk({"refusal": "No."}), chunk(finish="stop"), DONE],
}


@pytest.mark.parametrize("code", sorted(SDK_TAKES))
def test_the_sdk_helper_takes_the_stream_the_adapter_refuses(code: str) -> None:
    items = SDK_TAKES[code]
    assert failure(items)[1].code == code
    final = _sdk_final(items)
    assert not isinstance(final, Exception), final


def test_what_the_sdk_helper_makes_of_the_broken_calls() -> None:
    def first_call(code: str) -> tuple[Any, Any, Any]:
        call = _sdk_final(SDK_TAKES[code]).choices[0].message.tool_calls[0]
        return call.id, call.function.name, call.function.arguments

    assert first_call("orphan_arguments_delta") == (None, None, '{"a": 1}')
    assert first_call("duplicate_tool_call") == ("call_1call_2", "readread", '{"path": "a"}')
    assert first_call("incomplete_tool_call_start") == (None, "read", "{}")
    same_id_twice = [opening(0, "c", "read", "{"), opening(0, "c", "read", "}")]
    call = _sdk_final([*same_id_twice, chunk(finish="tool_calls"), DONE]).choices[0]
    assert (call.message.tool_calls[0].id, call.message.tool_calls[0].function.name) == (
        "cc",
        "readread",
    )
    strict_tool = {
        "type": "function",
        "function": {"name": "read", "strict": True, "parameters": {}},
    }
    nan = _sdk_final(SDK_TAKES["invalid_tool_json"], tools=[strict_tool])
    assert (
        json.dumps(nan.choices[0].message.tool_calls[0].function.parsed_arguments) == '{"n": NaN}'
    )


@pytest.mark.parametrize(
    ("reason", "error"),
    [("length", "LengthFinishReasonError"), ("content_filter", "ContentFilterFinishReasonError")],
)
def test_the_sdk_helper_raises_for_a_cut_answer_where_the_adapter_does(
    reason: str, error: str
) -> None:
    items = [*text("Cut"), chunk(finish=reason), DONE]
    assert failure(items)[1].code == "unsupported_finish_reason"
    assert type(_sdk_final(items)).__name__ == error


def test_the_sdk_raises_its_api_error_for_an_error_line() -> None:
    import openai

    line = {"error": {"message": "The server had an error.", "type": "server_error", "code": None}}
    assert isinstance(_sdk_final([*text("Hi"), line]), openai.APIError)
