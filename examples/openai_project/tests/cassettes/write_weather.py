"""Write the weather session, tests/cassettes/weather/, without a key (docs/openai.md).

    python tests/cassettes/write_weather.py [FOLDER]    # default: weather/ beside this file

Each turn is the answer the model gives and, in its header, the request the code must
send for it: the plugin compares the two before it answers. Turn 2's request is the
conversation so far: the question, the assistant's call, and the tool's result.
"""

import sys
from pathlib import Path

from harness import ChatStreamBuilder

MODEL = "gpt-4.1-mini"
QUESTION = {"role": "user", "content": "What is the weather in Paris?"}
TOOLS = [
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
CALL = {
    "id": "call_01Weather",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
}
RESULT = {
    "role": "tool",
    "tool_call_id": "call_01Weather",
    "content": '{"temperature_c": 18, "sky": "cloudy"}',
}


def request(*messages: dict) -> dict:
    return {"model": MODEL, "messages": list(messages), "tools": TOOLS}


folder = Path(sys.argv[1]) if sys.argv[1:] else Path(__file__).parent / "weather"
folder.mkdir(parents=True, exist_ok=True)
(
    ChatStreamBuilder(model=MODEL, completion_id="chatcmpl-Turn1")
    .tool(0, "get_weather", {"city": "Paris"}, id="call_01Weather")
    .stop(usage=True)
    .write(
        folder / "turn-01.jsonl", "the question; one get_weather call", request=request(QUESTION)
    )
)
(
    ChatStreamBuilder(model=MODEL, completion_id="chatcmpl-Turn2")
    .text("It is 18 degrees ", "and cloudy in Paris.")
    .stop(usage=True)
    .write(
        folder / "turn-02.jsonl",
        "the call's result sent back; the answer",
        request=request(
            QUESTION, {"role": "assistant", "content": None, "tool_calls": [CALL]}, RESULT
        ),
    )
)
print("\n".join(sorted(path.name for path in folder.iterdir())))
