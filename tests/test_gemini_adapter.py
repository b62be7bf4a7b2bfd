"""The Gemini adapter on the shapes public recordings of the API hold, and each refusal.

The chunks below are taken from real recordings (pydantic-ai's and llm-gemini's
cassettes of `streamGenerateContent`, thought signatures shortened):
`tests/data/gemini/llm_gemini_tool_call_array.json` is one whole body without `alt=sse`,
the streamed JSON array, as the API sent it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from harness._events import DoneEvent, TextEvent, ToolCall, ToolCallEvent
from harness._exceptions import APIErrorEvent, StreamProtocolError
from harness._providers.gemini.adapter import GeminiAdapter, ato_model_events, to_model_events
from harness._providers.jsonarray import ArrayDecoder

DATA = Path(__file__).parent / "data" / "gemini"
USAGE = {"promptTokenCount": 29, "candidatesTokenCount": 10, "totalTokenCount": 149}
COMMON = {"usageMetadata": USAGE, "modelVersion": "gemini-3-pro-preview", "responseId": "SVV8"}


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **COMMON, **extra}


def call(name: str | None = None, **fields: Any) -> dict[str, Any]:
    found = dict(fields)
    if name is not None:
        found["name"] = name
    return {"functionCall": found}


def events(chunks: list[Any], **options: Any) -> list[Any]:
    return list(to_model_events(chunks, **options))


def code_of(chunks: list[Any], **options: Any) -> str:
    with pytest.raises(StreamProtocolError) as raised:
        events(chunks, **options)
    assert str(raised.value).startswith("Gemini stream protocol error: ")
    return raised.value.code


# -- read ----------------------------------------------------------------------------------


def test_stop_with_a_call_and_the_finish_in_a_trailing_chunk() -> None:
    """pydantic-ai's `test_google_streaming_tool_call_thought_signature`: the call (no id,
    a thought signature beside it), then `STOP` with an empty text part."""
    got = events(
        [
            chunk(call("get_country", args={}) | {"thoughtSignature": "Et8ECtwE"}),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    assert got == [ToolCallEvent(ToolCall("call_0", "get_country", {})), DoneEvent()]


def test_text_pieces_then_stop() -> None:
    got = events(
        [
            chunk({"text": "The capital of Mexico"}),
            chunk({"text": " is Mexico City."}),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    assert got == [TextEvent("The capital of Mexico"), TextEvent(" is Mexico City."), DoneEvent()]


def test_thoughts_code_execution_and_usage_alone_are_passed_over() -> None:
    got = events(
        [
            chunk({"text": "Let me think", "thought": True}),
            chunk({"executableCode": {"language": "PYTHON", "code": "print(2+2)"}}),
            chunk({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "4\n"}}),
            chunk({"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}}),
            chunk({"text": "4"}, finish="STOP"),
            {"usageMetadata": USAGE},
        ]
    )
    assert got == [TextEvent("4"), DoneEvent()]


def test_an_id_the_api_gives_is_kept_and_a_missing_one_follows_the_position() -> None:
    got = events(
        [
            chunk(call("a", args={"x": 1}, id="c9bjmkfz"), call("b", args={"y": 2})),
            chunk(finish="STOP"),
        ]
    )
    assert got[:2] == [
        ToolCallEvent(ToolCall("c9bjmkfz", "a", {"x": 1})),
        ToolCallEvent(ToolCall("call_1", "b", {"y": 2})),
    ]


def test_the_llm_gemini_array_body_re_chunked_at_every_byte() -> None:
    body = (DATA / "llm_gemini_tool_call_array.json").read_bytes()
    decoder = ArrayDecoder()
    chunks = [found for at in range(len(body)) for found in decoder.feed(body[at : at + 1])]
    decoder.finish()
    assert len(chunks) == 2
    assert events(chunks) == [
        ToolCallEvent(ToolCall("c9bjmkfz", "pelican_name_generator", {"type": "funny"})),
        DoneEvent(),
    ]


def test_streamed_arguments_by_json_path() -> None:
    """Vertex's `streamFunctionCallArguments`: the call opens with its name, its arguments
    come as values at JSON paths (a string in pieces), an empty `functionCall` closes it."""
    pieces = [
        chunk(call("get_weather", willContinue=True)),
        chunk(
            call(
                partialArgs=[
                    {"jsonPath": "$.location", "stringValue": "Bos", "willContinue": True}
                ],
                willContinue=True,
            )
        ),
        chunk(
            call(partialArgs=[{"jsonPath": "$.location", "stringValue": "ton"}], willContinue=True)
        ),
        chunk(
            call(
                partialArgs=[
                    {"jsonPath": "$.days", "numberValue": 3},
                    {"jsonPath": "$.stops[0]['name']", "stringValue": "MIT"},
                    {"jsonPath": "$.metric", "boolValue": True},
                    {"jsonPath": "$.note", "nullValue": "NULL_VALUE"},
                ],
                willContinue=True,
            )
        ),
        chunk(call()),
        chunk({"text": ""}, finish="STOP"),
    ]
    arguments = {
        "location": "Boston",
        "days": 3,
        "stops": [{"name": "MIT"}],
        "metric": True,
        "note": None,
    }
    assert events(pieces) == [
        ToolCallEvent(ToolCall("call_0", "get_weather", arguments)),
        DoneEvent(),
    ]


def _piece(path: str, value: str, goes_on: bool = True, **more: Any) -> dict[str, Any]:
    piece = {"jsonPath": path, "stringValue": value, **more}
    if goes_on:
        piece["willContinue"] = True
    return chunk(call(partialArgs=[piece], willContinue=True))


@pytest.mark.parametrize("extra", [{}, {"note": "a field no rule reads"}], ids=["fast", "rules"])
def test_a_string_in_many_pieces_is_joined_once_at_the_calls_close(extra: dict[str, Any]) -> None:
    """The next piece of the string the last one left going on is read on the adapter's
    fast path (`extra`: the same pieces, each with a field that sends it through every
    rule instead); a piece of another path between them, and a string's last piece."""
    pieces = [_piece("$.body", "x", **extra) for _ in range(50_000)]
    got = events(
        [
            chunk(call("write", willContinue=True)),
            *pieces[:3],
            _piece("$.path", "notes.md", goes_on=False, **extra),
            *pieces[3:],
            _piece("$.body", "!", goes_on=False, **extra),
            _piece("$.title", "a", **extra),
            _piece("$.title", "b", **extra),
            chunk(call()),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    arguments = {"body": "x" * 50_000 + "!", "path": "notes.md", "title": "ab"}
    assert got == [ToolCallEvent(ToolCall("call_0", "write", arguments)), DoneEvent()]


def test_a_path_into_a_string_still_streaming_is_refused_as_into_any_string() -> None:
    with pytest.raises(StreamProtocolError) as raised:
        events([chunk(call("f", willContinue=True)), _piece("$.a", "x"), _piece("$.a.b", "y")])
    assert raised.value.code == "bad_json_path"
    assert raised.value.fields["why"] == "key 'b' into a string"


def test_a_widened_policy_lets_max_tokens_complete_the_answer() -> None:
    got = events(
        [chunk({"text": "cut"}, finish="MAX_TOKENS")], finish_reasons={"STOP", "MAX_TOKENS"}
    )
    assert got == [TextEvent("cut"), DoneEvent()]


def test_the_async_driver_is_the_same_machine() -> None:
    async def chunks() -> AsyncIterator[dict[str, Any]]:
        yield chunk({"text": "hi"})
        yield chunk(finish="STOP")

    async def collect() -> list[Any]:
        return [event async for event in ato_model_events(chunks())]

    assert asyncio.run(collect()) == [TextEvent("hi"), DoneEvent()]


# -- refused -------------------------------------------------------------------------------


def test_malformed_function_call_without_content() -> None:
    """What the API sends when the model's call did not parse: no content at all."""
    malformed = {"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}], **COMMON}
    assert code_of([malformed]) == "unsupported_finish_reason"


def test_a_finish_chunk_without_parts_or_without_content_ends_the_answer() -> None:
    """The finish as other readers met it: after a call, a `content` of a role alone
    (pydantic-ai#2631, where the reader raised); after text, no `content` at all, the
    reason and usage alone (req_llm#638, where the reason was lost). Either is the finish."""
    weather = chunk(call("get_weather", args={"city": "Paris"}))
    role_alone = {"candidates": [{"content": {"role": "model"}, "finishReason": "STOP"}], **COMMON}
    assert events([weather, role_alone]) == [
        ToolCallEvent(ToolCall("call_0", "get_weather", {"city": "Paris"})),
        DoneEvent(),
    ]
    bare = {"candidates": [{"finishReason": "STOP"}], **COMMON}
    assert events([chunk({"text": "Paris."}), bare]) == [TextEvent("Paris."), DoneEvent()]


def test_grounding_metadata_is_passed_over_before_at_and_after_the_finish() -> None:
    """Google Search grounding streams its metadata in pieces: the queries early, the
    sources with the finish or after it (vercel/ai#13123). None of it is the answer."""
    queries = {"webSearchQueries": ["capital of France"]}
    sources = {**queries, "groundingChunks": [{"web": {"uri": "https://example.org"}}]}
    urls = {"urlMetadata": [{"retrievedUrl": "https://example.org"}]}
    early = chunk({"text": "Paris."})
    early["candidates"][0]["groundingMetadata"] = queries
    ended = chunk({"text": ""}, finish="STOP")
    ended["candidates"][0] |= {"groundingMetadata": sources, "urlContextMetadata": urls}
    late = {"candidates": [{"groundingMetadata": sources, "index": 0}], **COMMON}
    assert events([early, ended, late]) == [TextEvent("Paris."), DoneEvent()]


@pytest.mark.parametrize(
    "chunks",
    [
        # a finishReason on every chunk: the API's own for gemini-pro in 2023-24
        # (NextChat#3703, litellm#2195), a translating proxy's still (#100 of
        # github-copilot-api-vscode)
        [
            chunk({"text": "Paris "}, finish="STOP"),
            chunk({"text": "is the capital."}, finish="STOP"),
        ],
        # an empty STOP before the text (kelivo#1003: a gateway's translation of reasoning)
        [chunk(finish="STOP"), chunk({"text": "Paris."}), chunk(finish="STOP")],
    ],
    ids=["stop_on_every_chunk", "empty_stop_first"],
)
def test_a_finish_reason_before_the_last_text_is_refused_not_guessed_past(
    chunks: list[Any],
) -> None:
    """The first finishReason ends the answer: text after it is `chunk_after_finish`, as
    text after Chat's finish_reason is, not a sign that a later STOP is the real one."""
    assert code_of(chunks) == "chunk_after_finish"


@pytest.mark.parametrize(
    ("chunks", "code"),
    [
        (
            [{"candidates": [chunk()["candidates"][0], {"index": 1}]}],
            "multiple_candidates",
        ),
        ([chunk({"text": "no end"})], "missing_finish_reason"),
        ([chunk({"text": "a"}, finish="STOP"), chunk({"text": "more"})], "chunk_after_finish"),
        ([chunk(finish="STOP"), chunk(call("late", args={}))], "chunk_after_finish"),
        ([chunk(finish="STOP"), chunk(finish="MAX_TOKENS")], "chunk_after_finish"),
        ([chunk(call("f", args={})), chunk(finish="SAFETY")], "unsupported_finish_reason"),
        ([{"promptFeedback": {"blockReason": "SAFETY"}, **COMMON}], "prompt_blocked"),
        ([chunk(call(args={}))], "unnamed_function_call"),
        ([chunk(call("f", args=[1, 2]))], "non_object_tool_input"),
        (
            [chunk(call(partialArgs=[{"jsonPath": "$.a", "stringValue": "x"}]))],
            "orphan_partial_args",
        ),
        (
            [chunk(call("a", willContinue=True)), chunk(call("b", args={}))],
            "overlapping_function_call",
        ),
        ([chunk(call("a", willContinue=True), finish="STOP")], "unfinished_function_call"),
        ([chunk(call("a", willContinue=True))], "unfinished_function_call"),
        (
            [
                chunk(
                    call(
                        "a", willContinue=True, partialArgs=[{"jsonPath": "$[0]", "numberValue": 1}]
                    )
                )
            ],
            "bad_json_path",
        ),
        (
            [
                chunk(
                    call(
                        "a",
                        willContinue=True,
                        partialArgs=[{"jsonPath": "city", "stringValue": "x"}],
                    )
                )
            ],
            "bad_json_path",
        ),
        (
            [
                chunk(
                    call(
                        "a",
                        willContinue=True,
                        partialArgs=[{"jsonPath": "$.l[2]", "numberValue": 1}],
                    )
                )
            ],
            "bad_json_path",
        ),
    ],
)
def test_each_refusal_has_its_code(chunks: list[Any], code: str) -> None:
    assert code_of(chunks) == code


def test_an_error_chunk_is_the_apis_error_by_its_status() -> None:
    error = {
        "error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}
    }
    with pytest.raises(APIErrorEvent) as raised:
        events([chunk({"text": "a"}), error])
    body: Any = raised.value.body
    assert body["error"]["type"] == "RESOURCE_EXHAUSTED"


def test_a_failed_machine_stays_failed() -> None:
    adapter = GeminiAdapter()
    with pytest.raises(StreamProtocolError):
        adapter.feed(chunk({"functionCall": {"args": {}}}))
    with pytest.raises(StreamProtocolError) as again:
        adapter.feed(chunk({"text": "a"}))
    assert again.value.code == "unnamed_function_call"


def test_a_chunk_that_is_not_an_object_is_an_empty_response_as_google_genai_reads_it() -> None:
    answer = [TextEvent("a"), DoneEvent()]
    assert events([["not", "an", "object"], "text", chunk({"text": "a"}, finish="STOP")]) == answer
    assert events([chunk({"text": "a"}, finish="STOP"), [1]]) == answer


def test_the_finish_on_every_chunk_row_is_the_stream_gemini_pro_sent() -> None:
    """The fault row of that stream (docs/gemini.md, "What other readers met"): each
    chunk of the answer carries the finish's reason, the adapter refuses it where the
    second begins, and an answer of one chunk before its finish has no such row."""
    from harness.faults import derive_variants, stream_lines

    library = Path(__file__).resolve().parent.parent / "cassettes" / "gemini"

    def row(name: str) -> Any:
        variants = derive_variants(stream_lines(library / name), provider="gemini")
        return next((v for v in variants if v.fault.name == "finish_on_every_chunk"), None)

    variant = row("text.jsonl")
    reasons = [chunk["candidates"][0].get("finishReason") for chunk in variant.events]
    assert reasons == ["STOP"] * 4
    assert variant.expected_code == "chunk_after_finish"
    assert code_of(variant.events) == "chunk_after_finish"
    assert row("one_tool.jsonl") is None


def test_the_prompt_blocked_row_replaces_the_answer_by_the_apis_blocked_chunk() -> None:
    """What the API sends for a prompt it blocked, as the row makes it from any answer:
    the lines before the first chunk kept, then `promptFeedback.blockReason` alone."""
    from harness.faults import derive_variants, stream_lines

    library = Path(__file__).resolve().parent.parent / "cassettes" / "gemini"
    variants = derive_variants(stream_lines(library / "parallel_tools.jsonl"), provider="gemini")
    [variant] = [v for v in variants if v.fault.name == "prompt_blocked"]
    [blocked] = variant.events
    assert blocked["promptFeedback"] == {"blockReason": "SAFETY"} and "candidates" not in blocked
    assert variant.expected_code == code_of(variant.events) == "prompt_blocked"
