"""A small app on the Anthropic SDK, written the way apps usually are: the code under test.

`summarize` streams with `messages.stream()`, `agent_step` streams with
`create(stream=True)` on the async client and reads tool calls strictly (stream-harness's
`ato_model_events`), `classify` makes a plain non-streaming call.
"""

from __future__ import annotations

from typing import Any

from anthropic import Anthropic, AsyncAnthropic

from harness import ToolCall, ToolCallEvent, ato_model_events

MODEL = "claude-sonnet-5"
TOOLS: list[Any] = [
    {
        "name": "get_weather",
        "description": "Current weather in a city",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"],
        },
    },
    {
        "name": "get_time",
        "description": "Local time in a timezone",
        "input_schema": {
            "type": "object",
            "properties": {"timezone": {"type": "string"}},
            "required": ["timezone"],
        },
    },
]


def summarize(client: Anthropic, text: str) -> str:
    """A one-paragraph summary, streamed: joins whatever text arrives."""
    with client.messages.stream(
        model=MODEL,
        max_tokens=300,
        system="Summarize in one paragraph.",
        messages=[{"role": "user", "content": text}],
    ) as stream:
        return "".join(stream.text_stream)


async def agent_step(client: AsyncAnthropic, question: str) -> list[ToolCall]:
    """One turn of an agent: the tool calls the model asks for, read strictly."""
    stream = await client.messages.create(
        model=MODEL,
        max_tokens=1024,
        tools=TOOLS,
        messages=[{"role": "user", "content": question}],
        stream=True,
    )
    return [
        event.call async for event in ato_model_events(stream) if isinstance(event, ToolCallEvent)
    ]


def classify(client: Anthropic, review: str) -> str:
    """`positive`, `negative` or `neutral`, from a plain (non-streaming) call."""
    message = client.messages.create(
        model=MODEL,
        max_tokens=5,
        system="Answer with one word: positive, negative or neutral.",
        messages=[{"role": "user", "content": review}],
    )
    block = message.content[0]
    return block.text.strip().lower() if block.type == "text" else "neutral"
