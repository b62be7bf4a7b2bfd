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

from harness import make_header, write_cassette
from harness._providers.openai_chat.profiles import DEVIATIONS, PROFILES

MODEL = "gpt-4.1-mini"
CHAT = "openai-chat"
RESPONSES = "openai-responses"
COMPLETION_ID = "chatcmpl-HarnessSynthetic"
RESPONSE_ID = "resp_HarnessSynthetic"
#: Chat's `data: [DONE]`, as a cassette holds it
DONE: dict[str, Any] = {"harness": "done"}

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


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    *,
    ident: str = COMPLETION_ID,
    index: int = 0,
) -> dict[str, Any]:
    """One `chat.completion.chunk` of choice `index`."""
    choice = {"index": index, "delta": delta or {}, "finish_reason": finish}
    return {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": MODEL,
        "choices": [choice],
    }


def role(ident: str = COMPLETION_ID) -> dict[str, Any]:
    return chunk({"role": "assistant", "content": ""}, ident=ident)


def usage(ident: str = COMPLETION_ID) -> dict[str, Any]:
    """The last chunk of `stream_options.include_usage`: no choices."""
    totals = {"prompt_tokens": 25, "completion_tokens": 9, "total_tokens": 34}
    return {**chunk(ident=ident), "choices": [], "usage": totals}


def piece(index: int, arguments: str, ident: str | None = None, name: str | None = None) -> Any:
    """A `tool_calls[]` piece; the first of a call carries its `id` and `function.name`."""
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    found: dict[str, Any] = {"index": index, "function": function}
    if ident is not None:
        found.update(id=ident, type="function")
    return found


def calls(*pieces: Any) -> dict[str, Any]:
    return chunk({"tool_calls": list(pieces)})


def chat_text(*parts: str, ident: str = COMPLETION_ID) -> Lines:
    return [chunk({"content": text}, ident=ident) for text in parts]


def weather_call(
    index: int = 0,
    ident: str = "call_01Weather",
    arguments: str = "",
    *,
    completion: str = COMPLETION_ID,
) -> Lines:
    """A get_weather call at `index`: its opening piece, then its arguments in two pieces."""
    half = len(arguments) // 2
    return [
        chunk({"tool_calls": [piece(index, "", ident, "get_weather")]}, ident=completion),
        chunk({"tool_calls": [piece(index, arguments[:half])]}, ident=completion),
        chunk({"tool_calls": [piece(index, arguments[half:])]}, ident=completion),
    ]


@cassette(
    "chat/text.jsonl",
    "A plain answer in three content pieces, finish_reason stop, the usage chunk, [DONE].",
)
def chat_text_only() -> Lines:
    return [
        role(),
        *chat_text("Paris is ", "the capital ", "of France."),
        chunk(None, "stop"),
        usage(),
        DONE,
    ]


@cassette(
    "chat/one_tool.jsonl",
    "One tool call (get_weather), its arguments in two pieces, finish_reason tool_calls.",
)
def chat_one_tool() -> Lines:
    return [role(), *weather_call(arguments='{"city": "Paris"}'), chunk(None, "tool_calls"), DONE]


@cassette(
    "chat/parallel_tools.jsonl",
    "Two tool calls whose pieces interleave (index 0, 1, 0, 1); yielded in opening order.",
)
def chat_parallel_tools() -> Lines:
    return [
        role(),
        calls(piece(0, "", "call_01Paris", "get_weather")),
        calls(piece(1, "", "call_02Rome", "get_weather")),
        calls(piece(0, '{"city": "Paris"}')),
        calls(piece(1, '{"city": "Rome"}')),
        chunk(None, "tool_calls"),
        DONE,
    ]


@cassette("chat/zero_argument_tool.jsonl", "A tool call with empty arguments: its input is {}.")
def chat_zero_argument_tool() -> Lines:
    return [role(), calls(piece(0, "", "call_01Time", "get_time")), chunk(None, "tool_calls"), DONE]


@cassette("chat/reasoning.jsonl", "reasoning_content deltas (passed over), then the answer's text.")
def chat_reasoning() -> Lines:
    thinking = [chunk({"reasoning_content": text}) for text in ("The user asks ", "for a capital.")]
    return [role(), *thinking, *chat_text("Paris."), chunk(None, "stop"), DONE]


@cassette(
    "chat/errors/refusal.jsonl",
    "The model refuses (delta.refusal): refusal, as the strict adapter's default.",
)
def chat_refusal() -> Lines:
    pieces = [chunk({"refusal": text}) for text in ("I can't ", "help with that.")]
    return [role(), *pieces, chunk(None, "stop"), DONE]


@cassette(
    "chat/errors/server_error.jsonl", 'An {"error": ...} line mid-stream: api_error:server_error.'
)
def chat_server_error() -> Lines:
    error = {
        "message": "The server had an error.",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    return [role(), *chat_text("Paris "), {"error": error}]


@cassette(
    "chat/errors/orphan_arguments_delta.jsonl",
    "An arguments piece at index 0, which no piece opened.",
)
def chat_orphan_arguments_delta() -> Lines:
    return [role(), calls(piece(0, '{"city": "Paris"}')), chunk(None, "tool_calls"), DONE]


@cassette("chat/errors/duplicate_tool_call.jsonl", "Index 0 opened again with another id.")
def chat_duplicate_tool_call() -> Lines:
    return [
        role(),
        calls(piece(0, "", "call_01Weather", "get_weather")),
        calls(piece(0, "", "call_02Other", "get_weather")),
        chunk(None, "tool_calls"),
        DONE,
    ]


@cassette(
    "chat/errors/incomplete_tool_call_start.jsonl",
    "A call's first piece has an id and no function name.",
)
def chat_incomplete_tool_call_start() -> Lines:
    return [
        role(),
        calls({"index": 0, "id": "call_01", "type": "function", "function": {"arguments": ""}}),
        DONE,
    ]


@cassette("chat/errors/invalid_tool_json.jsonl", "A call's joined arguments are cut JSON.")
def chat_invalid_tool_json() -> Lines:
    return [role(), *weather_call(arguments='{"city": "Par'), chunk(None, "tool_calls"), DONE]


@cassette(
    "chat/errors/non_object_tool_input.jsonl", "A call's arguments are a JSON list, not an object."
)
def chat_non_object_tool_input() -> Lines:
    return [role(), *weather_call(arguments='["Paris"]'), chunk(None, "tool_calls"), DONE]


@cassette(
    "chat/errors/unfinished_tool_calls.jsonl", "[DONE] with a tool call open and no finish_reason."
)
def chat_unfinished_tool_calls() -> Lines:
    return [role(), *weather_call(arguments='{"city": "Paris"}'), DONE]


@cassette(
    "chat/errors/missing_done.jsonl", "finish_reason stop, then the body ends without [DONE]."
)
def chat_missing_done() -> Lines:
    return [role(), *chat_text("Paris."), chunk(None, "stop")]


@cassette("chat/errors/missing_finish_reason.jsonl", "[DONE] before choice 0 gave a finish_reason.")
def chat_missing_finish_reason() -> Lines:
    return [role(), *chat_text("Paris."), DONE]


@cassette(
    "chat/errors/unsupported_finish_reason.jsonl", "finish_reason length: the answer was cut."
)
def chat_unsupported_finish_reason() -> Lines:
    return [role(), *chat_text("Paris is"), chunk(None, "length"), DONE]


@cassette(
    "chat/errors/stop_with_tool_calls.jsonl",
    "finish_reason stop with a tool call (no forcing tool_choice).",
)
def chat_stop_with_tool_calls() -> Lines:
    return [role(), *weather_call(arguments='{"city": "Paris"}'), chunk(None, "stop"), DONE]


@cassette(
    "chat/errors/tool_calls_without_tool_calls.jsonl", "finish_reason tool_calls after text alone."
)
def chat_tool_calls_without_tool_calls() -> Lines:
    return [role(), *chat_text("Paris."), chunk(None, "tool_calls"), DONE]


@cassette("chat/errors/inconsistent_chunk.jsonl", "A chunk of another completion id mid-answer.")
def chat_inconsistent_chunk() -> Lines:
    return [role(), chunk({"content": "Paris."}, ident="chatcmpl-Other"), chunk(None, "stop"), DONE]


@cassette("chat/errors/chunk_after_finish.jsonl", "Content for choice 0 after its finish_reason.")
def chat_chunk_after_finish() -> Lines:
    return [role(), *chat_text("Paris."), chunk(None, "stop"), *chat_text(" Also Lyon."), DONE]


@cassette("chat/errors/chunk_after_done.jsonl", "A chunk after [DONE].")
def chat_chunk_after_done() -> Lines:
    return [role(), *chat_text("Paris."), chunk(None, "stop"), DONE, usage()]


@cassette("chat/errors/multiple_choices.jsonl", "A chunk of choice 1 (n=2): only choice 0 is read.")
def chat_multiple_choices() -> Lines:
    return [role(), chunk({"content": "Rome."}, index=1), chunk(None, "stop"), DONE]


@cassette("chat/errors/refusal_after_text.jsonl", "Text, then a refusal piece: refusal.")
def chat_refusal_after_text() -> Lines:
    return [
        role(),
        *chat_text("Well, "),
        chunk({"refusal": "I can't help with that."}),
        chunk(None, "stop"),
        DONE,
    ]


@cassette(
    "chat/empty_name_on_later_pieces.jsonl",
    'A call whose later pieces carry function.name "" (LM Studio): no name, not a second one.',
)
def chat_empty_name_on_later_pieces() -> Lines:
    later = [{**piece(0, text), "function": {"name": "", "arguments": text}} for text in ARG_HALVES]
    return [
        role(),
        calls(piece(0, "", "call_01Weather", "get_weather")),
        *(calls(found) for found in later),
        chunk(None, "tool_calls"),
        DONE,
    ]


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
    return [
        role(MISTRAL_ID),
        *(chunk({"content": found}, ident=MISTRAL_ID) for found in parts),
        chunk(None, "stop", ident=MISTRAL_ID),
        usage(MISTRAL_ID),
        DONE,
    ]


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
    ident = "chatcmpl-HarnessWeatherTurn1"
    return [
        role(ident),
        *weather_call(arguments=ARGUMENTS, completion=ident),
        chunk(None, "tool_calls", ident=ident),
        usage(ident),
        DONE,
    ]


@cassette(
    f"{CHAT_SESSION}/turn-02.jsonl",
    "weather turn 2: the call and its role: tool result sent back; the answer's text.",
    chat_request(CHAT_ANSWERED),
)
def chat_session_turn_2() -> Lines:
    ident = "chatcmpl-HarnessWeatherTurn2"
    return [
        role(ident),
        *chat_text(*ANSWER, ident=ident),
        chunk(None, "stop", ident=ident),
        usage(ident),
        DONE,
    ]


# Responses ------------------------------------------------------------------------------


class Events:
    """A Responses stream being written: each event numbered in turn (`sequence_number`)."""

    def __init__(self, response_id: str = RESPONSE_ID) -> None:
        self.lines: Lines = []
        self.response_id = response_id
        #: the items done so far, which a response past `in_progress` carries as its output
        self.output: Lines = []

    def add(self, kind: str, **fields: Any) -> Events:
        self.lines.append({"type": kind, "sequence_number": len(self.lines), **fields})
        if kind == "response.output_item.done":
            self.output.append(fields["item"])
        return self

    def response(self, status: str, **fields: Any) -> dict[str, Any]:
        """The response object an event carries; its `output` the items done so far, as the
        API's terminal events carry them (readers such as pydantic-ai's take them there)."""
        return {
            "id": self.response_id,
            "object": "response",
            "model": MODEL,
            "status": status,
            "output": list(self.output),
            **fields,
        }

    def created(self) -> Events:
        self.add("response.created", response=self.response("in_progress", output=[]))
        return self.add("response.in_progress", response=self.response("in_progress", output=[]))

    def message(self, index: int, *parts: str, ident: str = "msg_01Answer") -> Events:
        """A message item at `index`: one output_text part, its text in `parts`."""
        item = {
            "type": "message",
            "id": ident,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        at = {"item_id": ident, "output_index": index}
        text = "".join(parts)
        self.add("response.output_item.added", output_index=index, item=item)
        empty = {"type": "output_text", "text": "", "annotations": []}
        self.add("response.content_part.added", **at, content_index=0, part=empty)
        for part in parts:
            self.add("response.output_text.delta", **at, content_index=0, delta=part)
        self.add("response.output_text.done", **at, content_index=0, text=text)
        full = {**empty, "text": text}
        self.add("response.content_part.done", **at, content_index=0, part=full)
        done = {**item, "status": "completed", "content": [full]}
        return self.add("response.output_item.done", output_index=index, item=done)

    def call(
        self,
        index: int,
        arguments: str,
        *,
        name: str = "get_weather",
        call_id: str = "call_01Weather",
        final: str | None = None,
        whole: bool = False,
    ) -> Events:
        """A function_call item at `index`, its arguments in two deltas (`final`: the done
        item's arguments, when they differ; `whole`: no delta, as LM Studio sends a call)."""
        ident = f"fc_{call_id.removeprefix('call_')}"
        item = {
            "type": "function_call",
            "id": ident,
            "call_id": call_id,
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        at = {"item_id": ident, "output_index": index}
        self.add("response.output_item.added", output_index=index, item=item)
        half = len(arguments) // 2
        for delta in (arguments[:half], arguments[half:]):
            if delta and not whole:
                self.add("response.function_call_arguments.delta", **at, delta=delta)
        ended = arguments if final is None else final
        self.add("response.function_call_arguments.done", **at, arguments=arguments)
        done = {**item, "arguments": ended, "status": "completed"}
        return self.add("response.output_item.done", output_index=index, item=done)

    def completed(self) -> Lines:
        self.add("response.completed", response=self.response("completed"))
        return self.lines


@cassette(
    "responses/text.jsonl",
    "A plain answer: one message item, its text in three deltas, response.completed.",
)
def responses_text() -> Lines:
    return Events().created().message(0, "Paris is ", "the capital ", "of France.").completed()


@cassette(
    "responses/one_tool.jsonl",
    "One function_call item (get_weather), yielded at its output_item.done.",
)
def responses_one_tool() -> Lines:
    return Events().created().call(0, '{"city": "Paris"}').completed()


@cassette("responses/parallel_tools.jsonl", "Two function_call items, at output indexes 0 and 1.")
def responses_parallel_tools() -> Lines:
    events = Events().created().call(0, '{"city": "Paris"}', call_id="call_01Paris")
    return events.call(1, '{"city": "Rome"}', call_id="call_02Rome").completed()


@cassette(
    "responses/zero_argument_tool.jsonl", "A function_call with empty arguments: its input is {}."
)
def responses_zero_argument_tool() -> Lines:
    return Events().created().call(0, "", name="get_time", call_id="call_01Time").completed()


@cassette(
    "responses/one_piece_call.jsonl",
    "A function_call whose arguments come whole in arguments.done and the done item, no "
    "delta (LM Studio): one call, as Chat reads a call sent in one piece.",
)
def responses_one_piece_call() -> Lines:
    return Events().created().call(0, '{"city": "Paris"}', whole=True).completed()


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
    "A reasoning item and its summary deltas (passed over), then the answer.",
)
def responses_reasoning() -> Lines:
    events = Events().created()
    item = {"type": "reasoning", "id": "rs_01Think", "summary": []}
    events.add("response.output_item.added", output_index=0, item=item)
    at = {"item_id": "rs_01Think", "output_index": 0, "summary_index": 0}
    events.add(
        "response.reasoning_summary_part.added", **at, part={"type": "summary_text", "text": ""}
    )
    events.add("response.reasoning_summary_text.delta", **at, delta="A capital.")
    events.add("response.reasoning_summary_text.done", **at, text="A capital.")
    events.add("response.output_item.done", output_index=0, item=item)
    return events.message(1, "Paris.").completed()


def refusal(events: Events, index: int) -> Events:
    """A message item at `index` whose one part is a refusal."""
    item = {
        "type": "message",
        "id": "msg_01Refusal",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    at = {"item_id": "msg_01Refusal", "output_index": index, "content_index": 0}
    events.add("response.output_item.added", output_index=index, item=item)
    events.add("response.content_part.added", **at, part={"type": "refusal", "refusal": ""})
    return events.add("response.refusal.delta", **at, delta="I can't help with that.")


@cassette(
    "responses/errors/refusal.jsonl",
    "The model refuses (response.refusal.delta): refusal, as the strict adapter's default.",
)
def responses_refusal() -> Lines:
    return refusal(Events().created(), 0).lines


@cassette(
    "responses/errors/server_error.jsonl", "An error event mid-stream: api_error:server_error."
)
def responses_server_error() -> Lines:
    events = Events().created()
    return events.add(
        "error", code="server_error", message="The server had an error.", param=None
    ).lines


@cassette(
    "responses/errors/missing_response_created.jsonl",
    "The stream begins with response.in_progress.",
)
def responses_missing_response_created() -> Lines:
    events = Events().created()
    return events.lines[1:]


@cassette(
    "responses/errors/orphan_delta.jsonl", "A text delta at output index 3, which was never added."
)
def responses_orphan_delta() -> Lines:
    events = Events().created()
    events.add(
        "response.output_text.delta", item_id="msg_x", output_index=3, content_index=0, delta="Hi"
    )
    return events.completed()


@cassette("responses/errors/duplicate_output_item.jsonl", "Output index 0 added twice.")
def responses_duplicate_output_item() -> Lines:
    events = Events().created()
    item = {"type": "message", "id": "msg_01", "role": "assistant", "content": []}
    events.add("response.output_item.added", output_index=0, item=item)
    events.add("response.output_item.added", output_index=0, item=item)
    return events.completed()


@cassette("responses/errors/invalid_tool_json.jsonl", "A function_call's arguments are cut JSON.")
def responses_invalid_tool_json() -> Lines:
    return Events().created().call(0, '{"city": "Par').completed()


@cassette(
    "responses/errors/non_object_tool_input.jsonl", "A function_call's arguments are a JSON list."
)
def responses_non_object_tool_input() -> Lines:
    return Events().created().call(0, '["Paris"]').completed()


@cassette(
    "responses/errors/arguments_mismatch.jsonl", "The done item's arguments differ from the deltas."
)
def responses_arguments_mismatch() -> Lines:
    return Events().created().call(0, '{"city": "Paris"}', final='{"city": "Rome"}').completed()


@cassette(
    "responses/errors/unfinished_output_items.jsonl",
    "response.completed with a message item still open.",
)
def responses_unfinished_output_items() -> Lines:
    events = Events().created()
    item = {"type": "message", "id": "msg_01", "role": "assistant", "content": []}
    events.add("response.output_item.added", output_index=0, item=item)
    return events.completed()


@cassette(
    "responses/errors/missing_response_completed.jsonl",
    "The body ends after the message, with no terminal event.",
)
def responses_missing_response_completed() -> Lines:
    return Events().created().message(0, "Paris.").lines


@cassette(
    "responses/errors/response_incomplete.jsonl",
    "response.incomplete (max_output_tokens): the answer was cut.",
)
def responses_response_incomplete() -> Lines:
    events = Events().created().message(0, "Paris is")
    details = {"reason": "max_output_tokens"}
    return events.add(
        "response.incomplete", response=events.response("incomplete", incomplete_details=details)
    ).lines


@cassette("responses/errors/response_failed.jsonl", "response.failed with the response's error.")
def responses_response_failed() -> Lines:
    events = Events().created()
    error = {"code": "server_error", "message": "The model failed to answer."}
    return events.add("response.failed", response=events.response("failed", error=error)).lines


@cassette(
    "responses/errors/event_after_response_completed.jsonl", "An event after response.completed."
)
def responses_event_after_response_completed() -> Lines:
    events = Events().created().message(0, "Paris.")
    events.completed()
    return events.add("response.in_progress", response=events.response("in_progress")).lines


@cassette("responses/errors/sequence_gap.jsonl", "A sequence_number skipped.")
def responses_sequence_gap() -> Lines:
    lines = Events().created().message(0, "Paris.").completed()
    return [
        *lines[:3],
        *({**line, "sequence_number": line["sequence_number"] + 1} for line in lines[3:]),
    ]


@cassette(
    "responses/errors/inconsistent_response.jsonl", "response.completed of another response id."
)
def responses_inconsistent_response() -> Lines:
    events = Events().created().message(0, "Paris.")
    events.response_id = "resp_Other"
    return events.completed()


@cassette(
    "responses/errors/refusal_after_text.jsonl",
    "Text in one item, then a refusal in the next: refusal.",
)
def responses_refusal_after_text() -> Lines:
    return refusal(Events().created().message(0, "Well."), 1).lines


@cassette(
    "responses/errors/unsupported_output_item.jsonl",
    "A custom_tool_call item, whose free-text input no ToolCallEvent says.",
)
def responses_unsupported_output_item() -> Lines:
    events = Events().created()
    item = {
        "type": "custom_tool_call",
        "id": "ctc_01",
        "call_id": "call_01",
        "name": "grammar",
        "input": "",
    }
    events.add("response.output_item.added", output_index=0, item=item)
    return events.completed()


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
    events = Events("resp_HarnessWeatherTurn1").created()
    return events.call(0, ARGUMENTS).completed()


@cassette(
    f"{RESPONSES_SESSION}/turn-02.jsonl",
    "weather turn 2: the function_call and its function_call_output sent back; the answer.",
    responses_request(RESPONSES_ANSWERED),
)
def responses_session_turn_2() -> Lines:
    events = Events("resp_HarnessWeatherTurn2").created()
    return events.message(0, *ANSWER, ident="msg_01WeatherAnswer").completed()


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


def unindexed(arguments: str, ident: str | None = None, name: str | None = None) -> Any:
    """A `tool_calls[]` piece without `index`, as Gemini's endpoint sends them."""
    found = piece(0, arguments, ident, name)
    del found["index"]
    return found


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
    text = chunk({"content": "Paris."})
    text["choices"][0]["content_filter_results"] = filtered
    return [prompt, role(), text, chunk(None, "stop"), DONE]


@deviation("stop_with_tool_calls")
def stop_with_tool_calls() -> Lines:
    return [role(), *weather_call(arguments='{"city": "Paris"}'), chunk(None, "stop"), DONE]


@deviation("missing_finish_reason")
def missing_finish_reason() -> Lines:
    return [role(), *chat_text("Paris is ", "the capital"), DONE]


@deviation("missing_call_id")
def missing_call_id() -> Lines:
    return [
        role(),
        calls(piece(0, "", name="get_weather")),
        calls(piece(0, '{"city": "Paris"}')),
        chunk(None, "tool_calls"),
        DONE,
    ]


@deviation("one_chunk_call")
def one_chunk_call() -> Lines:
    whole = calls(piece(0, '{"city": "Paris"}', "call_01Weather", "get_weather"))
    return [role(), whole, chunk(None, "tool_calls"), DONE]


@deviation("merged_parallel_calls")
def merged_parallel_calls() -> Lines:
    return [
        role(),
        calls(piece(0, '{"city": "Paris"}', "call_01Paris", "get_weather")),
        calls(piece(0, '{"city": "Rome"}', "call_02Rome", "get_weather")),
        chunk(None, "tool_calls"),
        DONE,
    ]


@deviation("repeated_id_and_name")
def repeated_id_and_name() -> Lines:
    return [
        role(),
        calls(piece(0, "", "call_01Weather", "get_weather")),
        calls(piece(0, '{"city":', "call_01Weather", "get_weather")),
        calls(piece(0, ' "Paris"}', "call_01Weather", "get_weather")),
        chunk(None, "tool_calls"),
        DONE,
    ]


@deviation("in_band_error")
def in_band_error() -> Lines:
    error = {"message": "Upstream provider failed.", "type": "server_error", "code": 502}
    failed = {**chunk(None, "error"), "error": error}
    return [role(), *chat_text("Paris "), failed]


@deviation("second_finish_chunk")
def second_finish_chunk() -> Lines:
    return [
        role(),
        *chat_text("Paris."),
        chunk(None, "stop"),
        {**usage(), "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        DONE,
    ]


@deviation("missing_index")
def missing_index() -> Lines:
    return [
        role(),
        calls(unindexed("", "call_01Paris", "get_weather")),
        calls(unindexed('{"city": "Paris"}')),
        calls(unindexed('{"city": "Rome"}', "call_02Rome", "get_weather")),
        chunk(None, "stop"),
        DONE,
    ]


@deviation("missing_index", "mistral")
def mistral_missing_index() -> Lines:
    both = [
        unindexed('{"city": "Paris"}', "call_01Paris", "get_weather"),
        unindexed('{"city": "Rome"}', "call_02Rome", "get_weather"),
    ]
    return [
        role(MISTRAL_ID),
        chunk({"tool_calls": both}, ident=MISTRAL_ID),
        chunk(None, "tool_calls", ident=MISTRAL_ID),
        DONE,
    ]


@deviation("content_parts")
def content_parts() -> Lines:
    return mistral_content()


@deviation("varying_chunk_ids")
def varying_chunk_ids() -> Lines:
    idents = [f"chatcmpl-{number:08x}-compound" for number in (0x1A2B3C4D, 0x2B3C4D5E, 0x3C4D5E6F)]
    stub = {**chunk(None, "stop", ident="stub"), "x_groq": {"id": "req_01Compound"}}
    return [
        role(idents[0]),
        chunk({"content": "Paris is "}, ident=idents[1]),
        chunk({"content": "the capital of France."}, ident=idents[2]),
        stub,
        DONE,
    ]


def citation(url: str, title: str, start: int, end: int) -> dict[str, Any]:
    """An OpenRouter `url_citation` annotation, without `index`."""
    cited = {"url": url, "title": title, "content": "", "start_index": start, "end_index": end}
    return {"type": "url_citation", "url_citation": cited}


ANNOTATED = ("Paris is the capital of France [1].", " It lies on the Seine [2].")


def with_annotations(*annotations: dict[str, Any], text: str) -> dict[str, Any]:
    return chunk({"content": text, "annotations": list(annotations)})


@deviation("annotations_without_index")
def annotations_without_index() -> Lines:
    paris = citation("https://en.wikipedia.org/wiki/Paris", "Paris", 30, 33)
    seine = citation("https://en.wikipedia.org/wiki/Seine", "Seine", 58, 61)
    return [
        role(),
        with_annotations(paris, text=ANNOTATED[0]),
        with_annotations(paris, seine, text=ANNOTATED[1]),
        chunk(None, "stop"),
        DONE,
    ]


@deviation("reasoning_content")
def reasoning_content() -> Lines:
    thinking = [
        chunk({"reasoning_content": text}, ident="chatcmpl-HarnessSynthetic")
        for text in ("The user asks ", "for a capital.")
    ]
    return [
        role(),
        *thinking,
        chunk({"content": "Paris.", "reasoning_content": None}),
        chunk(None, "stop"),
        DONE,
    ]


#: where the profile cassettes go: beside the tests, not in the library every walker reads
#: (each replays to the default's error code there, by design)
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
            header = make_header(description, "synthetic", provider=CHAT, model=MODEL)
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
