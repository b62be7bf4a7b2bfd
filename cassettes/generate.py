"""Write the whole cassette library from `harness.builder.StreamBuilder`, reproducibly.

    python cassettes/generate.py            # rewrite the library in place
    python cassettes/generate.py OUT_DIR    # write it elsewhere (tests compare the two)

Each cassette is one small function below, registered with its path and the header
`description` that says what it shows. Add a cassette by adding a function, run this
script, then `pytest --snapshot-update` and review the new snapshot like code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from harness.builder import StreamBuilder

MODEL = "claude-sonnet-4-5-20250929"

Recipe = Callable[[], StreamBuilder]

#: relative path -> (description, recipe), in the order they are written.
LIBRARY: dict[str, tuple[str, Recipe]] = {}


def cassette(path: str, description: str) -> Callable[[Recipe], Recipe]:
    """Register a recipe under `path` (relative to the library folder)."""

    def register(recipe: Recipe) -> Recipe:
        LIBRARY[path] = (description, recipe)
        return recipe

    return register


def stream(message_id: str = "msg_01HarnessSyntheticStream") -> StreamBuilder:
    return StreamBuilder(model=MODEL, message_id=message_id)


def _live_message_start(
    message_id: str, *, input_tokens: int, output_tokens: int
) -> dict[str, object]:
    """A `message_start` as the live API sends it, cache counts included."""
    usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return {"type": "message_start", "message": message}


# -- happy paths ------------------------------------------------------------------------


@cassette(
    "interleaved.jsonl",
    "Two tool calls interleaved: text block 0, then tool blocks 1 and 3 interleaved as "
    "start(1) start(3) delta(3) delta(1) stop(1) stop(3); each call is built from its own "
    "index's deltas and calls come out in stop order; stop_reason tool_use.",
)
def interleaved() -> StreamBuilder:
    return (
        StreamBuilder(model=MODEL, start=False)
        .raw(_live_message_start("msg_01XFDUDYJgAACzvnptvVoYEL", input_tokens=472, output_tokens=2))
        .block_start(0, {"type": "text", "text": ""})
        .ping()
        .text_delta(0, "I'll read both files")
        .text_delta(0, " at once.")
        .block_stop(0)
        .tool_start(1, "read", id="toolu_01T1x1fJ34qAmk2tNTrN7Up6")
        .json_delta(1, "")
        .tool_start(3, "read", id="toolu_01GcQvRvBoCBcPoAW6VyJCrk")
        .json_delta(3, "")
        .json_delta(3, '{"path": "notes/b.md"}')
        .json_delta(1, '{"path": "notes/a.md"}')
        .block_stop(1)
        .block_stop(3)
        .raw(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 89},
            }
        )
        .message_stop()
    )


@cassette(
    "text_only.jsonl",
    "A plain answer: one text block in three text_delta pieces (a ping between them), "
    "stop_reason end_turn; one text event per delta, then done.",
)
def text_only() -> StreamBuilder:
    return (
        stream("msg_01Sx4NvcQm8T2aBqR7kLhWfE")
        .ping()
        .text(0, "The file", " has three", " sections.")
        .stop("end_turn")
    )


@cassette(
    "zero_argument_tool.jsonl",
    "A tool that takes no arguments: the block opens with input {} and sends only the "
    "API's empty partial_json, so start_input {} stands; stop_reason tool_use.",
)
def zero_argument_tool() -> StreamBuilder:
    return (
        stream("msg_01Kq7ZbVtN3cLpW9xYhRdFgM")
        .tool_start(0, "list_files", id="toolu_01Vb6TqHnW2sXcJk9LmPzRaE")
        .json_delta(0, "")
        .block_stop(0)
        .stop("tool_use")
    )


@cassette(
    "parallel_tools.jsonl",
    "Text, then two tool blocks one after the other (inputs split over several deltas); "
    "two tool calls in block order, stop_reason tool_use.",
)
def parallel_tools() -> StreamBuilder:
    return (
        stream("msg_01Pq2WmXrT8vNcLb5KyHgJdS")
        .text(0, "Reading both.")
        .tool(1, "read", {"path": "src/app.py"}, pieces=3, id="toolu_01Rk8YpWn4QzVbHc2TxLmGaE")
        .tool(
            2,
            "grep",
            {"pattern": "TODO", "path": "src"},
            pieces=4,
            id="toolu_01Mh3XcJq7LwPn5RbTvKyZdF",
        )
        .stop("tool_use")
    )


@cassette(
    "two_tools.jsonl",
    "A realistic answer calling two tools, as the live API streams it: text block 0 in "
    "several deltas with a ping, then tool_use blocks 1 and 2 one after the other "
    "(indexes 0..n-1, the API's empty first delta, JSON in small pieces), stop_reason "
    "tool_use. client.messages.stream() and its accumulator read it, unlike interleaved.",
)
def two_tools() -> StreamBuilder:
    return (
        StreamBuilder(model=MODEL, start=False)
        .raw(_live_message_start("msg_01Dq7HvLm3XwRt9KpNcYbZgE", input_tokens=618, output_tokens=3))
        .block_start(0, {"type": "text", "text": ""})
        .ping()
        .text_delta(0, "I'll check the weather")
        .text_delta(0, " and the local time")
        .text_delta(0, " in Lisbon.")
        .block_stop(0)
        .tool(
            1,
            "get_weather",
            {"city": "Lisbon", "unit": "celsius"},
            pieces=[8, 12],
            id="toolu_01Vb6TnQx2LcWm8RzHkJpYaD",
        )
        .tool(
            2,
            "get_time",
            {"timezone": "Europe/Lisbon"},
            pieces=[6, 9],
            id="toolu_01Ke4WrMb7YtQp3NxJcLvGhS",
        )
        .stop("tool_use")
    )


@cassette(
    "thinking.jsonl",
    "Extended thinking: a thinking block (thinking_delta, signature_delta) and a "
    "redacted_thinking block yield nothing; the text block after them is the answer.",
)
def thinking() -> StreamBuilder:
    return (
        stream("msg_01Tg5HbKx9WqLmN2vRcPzYdJ")
        .thinking(0, "The user wants a summary.", " Two points suffice.")
        .block_start(1, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"})
        .block_stop(1)
        .text(2, "Two points: it is short, and it is clear.")
        .stop("end_turn")
    )


@cassette(
    "escape_split.jsonl",
    'A tool input whose JSON escapes are cut across deltas (inside \\", \\n, \\\\ and a '
    "\\u00e9 escape): only the whole concatenation is parsed, at the stop.",
)
def escape_split() -> StreamBuilder:
    text = '{"path": "docs/caf\\u00e9 \\"draft\\".md", "content": "line 1\\nline 2 \\\\ end"}'
    cuts = [
        text.index("\\u00e9") + 3,  # inside \u00e9
        text.index('\\"draft') + 1,  # between \ and "
        text.index("\\n") + 1,  # between \ and n
        text.index("\\\\") + 1,  # between the two backslashes
    ]
    builder = stream("msg_01Es7LpQw3XbNk9VcRmTyHgD").tool_start(
        0, "write", id="toolu_01Wq4ZrNb8TxKcLp3VmHyJgS"
    )
    builder.json_delta(0, "")
    for start, end in zip([0, *sorted(cuts)], [*sorted(cuts), len(text)], strict=True):
        builder.json_delta(0, text[start:end])
    return builder.block_stop(0).stop("tool_use")


@cassette(
    "server_tool_use.jsonl",
    "A server-side web search (server_tool_use with its input_json_delta, then its "
    "result block) is passed over; only the text answer and done come out.",
)
def server_tool_use() -> StreamBuilder:
    return (
        stream("msg_01Sv3KqWn7YbLx2PcRtHmZgF")
        .tool_start(0, "web_search", id="srvtoolu_01Hx5QmWc9LbTn2RvKpYzJdG", kind="server_tool_use")
        .json_delta(0, "")
        .json_delta(0, '{"query": "python 3.11 release date"}')
        .block_stop(0)
        .block_start(
            1,
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_01Hx5QmWc9LbTn2RvKpYzJdG",
                "content": [],
            },
        )
        .block_stop(1)
        .text(2, "Python 3.11 was released in October 2022.")
        .stop("end_turn")
    )


# -- one per row of the error table -----------------------------------------------------


@cassette(
    "errors/orphan_json_delta.jsonl",
    "An input_json_delta at index 1, where no block was ever opened: orphan_json_delta "
    "at the delta, after the text already yielded.",
)
def orphan_json_delta() -> StreamBuilder:
    return (
        stream()
        .text(0, "Let me check.")
        .json_delta(1, '{"path": "a.md"}')
        .block_stop(1)
        .stop("tool_use")
    )


@cassette(
    "errors/orphan_json_delta_after_stop.jsonl",
    "An input_json_delta at index 0 after that tool block stopped: orphan_json_delta, "
    "the call completed before it stays yielded.",
)
def orphan_json_delta_after_stop() -> StreamBuilder:
    return (
        stream()
        .tool(0, "read", {"path": "a.md"}, id="toolu_01Lq8WcNx3RbTm5YvKpHzJgD")
        .json_delta(0, "}")
        .stop("tool_use")
    )


@cassette(
    "errors/duplicate_tool_start.jsonl",
    "A second content_block_start for tool block 1 while it is open: "
    "duplicate_tool_start at the second start.",
)
def duplicate_tool_start() -> StreamBuilder:
    return (
        stream()
        .tool_start(1, "read", id="toolu_01Dp4XmKq8WnLb2VcRtHyZgJ")
        .json_delta(1, '{"path": ')
        .tool_start(1, "read", id="toolu_01Dp4XmKq8WnLb2VcRtHyZgK")
        .json_delta(1, '"a.md"}')
        .block_stop(1)
        .stop("tool_use")
    )


@cassette(
    "errors/invalid_tool_json.jsonl",
    "Tool block 0's deltas concatenate to truncated JSON: invalid_tool_json at its stop.",
)
def invalid_tool_json() -> StreamBuilder:
    return (
        stream()
        .tool_start(0, "read", id="toolu_01Ij6VbNq2XcLm8WtRkHyPgD")
        .json_delta(0, "")
        .json_delta(0, '{"path": "a.m')
        .block_stop(0)
        .stop("tool_use")
    )


@cassette(
    "errors/invalid_tool_json_nan.jsonl",
    "Tool block 0's JSON holds NaN, which JSON (RFC 8259) does not have: invalid_tool_json.",
)
def invalid_tool_json_nan() -> StreamBuilder:
    return (
        stream()
        .tool_start(0, "read", id="toolu_01NaNxVbNq2XcLm8WtRkHyPgD")
        .json_delta(0, '{"path": "a.md", "limit": ')
        .json_delta(0, "NaN}")
        .block_stop(0)
        .stop("tool_use")
    )


@cassette(
    "errors/non_object_tool_input.jsonl",
    "Tool block 0's deltas are valid JSON but a list, not an object: "
    "non_object_tool_input at the stop.",
)
def non_object_tool_input() -> StreamBuilder:
    return (
        stream()
        .tool_start(0, "read", id="toolu_01No3WcKx7LbVn2RqTmHyZgF")
        .json_delta(0, "")
        .json_delta(0, '["a.md", "b.md"]')
        .block_stop(0)
        .stop("tool_use")
    )


@cassette(
    "errors/non_object_tool_input_null_start.jsonl",
    "Tool block 0 opens with input null and sends only the empty delta, so start_input "
    "null stands: non_object_tool_input at the stop.",
)
def non_object_tool_input_null_start() -> StreamBuilder:
    return (
        stream()
        .block_start(
            0,
            {
                "type": "tool_use",
                "id": "toolu_01Nn5XbWq9KcLm3VtRpHyJgD",
                "name": "read",
                "input": None,
            },
        )
        .json_delta(0, "")
        .block_stop(0)
        .stop("tool_use")
    )


@cassette(
    "errors/unclosed_tool_blocks.jsonl",
    "Tool blocks 3 and 1 (opened in that order) are still open at message_stop: "
    "unclosed_tool_blocks names them in opening order.",
)
def unclosed_tool_blocks() -> StreamBuilder:
    return (
        stream()
        .text(0, "Reading.")
        .tool_start(3, "read", id="toolu_01Uc7WmNx4KbLq9VrTpHyZgE")
        .json_delta(3, '{"path": "b.md"}')
        .tool_start(1, "read", id="toolu_01Uc7WmNx4KbLq9VrTpHyZgF")
        .json_delta(1, '{"path": "a.md"}')
        .stop("tool_use")
    )


@cassette(
    "errors/unclosed_tool_blocks_at_end.jsonl",
    "The stream breaks off inside tool block 0 (no stop, no message_stop): "
    "unclosed_tool_blocks is checked first, at the end of the input.",
)
def unclosed_tool_blocks_at_end() -> StreamBuilder:
    return (
        stream()
        .tool_start(0, "read", id="toolu_01Ue2XcWq6LbNm8VtRkHyPgJ")
        .json_delta(0, "")
        .json_delta(0, '{"path": ')
    )


@cassette(
    "errors/missing_message_stop.jsonl",
    "A complete text answer and its message_delta, but the stream ends before "
    "message_stop: missing_message_stop at the end; the text stays yielded.",
)
def missing_message_stop() -> StreamBuilder:
    return stream().text(0, "Almost done").message_delta("end_turn")


@cassette(
    "errors/missing_stop_reason.jsonl",
    "message_delta carries stop_reason null and no other arrives: missing_stop_reason at the end.",
)
def missing_stop_reason() -> StreamBuilder:
    return stream().text(0, "Hello.").stop(None)


@cassette(
    "errors/unsupported_stop_reason.jsonl",
    "The answer was cut by max_tokens: unsupported_stop_reason at the end, after the "
    "truncated text.",
)
def unsupported_stop_reason() -> StreamBuilder:
    return stream().text(0, "The three reasons are: first,").stop("max_tokens")


@cassette(
    "errors/unsupported_stop_reason_last_counts.jsonl",
    "Two message_delta events, tool_use then refusal: the last one counts, so "
    "unsupported_stop_reason refusal although a tool call was yielded.",
)
def unsupported_stop_reason_last_counts() -> StreamBuilder:
    return (
        stream()
        .tool(0, "read", {"path": "a.md"}, id="toolu_01Ls4WbNq8XcKm2VrTpHyZgD")
        .message_delta("tool_use")
        .message_delta("refusal")
        .message_stop()
    )


@cassette(
    "errors/end_turn_with_tool_calls.jsonl",
    "Two complete tool calls but stop_reason end_turn: end_turn_with_tool_calls at the "
    "end, after both calls were yielded.",
)
def end_turn_with_tool_calls() -> StreamBuilder:
    return (
        stream()
        .tool(0, "read", {"path": "a.md"}, id="toolu_01Et5XmWq3LbNc7VkRpHyZgA")
        .tool(1, "read", {"path": "b.md"}, id="toolu_01Et5XmWq3LbNc7VkRpHyZgB")
        .stop("end_turn")
    )


@cassette(
    "errors/tool_use_without_tool_calls.jsonl",
    "stop_reason tool_use with only a text block: tool_use_without_tool_calls at the end.",
)
def tool_use_without_tool_calls() -> StreamBuilder:
    return stream().text(0, "I will read the file.").stop("tool_use")


@cassette(
    "errors/missing_message_start.jsonl",
    "A ping, then content_block_start with no message_start before it: "
    "missing_message_start at the first event that is not a ping.",
)
def missing_message_start() -> StreamBuilder:
    return StreamBuilder(model=MODEL, start=False).ping().text(0, "Hi").stop("end_turn")


@cassette(
    "errors/event_after_message_stop.jsonl",
    "A complete message, a ping (allowed) after message_stop, then a content_block_start: "
    "event_after_message_stop at that event.",
)
def event_after_message_stop() -> StreamBuilder:
    return (
        stream()
        .text(0, "Done.")
        .stop("end_turn")
        .ping()
        .block_start(1, {"type": "text", "text": "Oh, and"})
    )


@cassette(
    "errors/overloaded_error.jsonl",
    "A mid-stream API error event (overloaded_error) after some text: the SDK raises "
    "APIStatusError, so replay ends with an api_error; the text stays yielded.",
)
def overloaded_error() -> StreamBuilder:
    return stream().text(0, "Let me think").error("overloaded_error", "Overloaded")


def generate(folder: Path) -> list[Path]:
    """Write every cassette of `LIBRARY` under `folder` (atomically); return their paths."""
    written = []
    for relative, (description, recipe) in LIBRARY.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        recipe().write(path, description)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent
    for path in generate(folder):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
