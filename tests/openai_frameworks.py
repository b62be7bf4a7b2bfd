"""The frameworks people build on the `openai` SDK, each as a user's code would call it
once: one question, one answer, its tools run where the framework runs them. Each driver
is served a list of OpenAI cassettes (one answer a request, in order) and returns the
first answer the model gave, as the framework handed it to the code (`Answer`: its text
and its tool calls), or raises what the framework raised.

`strict=True` guards it: `harness.strict(client)` where the framework takes an SDK client
(the SDK's readers, pydantic-ai, the OpenAI Agents SDK, litellm's `client=`), and
`StrictTransport` under the HTTP client langchain-openai takes (`http_client=`), which
builds its SDK clients itself. Bedrock's ConverseStream (`BEDROCK`) the same way over
boto3's client (`harness.strict` of a cassette client), litellm's Bedrock path over
`StrictTransport`; Gemini's `streamGenerateContent` (`GEMINI`) over google-genai's
`Client`, langchain-google-genai over `StrictTransport` under the HTTP client it builds
(`client_args=`). Used by tests/test_strict_openai_frameworks.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetched from the network

import pytest
from conftest import not_installed

from harness import (
    HTTPXReplayTransport,
    Replayer,
    ReplayTransport,
    StrictTransport,
    ToolCallEvent,
    async_cassette_client,
    cassette_client,
    cassettes_from,
    replay_outcome,
    strict,
)
from harness._providers.gemini.adapter import call_id
from harness._replay.calls import SDK_ATTEMPTS
from harness._testing.plugin_providers import cassette_provider

MODEL = "gpt-4.1-mini"
BASE_URL = "https://api.openai.com/v1"
QUESTION = "What's the weather in Paris and in Rome?"
MESSAGES: Any = [{"role": "user", "content": QUESTION}]
CHAT, RESPONSES, GEMINI = "openai-chat", "openai-responses", "gemini"
#: The answers a driver is served, in order (a framework that runs tools asks again).
Served = Sequence[Path]
#: A call as (id, name, arguments); a framework may lose the id (None), and google-genai
#: gives the pieces of a call streamed as Vertex streams it as calls of no name (None).
Call = tuple[str | None, str | None, Any]


@dataclass(frozen=True, slots=True)
class Answer:
    """The model's first answer as the code got it: its text, and its tool calls as
    (id, name, arguments), the arguments parsed where they are JSON, else as given."""

    text: str
    calls: tuple[Call, ...]


def harness_answer(path: Path) -> Answer:
    """What the harness's own replay says the cassette's answer is; on Gemini a call the
    API sent without an id (the harness names the Nth `call_N`) has its id lost (None),
    as google-genai gives it."""
    outcome = replay_outcome(path)
    text = "".join(getattr(event, "text", "") for event in outcome.events)
    found = [event.call for event in outcome.events if isinstance(event, ToolCallEvent)]
    gemini = cassette_provider(path) == GEMINI
    calls = tuple(
        (None if gemini and call.id == call_id(at) else call.id, call.name, call.input)
        for at, call in enumerate(found)
    )
    return Answer(text, calls)


def _call(call_id: Any, name: Any, arguments: Any) -> Call:
    """A call as the code got it; arguments a string are parsed, as the code would."""
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments) if arguments else {}
    return (call_id, name, arguments)


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18 degrees in {city}"


def get_time() -> str:
    """The time here."""
    return "14:05"


#: The two tools the library's cassettes call, by name: their description and parameters.
TOOLS: Any = {
    "get_weather": (
        "The weather in a city.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    "get_time": ("The time here.", {"type": "object", "properties": {}}),
}
CHAT_TOOLS: Any = [
    {"type": "function", "function": {"name": name, "description": about, "parameters": schema}}
    for name, (about, schema) in TOOLS.items()
]
RESPONSES_TOOLS: Any = [
    {"type": "function", "name": name, "description": about, "parameters": schema, "strict": False}
    for name, (about, schema) in TOOLS.items()
]


def _client(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    client = cassette_client(list(served), match_on=None, sdk="openai", **options)
    return strict(client) if use_strict else client


def _async_client(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    client = async_cassette_client(list(served), match_on=None, sdk="openai", **options)
    return strict(client) if use_strict else client


# The SDK's own readers.


def sdk_chat_create_stream(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """`chat.completions.create(stream=True)` read as OpenAI's function-calling guide reads
    it: content joined, each call kept from its first piece, its arguments joined."""
    client = _client(served, options, use_strict)
    text: list[str] = []
    calls: dict[int, Any] = {}
    for chunk in client.chat.completions.create(
        model=MODEL, messages=MESSAGES, tools=CHAT_TOOLS, stream=True
    ):
        if not chunk.choices:  # the usage chunk
            continue
        delta = chunk.choices[0].delta
        if delta.content:
            text.append(delta.content)
        for piece in delta.tool_calls or []:
            if piece.index not in calls:
                calls[piece.index] = piece
            else:
                calls[piece.index].function.arguments += piece.function.arguments or ""
    return Answer(
        "".join(text),
        tuple(_call(c.id, c.function.name, c.function.arguments) for c in calls.values()),
    )


def sdk_chat_stream(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """`chat.completions.stream()` and `get_final_completion()`: the SDK's own helper."""
    client = _client(served, options, use_strict)
    with client.chat.completions.stream(model=MODEL, messages=MESSAGES, tools=CHAT_TOOLS) as stream:
        message = stream.get_final_completion().choices[0].message
    return Answer(
        message.content or "",
        tuple(_call(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []),
    )


def _response_answer(output: Sequence[Any]) -> Answer:
    """A Responses `output` as the code reads it: message texts joined, function calls."""
    text = "".join(
        part.text
        for item in output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    )
    calls = tuple(
        _call(item.call_id, item.name, item.arguments)
        for item in output
        if item.type == "function_call"
    )
    return Answer(text, calls)


def sdk_responses_create_stream(
    served: Served, options: dict[str, Any], use_strict: bool
) -> Answer:
    """`responses.create(stream=True)` read by hand: text deltas joined, each function call
    taken from its `response.output_item.done`."""
    client = _client(served, options, use_strict)
    text: list[str] = []
    calls: list[Call] = []
    for event in client.responses.create(
        model=MODEL, input=QUESTION, tools=RESPONSES_TOOLS, stream=True
    ):
        if event.type == "response.output_text.delta":
            text.append(event.delta)
        elif event.type == "response.output_item.done" and event.item.type == "function_call":
            calls.append(_call(event.item.call_id, event.item.name, event.item.arguments))
    return Answer("".join(text), tuple(calls))


def sdk_responses_stream(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """`responses.stream()` and `get_final_response()`: the SDK's own helper."""
    client = _client(served, options, use_strict)
    with client.responses.stream(model=MODEL, input=QUESTION, tools=RESPONSES_TOOLS) as stream:
        response = stream.get_final_response()
    return _response_answer(response.output)


# pydantic-ai


def _pydantic_ai(model_class: str, served: Served, options: dict[str, Any], strict_: bool) -> Any:
    """pydantic-ai's `Agent.run_stream` over `OpenAIProvider(openai_client=...)`: the first
    model response of the run, as pydantic-ai parsed it."""
    from pydantic_ai.models import openai as models
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=_async_client(served, options, strict_))
    return _pydantic_ai_run(getattr(models, model_class)(MODEL, provider=provider))


def _pydantic_ai_run(model: Any) -> Answer:
    """`Agent(model, tools=...).run_stream(...)`: the run's first model response."""
    from pydantic_ai import Agent

    agent = Agent(model, tools=[get_weather, get_time])

    async def run() -> Any:
        async with agent.run_stream(QUESTION) as result:
            await result.get_output()
            return result.all_messages()

    messages = asyncio.run(run())
    first = next(message for message in messages if message.kind == "response")
    text = "".join(part.content for part in first.parts if part.part_kind == "text")
    # `args` None is pydantic-ai's zero-argument call (`args_as_dict()` gives `{}`)
    calls = tuple(
        _call(part.tool_call_id, part.tool_name, {} if part.args is None else part.args)
        for part in first.parts
        if part.part_kind == "tool-call"
    )
    return Answer(text, calls)


def pydantic_ai_chat(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """pydantic-ai's `OpenAIChatModel`."""
    return _pydantic_ai("OpenAIChatModel", served, options, use_strict)  # type: ignore[no-any-return]


def pydantic_ai_responses(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """pydantic-ai's `OpenAIResponsesModel`."""
    return _pydantic_ai("OpenAIResponsesModel", served, options, use_strict)  # type: ignore[no-any-return]


# langchain-openai


def _langchain(responses: bool, served: Served, options: dict[str, Any], strict_: bool) -> Answer:
    """`ChatOpenAI(...).bind_tools(...).stream()`, chunks summed, given the cassettes through
    its documented `http_client` (an `httpx2.Client` over `ReplayTransport`)."""
    import httpx2
    from langchain_openai import ChatOpenAI

    transport: Any = ReplayTransport(Replayer(cassettes_from(list(served)), match_on=None))
    if strict_:
        transport = StrictTransport(transport)
    chat = ChatOpenAI(
        model=MODEL,
        api_key="unused",  # type: ignore[arg-type]
        base_url=BASE_URL,
        http_client=httpx2.Client(transport=transport),
        use_responses_api=responses,
        **({"timeout": options["timeout"]} if "timeout" in options else {}),
    )
    chunks: list[Any] = list(chat.bind_tools(CHAT_TOOLS).stream(QUESTION))
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    calls = tuple(_call(call["id"], call["name"], call["args"]) for call in total.tool_calls)
    return Answer(total.text, calls)


def langchain_chat(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """langchain-openai's `ChatOpenAI` over Chat Completions."""
    return _langchain(False, served, options, use_strict)


def langchain_responses(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """langchain-openai's `ChatOpenAI(use_responses_api=True)`."""
    return _langchain(True, served, options, use_strict)


# The OpenAI Agents SDK


def _agents(model_class: str, served: Served, options: dict[str, Any], strict_: bool) -> Answer:
    """`Runner.run_streamed` over the Agents SDK's model class given the `AsyncOpenAI`
    (`openai_client=`), its events read to the end, tracing off: the run's first model
    response."""
    import agents

    agents.set_tracing_disabled(True)
    model = getattr(agents, model_class)(
        model=MODEL, openai_client=_async_client(served, options, strict_)
    )
    agent = agents.Agent(
        name="weather",
        instructions="Answer.",
        model=model,
        tools=[agents.function_tool(get_weather), agents.function_tool(get_time)],
    )

    async def run() -> Any:
        result = agents.Runner.run_streamed(agent, QUESTION, max_turns=8)
        async for _ in result.stream_events():
            pass
        return result.raw_responses

    first = asyncio.run(run())[0]
    return _response_answer(first.output)


def agents_chat(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """The Agents SDK's `OpenAIChatCompletionsModel`."""
    return _agents("OpenAIChatCompletionsModel", served, options, use_strict)


def agents_responses(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """The Agents SDK's `OpenAIResponsesModel`."""
    return _agents("OpenAIResponsesModel", served, options, use_strict)


# litellm


def litellm_chat(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """litellm's `completion(model="openai/...", stream=True)`, chunks rebuilt. litellm
    calls the `openai` SDK over `httpx` (v1); `client=` takes that SDK client, here over
    `HTTPXReplayTransport`, guarded by `harness.strict`."""
    import httpx
    import litellm as lite
    import openai

    transport = HTTPXReplayTransport(Replayer(cassettes_from(list(served)), match_on=None))
    lite.suppress_debug_info = True  # its "Give Feedback" lines on every error
    client: Any = openai.OpenAI(
        api_key="unused",
        base_url=BASE_URL,
        http_client=httpx.Client(transport=transport),  # type: ignore[arg-type]  # typed httpx2; reads either
    )
    response = lite.completion(
        model=f"openai/{MODEL}",
        messages=MESSAGES,
        tools=CHAT_TOOLS,
        stream=True,
        timeout=options.get("timeout", 600),  # litellm's, which it hands the SDK per request
        client=strict(client) if use_strict else client,
    )
    built: Any = lite.stream_chunk_builder(list(response))
    message = built.choices[0].message
    calls = tuple(
        _call(call.id, call.function.name, call.function.arguments)
        for call in message.tool_calls or []
    )
    return Answer(message.content or "", calls)


# Bedrock's ConverseStream: boto3's `bedrock-runtime` client (a cassette client, built as
# boto3 builds one), given to each framework as it takes one.

BEDROCK = "bedrock-converse"
BEDROCK_MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
CONVERSE_MESSAGES: Any = [{"role": "user", "content": [{"text": QUESTION}]}]
CONVERSE_TOOLS: Any = {
    "tools": [
        {"toolSpec": {"name": name, "description": about, "inputSchema": {"json": schema}}}
        for name, (about, schema) in TOOLS.items()
    ]
}


def _boto3_client(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    client = cassette_client(list(served), match_on=None, **options)
    return strict(client) if use_strict else client


def sdk_converse_stream(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """`converse_stream()["stream"]` read by hand, as boto3's docs read it: text deltas
    joined, each tool call from its `contentBlockStart`, its input pieces joined; a start
    of `type` `server_tool_use` is the server's own tool, not a call for the code."""
    client = _boto3_client(served, options, use_strict)
    answer = client.converse_stream(
        modelId=BEDROCK_MODEL, messages=CONVERSE_MESSAGES, toolConfig=CONVERSE_TOOLS
    )
    text: list[str] = []
    calls: dict[int, list[Any]] = {}
    try:
        for event in answer["stream"]:
            if "contentBlockStart" in event:
                start = event["contentBlockStart"]
                use = start["start"].get("toolUse")
                if use is not None and use.get("type") != "server_tool_use":
                    calls[start["contentBlockIndex"]] = [use["toolUseId"], use["name"], ""]
            elif "contentBlockDelta" in event:
                delta = event["contentBlockDelta"]
                if "text" in delta["delta"]:
                    text.append(delta["delta"]["text"])
                elif "toolUse" in delta["delta"] and delta["contentBlockIndex"] in calls:
                    calls[delta["contentBlockIndex"]][2] += delta["delta"]["toolUse"]["input"]
    finally:
        answer["stream"].close()
    return Answer("".join(text), tuple(_call(*call) for call in calls.values()))


def pydantic_ai_bedrock(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """pydantic-ai's `BedrockConverseModel` over `BedrockProvider(bedrock_client=...)`."""
    from pydantic_ai.models.bedrock import BedrockConverseModel
    from pydantic_ai.providers.bedrock import BedrockProvider

    provider = BedrockProvider(bedrock_client=_boto3_client(served, options, use_strict))
    return _pydantic_ai_run(BedrockConverseModel(BEDROCK_MODEL, provider=provider))


@cache
def _control_plane() -> Any:
    """The control-plane (`bedrock`) client `ChatBedrockConverse` builds beside `client=`
    unless given one, made once: a stream never calls it, and building it a row (its own
    session, its service model read again) was 0.3 s of every run. Keys given, so no
    credential chain is searched (the instance metadata service, on the network)."""
    import boto3

    return boto3.Session(
        aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1"
    ).client("bedrock")


def langchain_bedrock(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """langchain-aws's `ChatBedrockConverse(client=...).bind_tools(...).stream()`, chunks
    summed."""
    from langchain_aws import ChatBedrockConverse

    chat = ChatBedrockConverse(
        model=BEDROCK_MODEL,
        client=_boto3_client(served, options, use_strict),
        region_name="us-east-1",
        bedrock_client=_control_plane(),
    )
    chunks: list[Any] = list(chat.bind_tools(CHAT_TOOLS).stream(QUESTION))
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    calls = tuple(_call(call["id"], call["name"], call["args"]) for call in total.tool_calls)
    return Answer(total.text, calls)


def litellm_bedrock(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """litellm's `completion(model="bedrock/converse/...", stream=True)`: litellm signs
    and sends the request itself over `httpx`, so its `client=` (an `HTTPHandler`) is
    given an `httpx.Client` over `HTTPXReplayTransport`, under `StrictTransport` when
    guarded; dummy keys, the endpoint `aws_bedrock_runtime_endpoint=`."""
    import httpx
    import litellm as lite
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    transport: Any = HTTPXReplayTransport(Replayer(cassettes_from(list(served)), match_on=None))
    if use_strict:
        transport = StrictTransport(transport)
    lite.suppress_debug_info = True
    response = lite.completion(
        model=f"bedrock/converse/{BEDROCK_MODEL}",
        messages=MESSAGES,
        tools=CHAT_TOOLS,
        stream=True,
        timeout=options.get("timeout", 600),
        aws_access_key_id="x",
        aws_secret_access_key="x",
        aws_region_name="us-east-1",
        aws_bedrock_runtime_endpoint="https://bedrock-runtime.us-east-1.amazonaws.com",
        num_retries=2,  # litellm's own retry (no SDK under it retries a 429)
        client=HTTPHandler(client=httpx.Client(transport=transport)),
    )
    built: Any = lite.stream_chunk_builder(list(response))
    message = built.choices[0].message
    calls = tuple(
        _call(call.id, call.function.name, call.function.arguments)
        for call in message.tool_calls or []
    )
    return Answer(message.content or "", calls)


# Gemini's streamGenerateContent: google-genai's `Client` (a cassette client, built as
# google-genai's docs build one over an HTTP client of one's own), given to each
# framework as it takes one. Gemini may send a call without an id (it answers a call by
# its name): google-genai leaves `FunctionCall.id` None, the harness names it `call_N`,
# pydantic-ai and langchain-google-genai mint their own; each is read here as an id lost
# (None), as `harness_answer` reads the harness's, so a minted id is no wrong data.

GEMINI_MODEL = "gemini-2.5-flash"
GEMINI_TOOLS: Any = [
    {
        "function_declarations": [
            {"name": name, "description": about, "parameters_json_schema": schema}
            for name, (about, schema) in TOOLS.items()
        ]
    }
]


#: google-genai does not retry unless told: its retries on, as its docs turn them on
#: (`HttpOptions(retry_options=...)`), at once, so the 429 row is retried strict or not.
GEMINI_RETRIES: Any = {"retry_options": {"attempts": 2, "initial_delay": 0.01, "jitter": 0}}


def _gemini_client(
    served: Served, options: dict[str, Any], use_strict: bool, *, use_async: bool = False
) -> Any:
    build = async_cassette_client if use_async else cassette_client
    client = build(list(served), match_on=None, http_options=GEMINI_RETRIES, **options)
    return strict(client) if use_strict else client


def sdk_generate_content_stream(
    served: Served, options: dict[str, Any], use_strict: bool
) -> Answer:
    """`models.generate_content_stream()` read by hand as google-genai's docs read it: each
    chunk's `text` joined (its text parts, thoughts left out), its calls from
    `chunk.function_calls` (their `id` None where the API sent none, their `args` None
    for a call without arguments, read as `{}`)."""
    client = _gemini_client(served, options, use_strict)
    text: list[str] = []
    calls: list[Call] = []
    for chunk in client.models.generate_content_stream(
        model=GEMINI_MODEL, contents=QUESTION, config={"tools": GEMINI_TOOLS}
    ):
        text.append(chunk.text or "")
        calls += [_call(call.id, call.name, call.args or {}) for call in chunk.function_calls or []]
    return Answer("".join(text), tuple(calls))


def pydantic_ai_google(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """pydantic-ai's `GoogleModel` over `GoogleProvider(client=...)` (it reads the client's
    async face, `client.aio`). An id pydantic-ai minted (`pyd_ai_...`) is read as lost."""
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    client = _gemini_client(served, options, use_strict, use_async=True)
    answer = _pydantic_ai_run(GoogleModel(GEMINI_MODEL, provider=GoogleProvider(client=client)))
    return _minted_ids_lost(answer, lambda call_id: call_id.startswith("pyd_ai_"))


def langchain_google(served: Served, options: dict[str, Any], use_strict: bool) -> Answer:
    """langchain-google-genai's `ChatGoogleGenerativeAI(...).bind_tools(...).stream()`,
    chunks summed. It builds its `genai.Client` itself (a `client=` given is replaced),
    so the cassettes reach it through its documented `client_args` (the arguments of the
    `httpx.Client` google-genai builds): `transport=HTTPXReplayTransport(...)`, under
    `StrictTransport` when guarded. It retries itself: `max_retries` (the attempts, by its
    reading; 6 by default) is the attempts a broken server answers in the rows
    (`SDK_ATTEMPTS`), which its default would outlast, reading the next turn's answer as
    the failed one's. An id it minted (a `uuid4`) is read as lost."""
    import uuid

    from langchain_google_genai import ChatGoogleGenerativeAI

    transport: Any = HTTPXReplayTransport(Replayer(cassettes_from(list(served)), match_on=None))
    if use_strict:
        transport = StrictTransport(transport)
    chat = ChatGoogleGenerativeAI(
        model=GEMINI_MODEL,
        google_api_key="unused",
        client_args={"transport": transport},
        max_retries=SDK_ATTEMPTS,  # attempts, as it reads it: its 6 would outlast the rows
        **({"timeout": options["timeout"]} if "timeout" in options else {}),
    )
    chunks: list[Any] = list(chat.bind_tools(CHAT_TOOLS).stream(QUESTION))
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    calls = tuple(_call(call["id"], call["name"], call["args"]) for call in total.tool_calls)

    def minted(call_id: str) -> bool:  # `str(uuid.uuid4())`
        with contextlib.suppress(ValueError):
            found = uuid.UUID(call_id)
            return str(found) == call_id and found.version == 4
        return False

    return _minted_ids_lost(Answer(total.text, calls), minted)


def _minted_ids_lost(answer: Answer, minted: Callable[[str], bool]) -> Answer:
    """The answer with each call id a framework minted itself read as lost (None)."""
    calls = tuple(
        (None if isinstance(call_id, str) and minted(call_id) else call_id, name, arguments)
        for call_id, name, arguments in answer.calls
    )
    return Answer(answer.text, calls)


Driver = Callable[[Served, dict[str, Any], bool], Answer]
#: Each framework's drivers, by the API they speak.
FRAMEWORKS: dict[str, dict[str, Driver]] = {
    CHAT: {
        "SDK chat.completions.create(stream=True)": sdk_chat_create_stream,
        "SDK chat.completions.stream()": sdk_chat_stream,
        "pydantic-ai OpenAIChatModel": pydantic_ai_chat,
        "langchain-openai ChatOpenAI": langchain_chat,
        "openai-agents OpenAIChatCompletionsModel": agents_chat,
        "litellm completion(stream=True)": litellm_chat,
    },
    RESPONSES: {
        "SDK responses.create(stream=True)": sdk_responses_create_stream,
        "SDK responses.stream()": sdk_responses_stream,
        "pydantic-ai OpenAIResponsesModel": pydantic_ai_responses,
        "langchain-openai ChatOpenAI(use_responses_api=True)": langchain_responses,
        "openai-agents OpenAIResponsesModel": agents_responses,
    },
    BEDROCK: {
        "SDK converse_stream()": sdk_converse_stream,
        "pydantic-ai BedrockConverseModel": pydantic_ai_bedrock,
        "langchain-aws ChatBedrockConverse": langchain_bedrock,
        "litellm completion(model=bedrock/converse/...)": litellm_bedrock,
    },
    GEMINI: {
        "SDK generate_content_stream()": sdk_generate_content_stream,
        "pydantic-ai GoogleModel": pydantic_ai_google,
        "langchain-google-genai ChatGoogleGenerativeAI": langchain_google,
    },
}
#: The SDK each API's drivers read it with.
SDKS: dict[str, str] = {
    CHAT: "openai",
    RESPONSES: "openai",
    BEDROCK: "boto3",
    GEMINI: "google.genai",
}

#: What each framework's drivers import beyond the harness's own (the `frameworks` extra).
NEEDS: dict[str, tuple[str, ...]] = {
    "pydantic-ai": ("pydantic_ai",),
    "langchain-openai": ("langchain_openai",),
    "openai-agents": ("agents",),
    "litellm": ("litellm", "httpx"),
    "langchain-aws": ("langchain_aws",),
    "langchain-google-genai": ("langchain_google_genai", "httpx"),
}


def needs(name: str, api: str = CHAT) -> tuple[str, ...]:
    """The modules a driver needs: the API's SDK, and its framework's."""
    return (SDKS[api], *NEEDS.get(name.split(" ")[0], ()))


def framework_params(api: str) -> list[Any]:
    """The drivers of `api` as pytest params, each skipped, saying why, where the packages
    it imports are not installed."""
    params = []
    for name in FRAMEWORKS[api]:
        reason = not_installed(*needs(name, api))
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


#: Why the frameworks cannot all run here (their table needs them all), or None.
SOME_MISSING = not_installed(
    *sorted(set(SDKS.values())),
    *sorted({module for modules in NEEDS.values() for module in modules}),
)
