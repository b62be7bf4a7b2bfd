"""Two OpenAI cassettes written without a key (docs/openai.md, the builders)."""

from harness import ChatStreamBuilder, ResponsesStreamBuilder

# Chat Completions: text, then two calls whose pieces interleave, as the API sends them.
paris = ChatStreamBuilder(start=False).tool(0, "get_weather", {"city": "Paris"}, id="call_P")
rome = ChatStreamBuilder(start=False).tool(1, "get_weather", {"city": "Rome"}, id="call_R")
(
    ChatStreamBuilder()
    .text("Checking ", "both.")
    .interleave([paris, rome], order=[0, 1, 0, 1, 0, 1])
    .stop(usage=True)  # finish_reason tool_calls, the usage chunk, [DONE]
    .write(
        "weather_chat.jsonl",
        "two get_weather calls, interleaved",
        request={"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Weather?"}]},
    )
)

# Responses: a reasoning item, a message, a function call; every lifecycle event numbered.
(
    ResponsesStreamBuilder()
    .reasoning(0, "The user wants the weather.")
    .message(1, "Checking.")
    .call(2, "get_weather", {"city": "Paris"}, call_id="call_P")
    .completed(usage=True)
    .write("weather_responses.jsonl", "reasoning, a message, one get_weather call")
)

# A deliberately broken stream, low-level calls: a call's arguments cut, meant to fail.
(
    ChatStreamBuilder()
    .tool(0, "get_weather", '{"city": "Par')
    .stop()
    .write("cut_arguments.jsonl", "cut JSON arguments", expect="invalid_tool_json")
)
