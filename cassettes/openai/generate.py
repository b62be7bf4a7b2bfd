"""Write the OpenAI cassette library (Chat Completions and Responses), reproducibly.

    python cassettes/openai/generate.py            # rewrite cassettes/openai/ in place
    python cassettes/openai/generate.py OUT_DIR    # write it elsewhere (tests compare the two)

Each cassette is one small function below, registered with its path (`chat/...` or
`responses/...`, the provider its header names) and the header `description` that says
what it shows; `errors/<code>.jsonl` (or `errors/<code>_<variant>.jsonl`) replays to that
code of its provider's table, every other cassette to done. `<api>/sessions/<name>/` is a
multi-turn session, one `turn-NN.jsonl` a response, each header's `request` the
conversation so far in that API's request shape. Lines are the SSE `data` objects of one
answer, in order; Chat's `data: [DONE]` is the line `{"harness": "done"}`
(docs/cassettes.md). Add a cassette by adding a function, run this script, then
`pytest --snapshot-update` and review the new snapshot like code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import ChatStreamBuilder, ResponsesStreamBuilder, make_header, write_cassette
from harness._providers.openai_chat.profiles import DEVIATIONS, PROFILES

MODEL = "gpt-4.1-mini"
CHAT = "openai-chat"
RESPONSES = "openai-responses"
COMPLETION_ID = "chatcmpl-HarnessSynthetic"
RESPONSE_ID = "resp_HarnessSynthetic"
#: the message items' ids: an answer's, a refusal's, and what a refusal says
ANSWER_ID = "msg_01Answer"
REFUSAL_ID = "msg_01Refusal"
REFUSAL = "I can't help with that."

Lines = list[dict[str, Any]]
Recipe = Callable[[], Lines]

#: relative path -> (provider, description, request or None, recipe), in writing order.
LIBRARY: dict[str, tuple[str, str, dict[str, Any] | None, Recipe]] = {}


def cassette(
    path: str, description: str, request: dict[str, Any] | None = None
) -> Callable[[Recipe], Recipe]:
    """Register a recipe under `path` (relative to the library folder: `chat/` or
    `responses/`), with the request body its header keeps, if any."""
    provider = CHAT if path.startswith("chat/") else RESPONSES

    def register(recipe: Recipe) -> Recipe:
        LIBRARY[path] = (provider, description, request, recipe)
        return recipe

    return register


# Chat Completions ------------------------------------------------------------------------


def chat(ident: str = COMPLETION_ID, *, start: bool = True) -> ChatStreamBuilder:
    """A Chat answer being written, its role chunk first unless `start=False`."""
    return ChatStreamBuilder(model=MODEL, completion_id=ident, start=start)


def weather_call(
    builder: ChatStreamBuilder, arguments: str, index: int = 0, ident: str = "call_01Weather"
) -> ChatStreamBuilder:
    """A get_weather call at `index`: its opening piece, then its arguments in two pieces."""
    return builder.tool(index, WEATHER_TOOL, arguments, id=ident, pieces=[len(arguments) // 2])


@cassette(
    "chat/text.jsonl",
    "A plain answer in three content pieces, finish_reason stop, the usage chunk, [DONE].",
)
def chat_text_only() -> Lines:
    return chat().text("Paris is ", "the capital ", "of France.").stop(usage=True).events()


@cassette(
    "chat/one_tool.jsonl",
    "One tool call (get_weather), its arguments in two pieces, finish_reason tool_calls.",
)
def chat_one_tool() -> Lines:
    return weather_call(chat(), '{"city": "Paris"}').stop().events()


@cassette(
    "chat/parallel_tools.jsonl",
    "Two tool calls whose pieces interleave (index 0, 1, 0, 1); yielded in opening order.",
)
def chat_parallel_tools() -> Lines:
    paris = chat(start=False).tool(
        0, WEATHER_TOOL, '{"city": "Paris"}', id="call_01Paris", pieces=1
    )
    rome = chat(start=False).tool(1, WEATHER_TOOL, '{"city": "Rome"}', id="call_02Rome", pieces=1)
    return chat().interleave([paris, rome], order=[0, 1, 0, 1]).stop().events()


@cassette("chat/zero_argument_tool.jsonl", "A tool call with empty arguments: its input is {}.")
def chat_zero_argument_tool() -> Lines:
    return chat().tool(0, "get_time", "", id="call_01Time").stop().events()


@cassette("chat/reasoning.jsonl", "reasoning_content deltas (passed over), then the answer's text.")
def chat_reasoning() -> Lines:
    return chat().reasoning("The user asks ", "for a capital.").text("Paris.").stop().events()


@cassette(
    "chat/errors/refusal.jsonl",
    "The model refuses (delta.refusal): refusal, as the strict adapter's default.",
)
def chat_refusal() -> Lines:
    return chat().refusal("I can't ", "help with that.").stop().events()


@cassette(
    "chat/errors/server_error.jsonl", 'An {"error": ...} line mid-stream: api_error:server_error.'
)
def chat_server_error() -> Lines:
    return chat().text("Paris ").error("The server had an error.", "server_error").events()


@cassette(
    "chat/errors/orphan_arguments_delta.jsonl",
    "An arguments piece at index 0, which no piece opened.",
)
def chat_orphan_arguments_delta() -> Lines:
    return chat().arguments(0, '{"city": "Paris"}').stop("tool_calls").events()


@cassette("chat/errors/duplicate_tool_call.jsonl", "Index 0 opened again with another id.")
def chat_duplicate_tool_call() -> Lines:
    builder = chat().call_start(0, WEATHER_TOOL, id="call_01Weather")
    return builder.call_start(0, WEATHER_TOOL, id="call_02Other").stop().events()


@cassette(
    "chat/errors/incomplete_tool_call_start.jsonl",
    "A call's first piece has an id and no function name.",
)
def chat_incomplete_tool_call_start() -> Lines:
    return chat().call_start(0, None, id="call_01").done().events()


@cassette("chat/errors/invalid_tool_json.jsonl", "A call's joined arguments are cut JSON.")
def chat_invalid_tool_json() -> Lines:
    return weather_call(chat(), '{"city": "Par').stop().events()


@cassette(
    "chat/errors/non_object_tool_input.jsonl", "A call's arguments are a JSON list, not an object."
)
def chat_non_object_tool_input() -> Lines:
    return weather_call(chat(), '["Paris"]').stop().events()


@cassette(
    "chat/errors/unfinished_tool_calls.jsonl", "[DONE] with a tool call open and no finish_reason."
)
def chat_unfinished_tool_calls() -> Lines:
    return weather_call(chat(), '{"city": "Paris"}').done().events()


@cassette(
    "chat/errors/missing_done.jsonl", "finish_reason stop, then the body ends without [DONE]."
)
def chat_missing_done() -> Lines:
    return chat().text("Paris.").finish("stop").events()


@cassette("chat/errors/missing_finish_reason.jsonl", "[DONE] before choice 0 gave a finish_reason.")
def chat_missing_finish_reason() -> Lines:
    return chat().text("Paris.").done().events()


@cassette(
    "chat/errors/unsupported_finish_reason.jsonl", "finish_reason length: the answer was cut."
)
def chat_unsupported_finish_reason() -> Lines:
    return chat().text("Paris is").stop("length").events()


@cassette(
    "chat/errors/stop_with_tool_calls.jsonl",
    "finish_reason stop with a tool call (no forcing tool_choice).",
)
def chat_stop_with_tool_calls() -> Lines:
    return weather_call(chat(), '{"city": "Paris"}').stop("stop").events()


@cassette(
    "chat/errors/tool_calls_without_tool_calls.jsonl", "finish_reason tool_calls after text alone."
)
def chat_tool_calls_without_tool_calls() -> Lines:
    return chat().text("Paris.").stop("tool_calls").events()


@cassette("chat/errors/inconsistent_chunk.jsonl", "A chunk of another completion id mid-answer.")
def chat_inconsistent_chunk() -> Lines:
    return chat().chunk({"content": "Paris."}, completion_id="chatcmpl-Other").stop().events()


@cassette("chat/errors/chunk_after_finish.jsonl", "Content for choice 0 after its finish_reason.")
def chat_chunk_after_finish() -> Lines:
    return chat().text("Paris.").finish("stop").text(" Also Lyon.").done().events()


@cassette("chat/errors/chunk_after_done.jsonl", "A chunk after [DONE].")
def chat_chunk_after_done() -> Lines:
    return chat().text("Paris.").stop().usage().events()


@cassette("chat/errors/multiple_choices.jsonl", "A chunk of choice 1 (n=2): only choice 0 is read.")
def chat_multiple_choices() -> Lines:
    return chat().chunk({"content": "Rome."}, index=1).stop().events()


@cassette("chat/errors/refusal_after_text.jsonl", "Text, then a refusal piece: refusal.")
def chat_refusal_after_text() -> Lines:
    return chat().text("Well, ").refusal("I can't help with that.").stop().events()


@cassette(
    "chat/empty_name_on_later_pieces.jsonl",
    'A call whose later pieces carry function.name "" (LM Studio): no name, not a second one.',
)
def chat_empty_name_on_later_pieces() -> Lines:
    builder = chat().call_start(0, WEATHER_TOOL, id="call_01Weather")
    for text in ARG_HALVES:
        builder.chunk({"tool_calls": [{"index": 0, "function": {"name": "", "arguments": text}}]})
    return builder.stop("tool_calls").events()


#: a get_weather call's arguments, in the two pieces a server streams them in
ARG_HALVES = ('{"city": ', '"Paris"}')
MISTRAL_ID = "3a9c4f0e8b2d4c6f9e1a7b5d2c8f0e4a"


def thinking_part(text: str) -> dict[str, Any]:
    """A Mistral `thinking` part: its text in a list of `text` parts."""
    return {"type": "thinking", "thinking": [{"type": "text", "text": text}]}


def mistral_content() -> Lines:
    """A Magistral answer as Mistral streams it: `delta.content` a list of parts, the
    reasoning's `thinking` parts first, then the answer's `text` parts."""
    parts: list[list[dict[str, Any]]] = [
        [thinking_part("The user asks ")],
        [thinking_part("for a capital.")],
        [{"type": "text", "text": "Paris is "}],
        [{"type": "text", "text": "the capital of France."}],
    ]
    builder = chat(MISTRAL_ID)
    for found in parts:
        builder.chunk({"content": found})
    return builder.stop("stop", usage=True).events()


@cassette(
    "chat/errors/non_string_content.jsonl",
    "A Magistral answer whose delta.content is a list of thinking and text parts (Mistral): "
    "non_string_content, not done with its text dropped (`--profile mistral` reads it).",
)
def chat_non_string_content() -> Lines:
    return mistral_content()


# A session each: the user asks, the model calls get_weather, the tool answers, the model
# answers in text. Turn N's request is the conversation before its response, in the API's
# own request shape; turn N+1's adds turn N's answer and the tool's result.

QUESTION = "What is the weather in Paris?"
ARGUMENTS = '{"city": "Paris"}'
#: what get_weather returned, as the tool's message gives it back
WEATHER = '{"temperature_c": 18, "sky": "cloudy"}'
ANSWER = ("It is 18 degrees ", "and cloudy in Paris.")
PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
WEATHER_TOOL = "get_weather"
WEATHER_DOES = "The current weather in a city."
CHAT_SESSION = "chat/sessions/weather"
CHAT_TOOLS = [
    {
        "type": "function",
        "function": {"name": WEATHER_TOOL, "description": WEATHER_DOES, "parameters": PARAMETERS},
    }
]
CHAT_ASKED: Lines = [{"role": "user", "content": QUESTION}]
CHAT_ANSWERED: Lines = [
    *CHAT_ASKED,
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_01Weather",
                "type": "function",
                "function": {"name": WEATHER_TOOL, "arguments": ARGUMENTS},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_01Weather", "content": WEATHER},
]


def chat_request(messages: Lines) -> dict[str, Any]:
    """A Chat Completions request body, as the SDK sends `create(stream=True, ...)`."""
    return {
        "model": MODEL,
        "messages": messages,
        "tools": CHAT_TOOLS,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


@cassette(
    f"{CHAT_SESSION}/turn-01.jsonl",
    "weather turn 1: the user asks; one get_weather call, finish_reason tool_calls.",
    chat_request(CHAT_ASKED),
)
def chat_session_turn_1() -> Lines:
    return weather_call(chat("chatcmpl-HarnessWeatherTurn1"), ARGUMENTS).stop(usage=True).events()


@cassette(
    f"{CHAT_SESSION}/turn-02.jsonl",
    "weather turn 2: the call and its role: tool result sent back; the answer's text.",
    chat_request(CHAT_ANSWERED),
)
def chat_session_turn_2() -> Lines:
    return chat("chatcmpl-HarnessWeatherTurn2").text(*ANSWER).stop(usage=True).events()


# Responses ------------------------------------------------------------------------------


def responses(ident: str = RESPONSE_ID) -> ResponsesStreamBuilder:
    """A Responses answer being written, from response.created and in_progress."""
    return ResponsesStreamBuilder(model=MODEL, response_id=ident)


def weather_item(
    builder: ResponsesStreamBuilder,
    index: int,
    arguments: str,
    *,
    name: str = WEATHER_TOOL,
    call_id: str = "call_01Weather",
    final: str | None = None,
) -> ResponsesStreamBuilder:
    """A function_call item at `index`, its arguments in two deltas (`final`: the done
    item's arguments, when they differ)."""
    cut = [len(arguments) // 2]
    return builder.call(index, name, arguments, call_id=call_id, pieces=cut, final=final)


#: a message item as output_item.added carries it, for the streams that break one
OPEN_MESSAGE: dict[str, Any] = {
    "type": "message",
    "id": "msg_01",
    "role": "assistant",
    "content": [],
}


@cassette(
    "responses/text.jsonl",
    "A plain answer: one message item, its text in three deltas, response.completed.",
)
def responses_text() -> Lines:
    answer = ("Paris is ", "the capital ", "of France.")
    return responses().message(0, *answer, id=ANSWER_ID).completed().events()


@cassette(
    "responses/one_tool.jsonl",
    "One function_call item (get_weather), yielded at its output_item.done.",
)
def responses_one_tool() -> Lines:
    return weather_item(responses(), 0, '{"city": "Paris"}').completed().events()


@cassette("responses/parallel_tools.jsonl", "Two function_call items, at output indexes 0 and 1.")
def responses_parallel_tools() -> Lines:
    builder = weather_item(responses(), 0, '{"city": "Paris"}', call_id="call_01Paris")
    return weather_item(builder, 1, '{"city": "Rome"}', call_id="call_02Rome").completed().events()


@cassette(
    "responses/zero_argument_tool.jsonl", "A function_call with empty arguments: its input is {}."
)
def responses_zero_argument_tool() -> Lines:
    builder = weather_item(responses(), 0, "", name="get_time", call_id="call_01Time")
    return builder.completed().events()


@cassette(
    "responses/one_piece_call.jsonl",
    "A function_call whose arguments come whole in arguments.done and the done item, no "
    "delta (LM Studio): one call, as Chat reads a call sent in one piece.",
)
def responses_one_piece_call() -> Lines:
    lines = weather_item(responses(), 0, '{"city": "Paris"}').completed().events()
    kept = [line for line in lines if line["type"] != "response.function_call_arguments.delta"]
    return [{**line, "sequence_number": number} for number, line in enumerate(kept)]


def unnumbered(lines: Lines) -> Lines:
    """The events without `sequence_number`, as the API sent them before mid-2025."""
    return [
        {key: value for key, value in line.items() if key != "sequence_number"} for line in lines
    ]


@cassette(
    "responses/unnumbered.jsonl",
    "A plain answer whose events carry no sequence_number (the API before mid-2025, some "
    "compatible servers): read as unnumbered.",
)
def responses_unnumbered() -> Lines:
    return unnumbered(responses_text())


@cassette(
    "responses/errors/sequence_gap_partly_numbered.jsonl",
    "An unnumbered stream one of whose events carries a sequence_number: sequence_gap.",
)
def responses_sequence_gap_partly_numbered() -> Lines:
    lines = unnumbered(responses_text())
    lines[4]["sequence_number"] = 4
    return lines


@cassette(
    "responses/reasoning.jsonl",
    "A reasoning item and its summary events (passed over), then the answer.",
)
def responses_reasoning() -> Lines:
    builder = responses().reasoning(0, "A capital.", id="rs_01Think")
    return builder.message(1, "Paris.", id=ANSWER_ID).completed().events()


@cassette(
    "responses/errors/refusal.jsonl",
    "The model refuses (a refusal part, response.refusal.delta): refusal, as the strict "
    "adapter's default.",
)
def responses_refusal() -> Lines:
    return responses().refusal(0, REFUSAL, id=REFUSAL_ID).completed().events()


@cassette(
    "responses/errors/server_error.jsonl", "An error event mid-stream: api_error:server_error."
)
def responses_server_error() -> Lines:
    return responses().error("server_error", "The server had an error.").events()


@cassette(
    "responses/errors/missing_response_created.jsonl",
    "The stream begins with response.in_progress.",
)
def responses_missing_response_created() -> Lines:
    return responses().events()[1:]


@cassette(
    "responses/errors/orphan_delta.jsonl", "A text delta at output index 3, which was never added."
)
def responses_orphan_delta() -> Lines:
    return responses().text_delta(3, "msg_x", "Hi").completed().events()


@cassette("responses/errors/duplicate_output_item.jsonl", "Output index 0 added twice.")
def responses_duplicate_output_item() -> Lines:
    builder = responses().item_added(0, OPEN_MESSAGE).item_added(0, OPEN_MESSAGE)
    return builder.completed().events()


@cassette("responses/errors/invalid_tool_json.jsonl", "A function_call's arguments are cut JSON.")
def responses_invalid_tool_json() -> Lines:
    return weather_item(responses(), 0, '{"city": "Par').completed().events()


@cassette(
    "responses/errors/non_object_tool_input.jsonl", "A function_call's arguments are a JSON list."
)
def responses_non_object_tool_input() -> Lines:
    return weather_item(responses(), 0, '["Paris"]').completed().events()


@cassette(
    "responses/errors/arguments_mismatch.jsonl", "The done item's arguments differ from the deltas."
)
def responses_arguments_mismatch() -> Lines:
    builder = weather_item(responses(), 0, '{"city": "Paris"}', final='{"city": "Rome"}')
    return builder.completed().events()


@cassette(
    "responses/errors/output_mismatch.jsonl",
    "Every event streams the answer Paris., and response.completed's output says Rome.: "
    "get_final_response() would read Rome.",
)
def responses_output_mismatch() -> Lines:
    builder = responses().message(0, "Paris.", id=ANSWER_ID)
    rome = {"type": "output_text", "text": "Rome.", "annotations": []}
    item = {**OPEN_MESSAGE, "id": ANSWER_ID, "status": "completed", "content": [rome]}
    return builder.lifecycle("response.completed", "completed", output=[item]).events()


@cassette(
    "responses/errors/unfinished_output_items.jsonl",
    "response.completed with a message item still open.",
)
def responses_unfinished_output_items() -> Lines:
    return responses().item_added(0, OPEN_MESSAGE).completed().events()


@cassette(
    "responses/errors/missing_response_completed.jsonl",
    "The body ends after the message, with no terminal event.",
)
def responses_missing_response_completed() -> Lines:
    return responses().message(0, "Paris.", id=ANSWER_ID).events()


@cassette(
    "responses/errors/response_incomplete.jsonl",
    "response.incomplete (max_output_tokens): the answer was cut.",
)
def responses_response_incomplete() -> Lines:
    builder = responses().message(0, "Paris is", id=ANSWER_ID)
    return builder.incomplete("max_output_tokens").events()


@cassette("responses/errors/response_failed.jsonl", "response.failed with the response's error.")
def responses_response_failed() -> Lines:
    return responses().failed("server_error", "The model failed to answer.").events()


@cassette(
    "responses/errors/event_after_response_completed.jsonl", "An event after response.completed."
)
def responses_event_after_response_completed() -> Lines:
    builder = responses().message(0, "Paris.", id=ANSWER_ID).completed()
    return builder.lifecycle("response.in_progress", "in_progress").events()


@cassette("responses/errors/sequence_gap.jsonl", "A sequence_number skipped.")
def responses_sequence_gap() -> Lines:
    lines = responses().message(0, "Paris.", id=ANSWER_ID).completed().events()
    return [
        *lines[:3],
        *({**line, "sequence_number": line["sequence_number"] + 1} for line in lines[3:]),
    ]


@cassette(
    "responses/errors/inconsistent_response.jsonl", "response.completed of another response id."
)
def responses_inconsistent_response() -> Lines:
    builder = responses().message(0, "Paris.", id=ANSWER_ID)
    builder.response_id = "resp_Other"
    return builder.completed().events()


@cassette(
    "responses/errors/refusal_after_text.jsonl",
    "Text in one item, then a refusal in the next: refusal.",
)
def responses_refusal_after_text() -> Lines:
    builder = responses().message(0, "Well.", id=ANSWER_ID)
    return builder.refusal(1, REFUSAL, id=REFUSAL_ID).completed().events()


@cassette(
    "responses/errors/unsupported_output_item.jsonl",
    "A custom_tool_call item, whose free-text input no ToolCallEvent says.",
)
def responses_unsupported_output_item() -> Lines:
    item = {
        "type": "custom_tool_call",
        "id": "ctc_01",
        "call_id": "call_01",
        "name": "grammar",
        "input": "",
    }
    return responses().item_added(0, item).completed().events()


RESPONSES_SESSION = "responses/sessions/weather"
RESPONSES_TOOLS = [
    {
        "type": "function",
        "name": WEATHER_TOOL,
        "description": WEATHER_DOES,
        "parameters": PARAMETERS,
    }
]
RESPONSES_ASKED: Lines = [{"role": "user", "content": QUESTION}]
RESPONSES_ANSWERED: Lines = [
    *RESPONSES_ASKED,
    {
        "type": "function_call",
        "id": "fc_01Weather",
        "call_id": "call_01Weather",
        "name": WEATHER_TOOL,
        "arguments": ARGUMENTS,
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_01Weather", "output": WEATHER},
]


def responses_request(items: Lines) -> dict[str, Any]:
    """A Responses request body, as the SDK sends `responses.create(stream=True, ...)`."""
    return {"model": MODEL, "input": items, "tools": RESPONSES_TOOLS, "stream": True}


@cassette(
    f"{RESPONSES_SESSION}/turn-01.jsonl",
    "weather turn 1: the user asks; one get_weather function_call item.",
    responses_request(RESPONSES_ASKED),
)
def responses_session_turn_1() -> Lines:
    return weather_item(responses("resp_HarnessWeatherTurn1"), 0, ARGUMENTS).completed().events()


@cassette(
    f"{RESPONSES_SESSION}/turn-02.jsonl",
    "weather turn 2: the function_call and its function_call_output sent back; the answer.",
    responses_request(RESPONSES_ANSWERED),
)
def responses_session_turn_2() -> Lines:
    builder = responses("resp_HarnessWeatherTurn2")
    return builder.message(0, *ANSWER, id="msg_01WeatherAnswer").completed().events()


# Compatible servers' deviations (docs/profiles.md) ------------------------------------------

#: deviation name (or (profile, deviation name), for a server that sends it its own way)
#: -> its recipe: one cassette per profile that lists it, `<profile>/<deviation>.jsonl`,
#: the header saying what the default makes of it
DEVIATION_RECIPES: dict[str | tuple[str, str], Recipe] = {}


def deviation(name: str, profile: str | None = None) -> Callable[[Recipe], Recipe]:
    def register(recipe: Recipe) -> Recipe:
        DEVIATION_RECIPES[name if profile is None else (profile, name)] = recipe
        return recipe

    return register


def unindexed(ident: str | None, arguments: str) -> dict[str, Any]:
    """A chunk of one `tool_calls[]` piece without `index`, as Gemini's endpoint sends them
    (the first of a call with its id and name)."""
    found: dict[str, Any] = {"function": {"arguments": arguments}}
    if ident is not None:
        found = {
            "id": ident,
            "type": "function",
            "function": {"name": WEATHER_TOOL, **found["function"]},
        }
    return {"tool_calls": [found]}


@deviation("filter_chunks")
def azure_filter_chunks() -> Lines:
    filtered = {"hate": {"filtered": False, "severity": "safe"}}
    prompt = {
        "id": "",
        "object": "",
        "created": 0,
        "model": "",
        "choices": [],
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": filtered}],
    }
    (text,) = chat(start=False).content("Paris.").events()
    text["choices"][0]["content_filter_results"] = filtered
    return chat(start=False).raw(prompt).role().raw(text).stop().events()


@deviation("stop_with_tool_calls")
def stop_with_tool_calls() -> Lines:
    return weather_call(chat(), '{"city": "Paris"}').stop("stop").events()


@deviation("missing_finish_reason")
def missing_finish_reason() -> Lines:
    return chat().text("Paris is ", "the capital").done().events()


@deviation("missing_call_id")
def missing_call_id() -> Lines:
    opening = {"index": 0, "function": {"name": WEATHER_TOOL, "arguments": ""}}
    builder = chat().chunk({"tool_calls": [opening]}).arguments(0, '{"city": "Paris"}')
    return builder.stop("tool_calls").events()


@deviation("one_chunk_call")
def one_chunk_call() -> Lines:
    builder = chat().call_start(0, WEATHER_TOOL, id="call_01Weather", arguments='{"city": "Paris"}')
    return builder.stop().events()


@deviation("merged_parallel_calls")
def merged_parallel_calls() -> Lines:
    builder = chat().call_start(0, WEATHER_TOOL, id="call_01Paris", arguments='{"city": "Paris"}')
    builder.call_start(0, WEATHER_TOOL, id="call_02Rome", arguments='{"city": "Rome"}')
    return builder.stop().events()


@deviation("repeated_id_and_name")
def repeated_id_and_name() -> Lines:
    builder = chat()
    for part in ("", '{"city":', ' "Paris"}'):
        builder.call_start(0, WEATHER_TOOL, id="call_01Weather", arguments=part)
    return builder.stop().events()


@deviation("in_band_error")
def in_band_error() -> Lines:
    error = {"message": "Upstream provider failed.", "type": "server_error", "code": 502}
    (failed,) = chat(start=False).finish("error").events()
    return chat().text("Paris ").raw({**failed, "error": error}).events()


@deviation("second_finish_chunk")
def second_finish_chunk() -> Lines:
    (again,) = chat(start=False).usage().events()
    again["choices"] = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    return chat().text("Paris.").finish("stop").raw(again).done().events()


@deviation("missing_index")
def missing_index() -> Lines:
    builder = chat().chunk(unindexed("call_01Paris", ""))
    builder.chunk(unindexed(None, '{"city": "Paris"}'))
    builder.chunk(unindexed("call_02Rome", '{"city": "Rome"}'))
    return builder.stop("stop").events()


@deviation("missing_index", "mistral")
def mistral_missing_index() -> Lines:
    both = [
        *unindexed("call_01Paris", '{"city": "Paris"}')["tool_calls"],
        *unindexed("call_02Rome", '{"city": "Rome"}')["tool_calls"],
    ]
    return chat(MISTRAL_ID).chunk({"tool_calls": both}).stop("tool_calls").events()


@deviation("content_parts")
def content_parts() -> Lines:
    return mistral_content()


@deviation("varying_chunk_ids")
def varying_chunk_ids() -> Lines:
    idents = [f"chatcmpl-{number:08x}-compound" for number in (0x1A2B3C4D, 0x2B3C4D5E, 0x3C4D5E6F)]
    (stub,) = chat(start=False).chunk(None, "stop", completion_id="stub").events()
    builder = chat(idents[0]).chunk({"content": "Paris is "}, completion_id=idents[1])
    builder.chunk({"content": "the capital of France."}, completion_id=idents[2])
    return builder.raw({**stub, "x_groq": {"id": "req_01Compound"}}).done().events()


def citation(url: str, title: str, start: int, end: int) -> dict[str, Any]:
    """An OpenRouter `url_citation` annotation, without `index`."""
    cited = {"url": url, "title": title, "content": "", "start_index": start, "end_index": end}
    return {"type": "url_citation", "url_citation": cited}


ANNOTATED = ("Paris is the capital of France [1].", " It lies on the Seine [2].")


@deviation("annotations_without_index")
def annotations_without_index() -> Lines:
    paris = citation("https://en.wikipedia.org/wiki/Paris", "Paris", 30, 33)
    seine = citation("https://en.wikipedia.org/wiki/Seine", "Seine", 58, 61)
    builder = chat().chunk({"content": ANNOTATED[0], "annotations": [paris]})
    builder.chunk({"content": ANNOTATED[1], "annotations": [paris, seine]})
    return builder.stop("stop").events()


@deviation("reasoning_content")
def reasoning_content() -> Lines:
    builder = chat().reasoning("The user asks ", "for a capital.")
    return builder.chunk({"content": "Paris.", "reasoning_content": None}).stop().events()


#: where the profile cassettes go: beside the tests, not in the library every walker reads
#: (each replays to the default's error code there, by design); the wheel ships them as
#: the Chat library's `profiles/` (setup.py)
PROFILE_FOLDER = Path(__file__).resolve().parent.parent.parent / "tests" / "data" / "profiles"


def generate_profiles(folder: Path) -> list[Path]:
    """Write `<profile>/<deviation>.jsonl` under `folder`, for every profile's deviation."""
    written = []
    for found in PROFILES.values():
        for name in found.deviations:
            deviation_ = DEVIATIONS[name]
            description = (
                f"{found.server}: {deviation_.summary} (default: {deviation_.default}; "
                f"profile {found.name}: {deviation_.profiled})."
            )
            path = folder / found.name / f"{name}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            # `expect`: what replay without --profile makes of it (harness validate reads it)
            header = make_header(
                description, "synthetic", provider=CHAT, model=MODEL, expect=deviation_.default
            )
            recipe = DEVIATION_RECIPES.get((found.name, name)) or DEVIATION_RECIPES[name]
            write_cassette(path, recipe(), header=header)
            written.append(path)
    return written


def generate(folder: Path) -> list[Path]:
    """Write every cassette under `folder`; return their paths, in order."""
    written = []
    for name, (provider, description, request, recipe) in LIBRARY.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        header = make_header(
            description, "synthetic", request=request, provider=provider, model=MODEL
        )
        write_cassette(path, recipe(), header=header)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent
    for path in generate(folder):
        print(path)
    if not argv:
        for path in generate_profiles(PROFILE_FOLDER):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
