"""Write the Bedrock ConverseStream cassette library, reproducibly.

    python cassettes/bedrock/generate.py            # rewrite cassettes/bedrock/ in place
    python cassettes/bedrock/generate.py OUT_DIR    # write it elsewhere (tests compare the two)

Each cassette is one small function below, registered with its path under `converse/`
and the header `description` that says what it shows; `errors/<code>.jsonl` replays to
that code of the `bedrock-converse` table (or `api_error:<name>`), every other cassette
to done. Lines are the events as boto3's `converse_stream()["stream"]` yields them, one
key each (docs/bedrock-converse.md). Add a cassette by adding a function, run this
script, then `pytest tests/test_snapshots.py --snapshot-update` and review the snapshot.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import make_header, write_cassette

PROVIDER = "bedrock-converse"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"

Lines = list[dict[str, Any]]
Recipe = Callable[[], Lines]

#: relative path -> (description, recipe), in writing order.
LIBRARY: dict[str, tuple[str, Recipe]] = {}


def cassette(path: str, description: str) -> Callable[[Recipe], Recipe]:
    """Register a recipe under `path` (relative to the library folder)."""

    def register(recipe: Recipe) -> Recipe:
        LIBRARY[path] = (description, recipe)
        return recipe

    return register


# The events -------------------------------------------------------------------------------


def start() -> dict[str, Any]:
    return {"messageStart": {"role": "assistant"}}


def text(index: int, piece: str) -> dict[str, Any]:
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": piece}}}


def tool_start(index: int, ident: str, name: str) -> dict[str, Any]:
    use = {"toolUseId": ident, "name": name}
    return {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": use}}}


def tool_input(index: int, piece: str) -> dict[str, Any]:
    delta = {"toolUse": {"input": piece}}
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": delta}}


def stop_block(index: int) -> dict[str, Any]:
    return {"contentBlockStop": {"contentBlockIndex": index}}


def stop(reason: str) -> dict[str, Any]:
    return {"messageStop": {"stopReason": reason}}


def metadata(output_tokens: int = 12) -> dict[str, Any]:
    usage = {"inputTokens": 25, "outputTokens": output_tokens, "totalTokens": 25 + output_tokens}
    return {"metadata": {"usage": usage, "metrics": {"latencyMs": 412}}}


def text_block(index: int, *pieces: str) -> Lines:
    return [*(text(index, piece) for piece in pieces), stop_block(index)]


def tool_block(index: int, ident: str, name: str, arguments: dict[str, Any]) -> Lines:
    """A client tool block: its start, its input in two pieces, its stop."""
    encoded = json.dumps(arguments)
    half = len(encoded) // 2
    return [
        tool_start(index, ident, name),
        tool_input(index, encoded[:half]),
        tool_input(index, encoded[half:]),
        stop_block(index),
    ]


def weather(index: int = 1, city: str = "Paris", ident: str = "tooluse_Weather01") -> Lines:
    return tool_block(index, ident, "get_weather", {"city": city})


# Good cassettes -----------------------------------------------------------------------------


@cassette(
    "converse/text.jsonl",
    "A plain answer: messageStart, three text deltas with no block start (as Bedrock sends "
    "text), the block's stop, messageStop end_turn, metadata.",
)
def text_only() -> Lines:
    return [
        start(),
        *text_block(0, "Paris is ", "the capital ", "of France."),
        stop("end_turn"),
        metadata(),
    ]


@cassette(
    "converse/tool_use.jsonl",
    "Text, then a get_weather call whose input comes in two pieces; stopReason tool_use.",
)
def tool_use() -> Lines:
    return [
        start(),
        *text_block(0, "Let me check the weather."),
        *weather(),
        stop("tool_use"),
        metadata(),
    ]


@cassette(
    "converse/two_tools.jsonl",
    "Two get_weather calls (blocks 0 and 1) with no text; stopReason tool_use.",
)
def two_tools() -> Lines:
    return [
        start(),
        *weather(0, "Paris", "tooluse_Weather01"),
        *weather(1, "Lyon", "tooluse_Weather02"),
        stop("tool_use"),
        metadata(),
    ]


@cassette(
    "converse/zero_argument_tool.jsonl",
    "A tool block with no input delta at all: the zero-argument call, read as {}.",
)
def zero_argument_tool() -> Lines:
    return [
        start(),
        tool_start(0, "tooluse_Time01", "get_time"),
        stop_block(0),
        stop("tool_use"),
        metadata(),
    ]


@cassette(
    "converse/reasoning.jsonl",
    "A reasoningContent block (text, then its signature) before the answer's text, and an "
    "empty first text delta: reasoning is passed over, the text read.",
)
def reasoning() -> Lines:
    think = [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"reasoningContent": part}}}
        for part in ({"text": "The user asks for a capital."}, {"signature": "SigHarness01"})
    ]
    return [
        start(),
        *think,
        stop_block(0),
        *text_block(1, "", "Paris."),
        stop("end_turn"),
        metadata(),
    ]


@cassette(
    "converse/reasoning_redacted.jsonl",
    "Reasoning the provider redacted: two reasoningContent blocks of redactedContent alone "
    "(bytes, base64 in JSON), as Claude 3.7 sends it, passed over; then the answer's text.",
)
def reasoning_redacted() -> Lines:
    redacted = [
        {
            "contentBlockDelta": {
                "contentBlockIndex": index,
                "delta": {"reasoningContent": {"redactedContent": blob}},
            }
        }
        for index, blob in enumerate(("RXRrRUNrZ0lCeEFC", "RXFBRENrZ0lCeEFC"))
    ]
    return [
        start(),
        redacted[0],
        stop_block(0),
        redacted[1],
        stop_block(1),
        *text_block(2, "Paris is ", "the capital of France."),
        stop("end_turn"),
        metadata(),
    ]


@cassette(
    "converse/citations.jsonl",
    "A text block whose deltas include a citation delta (the key boto3's model names "
    "citation: a title, the cited text, its place in a document), passed over; the text "
    "read around it.",
)
def citations() -> Lines:
    cited = {
        "title": "france.txt",
        "sourceContent": [{"text": "Paris is the capital of France."}],
        "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 31}},
    }
    return [
        start(),
        text(0, "Paris is "),
        text(0, "the capital of France."),
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"citation": cited}}},
        stop_block(0),
        stop("end_turn"),
        metadata(),
    ]


@cassette(
    "converse/server_tool.jsonl",
    "A server tool's use and its result (toolUse of type server_tool_use, a toolResult "
    "block) passed over, then the answer's text; stopReason end_turn.",
)
def server_tool() -> Lines:
    use = {"toolUseId": "srvtool_Search01", "name": "web_search", "type": "server_tool_use"}
    result = {"toolUseId": "srvtool_Search01", "type": "web_search_result"}
    return [
        start(),
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": use}}},
        tool_input(0, '{"query": "capital of France"}'),
        stop_block(0),
        {"contentBlockStart": {"contentBlockIndex": 1, "start": {"toolResult": result}}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"toolResult": [{"text": "Paris is the capital of France."}]},
            }
        },
        stop_block(1),
        *text_block(2, "Paris."),
        stop("end_turn"),
        metadata(),
    ]


# Error cassettes, one a code ----------------------------------------------------------------


def _error(code: str, description: str) -> Callable[[Recipe], Recipe]:
    return cassette(f"converse/errors/{code}.jsonl", description)


@_error("missing_message_start", "The stream starts with a text delta: no messageStart.")
def missing_message_start() -> Lines:
    return text_only()[1:]


@_error("duplicate_message_start", "A second messageStart after the first text delta.")
def duplicate_message_start() -> Lines:
    lines = text_only()
    return [*lines[:2], start(), *lines[2:]]


@_error("orphan_tool_delta", "A toolUse input delta at block 1, which no toolUse start opened.")
def orphan_tool_delta() -> Lines:
    return [start(), *text_block(0, "Hi."), tool_input(1, '{"city": '), stop("end_turn")]


@_error("duplicate_block_start", "The tool block 1 is started twice.")
def duplicate_block_start() -> Lines:
    lines = tool_use()
    return [*lines[:4], tool_start(1, "tooluse_Again", "get_weather"), *lines[4:]]


@_error("delta_kind_mismatch", "A text delta at the open tool block 1.")
def delta_kind_mismatch() -> Lines:
    lines = tool_use()
    return [*lines[:4], text(1, "not input"), *lines[4:]]


@_error("invalid_tool_json", "The tool's joined input is cut in half: not JSON.")
def invalid_tool_json() -> Lines:
    lines = tool_use()
    return [line for line in lines if line != lines[5]]


@_error("non_object_tool_input", "The tool's input is the JSON list [1].")
def non_object_tool_input() -> Lines:
    return [
        start(),
        tool_start(0, "tooluse_Weather01", "get_weather"),
        tool_input(0, "[1]"),
        stop_block(0),
        stop("tool_use"),
        metadata(),
    ]


@_error("unfinished_tool_blocks", "messageStop arrives while the tool block 1 is open.")
def unfinished_tool_blocks() -> Lines:
    return [line for line in tool_use() if line != stop_block(1)]


@_error("missing_message_stop", "The stream ends after the text block: no messageStop.")
def missing_message_stop() -> Lines:
    return text_only()[:5]


@_error("unsupported_stop_reason", "stopReason max_tokens: the answer was cut.")
def unsupported_stop_reason() -> Lines:
    lines = text_only()
    return [stop("max_tokens") if "messageStop" in line else line for line in lines]


@_error("end_turn_with_tool_calls", "stopReason end_turn after a client tool call.")
def end_turn_with_tool_calls() -> Lines:
    return [stop("end_turn") if "messageStop" in line else line for line in tool_use()]


@_error("tool_use_without_tool_calls", "stopReason tool_use with no tool block.")
def tool_use_without_tool_calls() -> Lines:
    return [stop("tool_use") if "messageStop" in line else line for line in text_only()]


@_error("event_after_stop", "A text delta after messageStop.")
def event_after_stop() -> Lines:
    lines = text_only()
    return [*lines[:6], text(0, "late"), *lines[6:]]


@_error(
    "throttling_exception",
    "A throttlingException mid-stream: replay reports api_error:throttlingException.",
)
def throttling_exception() -> Lines:
    lines = text_only()
    return [*lines[:2], {"throttlingException": {"message": "Too many requests."}}]


def generate(folder: Path) -> list[Path]:
    """Write every cassette under `folder`; return their paths, in order."""
    written = []
    for name, (description, recipe) in LIBRARY.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        header = make_header(description, "synthetic", provider=PROVIDER, model=MODEL)
        write_cassette(path, recipe(), header=header)
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent
    for path in generate(folder):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
