"""Your code: a weather assistant that streams Chat Completions and runs the one tool it offers."""

from __future__ import annotations

import json
from typing import Any

from openai import OpenAI

MODEL = "gpt-4.1-mini"
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def get_weather(city: str) -> dict[str, Any]:
    """The tool (a real one would ask a weather service)."""
    return {"temperature_c": 18, "sky": "cloudy"}


def ask(client: OpenAI, question: str) -> str:
    """Stream answers, run each call asked for and send its result back, until a final text."""
    messages: list[Any] = [{"role": "user", "content": question}]
    while True:
        with client.chat.completions.stream(
            model=MODEL, messages=messages, tools=TOOLS, stream_options={"include_usage": True}
        ) as stream:
            message = stream.get_final_completion().choices[0].message
        if not message.tool_calls:
            return message.content or ""
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls
        ]
        messages.append(
            {"role": "assistant", "content": message.content or None, "tool_calls": calls}
        )
        for call in message.tool_calls:
            result = get_weather(**json.loads(call.function.arguments))
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )
