"""The frameworks people build on the SDK, each as a user's code would call it once: one
question, one answer, its tools run where the framework runs them. Each driver is served
a list of cassettes (one response a request, in order) and returns what the code would
use, or raises what the framework raised. `strict=True` serves it through `harness.strict`
(SDK clients) or `StrictTransport` (litellm's `httpx`). Used by tests/test_strict_frameworks.py.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetched from the network

import pytest
from conftest import not_installed

from harness import (
    Replayer,
    StrictTransport,
    async_cassette_client,
    cassette_client,
    cassettes_from,
    strict,
    with_client,
)

MODEL = "claude-sonnet-5"
QUESTION = "What's the weather and the time in Lisbon?"
ASK: Any = {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": QUESTION}]}
#: What the SDK-side drivers are given per call: the served cassettes, client options, strict.
Served = Sequence[Path]


def get_weather(city: str, unit: str = "celsius") -> str:
    """The weather in a city."""
    return f"18 degrees {unit} in {city}"


def get_time(timezone: str) -> str:
    """The local time in a timezone."""
    return f"14:05 in {timezone}"


TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": "get_weather",
        "description": "The weather in a city.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"],
        },
    },
    {
        "name": "get_time",
        "description": "The local time in a timezone.",
        "input_schema": {
            "type": "object",
            "properties": {"timezone": {"type": "string"}},
            "required": ["timezone"],
        },
    },
]


def _client(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    client = cassette_client(list(served), match_on=None, **options)
    return strict(client) if use_strict else client


def _async_client(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    client = async_cassette_client(list(served), match_on=None, **options)
    return strict(client) if use_strict else client


def sdk_messages_stream(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    """`messages.stream()` and `get_final_message()`: the SDK's own helper."""
    client = _client(served, options, use_strict)
    with client.messages.stream(**ASK, tools=TOOL_SCHEMAS) as stream:
        message = stream.get_final_message()
    return [block.to_dict() for block in message.content], message.stop_reason


def sdk_create_stream(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    """`create(stream=True)` read by hand, as a tutorial does: text deltas joined, each tool's
    JSON joined and parsed at the end."""
    client = _client(served, options, use_strict)
    text: list[str] = []
    tools: dict[int, list[str]] = {}
    stop_reason = None
    for event in client.messages.create(**ASK, tools=TOOL_SCHEMAS, stream=True):
        if event.type == "content_block_start" and event.content_block.type == "tool_use":
            tools[event.index] = [event.content_block.name, ""]
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            text.append(event.delta.text)
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            tools[event.index][1] += event.delta.partial_json
        elif event.type == "message_delta":
            stop_reason = event.delta.stop_reason
    calls = [(name, json.loads(raw) if raw else {}) for name, raw in tools.values()]
    return "".join(text), calls, stop_reason


def sdk_tool_runner(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    """The SDK's tool runner (`beta.messages.tool_runner(stream=True)`): it runs the tools
    and asks again."""
    from anthropic import beta_tool

    client = _client(served, options, use_strict)
    runner = client.beta.messages.tool_runner(
        **ASK, tools=[beta_tool(get_weather), beta_tool(get_time)], max_iterations=2, stream=True
    )
    return runner.until_done().to_dict()


def pydantic_ai(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    """pydantic-ai's `Agent.run_stream` over `AnthropicProvider(anthropic_client=...)`."""
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = _async_client(served, options, use_strict)
    model = AnthropicModel(MODEL, provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model, tools=[get_weather, get_time])

    async def run() -> Any:
        async with agent.run_stream(QUESTION) as result:
            return await result.get_output()

    return asyncio.run(run())


def langchain_anthropic(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    """langchain-anthropic's `ChatAnthropic(...).bind_tools(...).stream()`, chunks summed."""
    from langchain_anthropic import ChatAnthropic

    chat = ChatAnthropic(model=MODEL, api_key="unused", max_tokens=1024)  # type: ignore[call-arg, arg-type]
    llm: Any = with_client(chat, _client(served, options, use_strict))
    chunks: list[Any] = list(llm.bind_tools(TOOL_SCHEMAS).stream(QUESTION))
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total.content, total.tool_calls


def litellm(served: Served, options: dict[str, Any], use_strict: bool) -> Any:
    """litellm's `completion(stream=True)` (its own httpx client, no SDK), chunks rebuilt."""
    import httpx
    import litellm as lite
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    from harness import HTTPXReplayTransport

    replayer = Replayer(cassettes_from(list(served)), match_on=None)
    transport: Any = HTTPXReplayTransport(replayer)
    if use_strict:
        transport = StrictTransport(transport)
    tools = [
        {
            "type": "function",
            "function": {
                "name": schema["name"],
                "description": schema["description"],
                "parameters": schema["input_schema"],
            },
        }
        for schema in TOOL_SCHEMAS
    ]
    response = lite.completion(
        model=f"anthropic/{MODEL}",
        messages=ASK["messages"],
        tools=tools,
        stream=True,
        api_key="unused",
        timeout=options.get("timeout", 600),
        client=HTTPHandler(client=httpx.Client(transport=transport)),
    )
    built: Any = lite.stream_chunk_builder(list(response))
    message = built.choices[0].message
    calls = [(call.function.name, call.function.arguments) for call in message.tool_calls or []]
    return message.content, calls, built.choices[0].finish_reason


FRAMEWORKS: dict[str, Callable[[Served, dict[str, Any], bool], Any]] = {
    "SDK messages.stream()": sdk_messages_stream,
    "SDK create(stream=True)": sdk_create_stream,
    "SDK tool runner": sdk_tool_runner,
    "pydantic-ai": pydantic_ai,
    "langchain-anthropic": langchain_anthropic,
    "litellm": litellm,
}

#: What each driver imports beyond the harness's own dependencies (the `frameworks` extra).
NEEDS: dict[str, tuple[str, ...]] = {
    "pydantic-ai": ("pydantic_ai",),
    "langchain-anthropic": ("langchain_anthropic",),
    "litellm": ("litellm", "httpx"),
}


def framework_params() -> list[Any]:
    """The names of FRAMEWORKS as pytest params, each skipped, saying why, where the
    packages its driver imports are not installed."""
    params = []
    for name in FRAMEWORKS:
        reason = not_installed(*NEEDS.get(name, ()))
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


#: Why the frameworks cannot all run here (their table needs them all), or None.
SOME_MISSING = not_installed(*sorted({module for needs in NEEDS.values() for module in needs}))
