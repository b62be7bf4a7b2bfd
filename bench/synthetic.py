"""Synthetic streams of any size for the benchmark, written with `StreamBuilder`.

Each shape is generated lazily, a few thousand events at a time (a fresh builder per
chunk), so a stream of 10^6 events never sits in memory whole:
- `text`: one long answer, a single text block of `text_delta`s of a few words (~16
  characters, as the API sends them);
- `tool`: many tool blocks, each the API's empty first delta and ten small pieces;
- `mixed`: a text block with 90% of the deltas, then tool blocks of up to 1000 small
  `input_json_delta`s holding the other 10% (10^5 deltas: 90k text + 10k tool);
- `one_block`: a single tool block of N small deltas.
A tool's input is structured, as edits or rows are: `{"path": ..., "edits": [{"line":
1, "text": "..."}, ...]}`, cut into pieces of about 8 characters.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Final

from harness.builder import StreamBuilder, split_json

__all__ = ["SHAPES", "synthetic_events"]

#: shape name -> one-line description (printed by the benchmark)
SHAPES: Final[dict[str, str]] = {
    "text": "one text block of small text deltas",
    "tool": "tool blocks of 11 small input_json_deltas each",
    "mixed": "90% text deltas in one block, 10% small tool deltas in blocks of <=1000",
    "one_block": "one tool block of small input_json_deltas",
}

CHUNK: Final = 4096
PHRASES: Final = (
    "The stream arrives ",
    "in small pieces, ",
    "a few words ",
    "at a time; ",
    "each one is ",
    "shown at once.\n",
)
TOOL_PIECES: Final = 10
BLOCK_DELTAS: Final = 1000

Step = Callable[[StreamBuilder, int], object]


def _chunked(count: int, step: Step) -> Iterator[dict[str, Any]]:
    """`count` calls of `step(builder, i)`, drained every `CHUNK` calls."""
    for start in range(0, count, CHUNK):
        builder = StreamBuilder(start=False)
        for number in range(start, min(start + CHUNK, count)):
            step(builder, number)
        yield from builder.events()


def _text_block(index: int, deltas: int) -> Iterator[dict[str, Any]]:
    yield from StreamBuilder(start=False).block_start(index, {"type": "text", "text": ""}).events()
    yield from _chunked(deltas, lambda b, n: b.text_delta(index, PHRASES[n % len(PHRASES)]))
    yield from StreamBuilder(start=False).block_stop(index).events()


def _tool_input(number: int, size: int) -> str:
    """A structured input of about `size` characters of JSON."""
    edit_size = len(json.dumps({"line": 1, "text": "word"})) + 2
    edits = [{"line": line, "text": "word"} for line in range(max(1, size // edit_size))]
    return json.dumps({"path": f"src/pkg/module_{number:07d}.py", "edits": edits})


def _tool_block(index: int, deltas: int) -> Iterator[dict[str, Any]]:
    """A tool block: the API's empty first delta, then `deltas - 1` pieces of ~8 chars."""
    pieces = split_json(_tool_input(index, 8 * (deltas - 1)), max(1, deltas - 1))
    yield from StreamBuilder(start=False).tool_start(index, "write").events()
    yield from _chunked(1, lambda b, _: b.json_delta(index, ""))
    yield from _chunked(len(pieces), lambda b, n: b.json_delta(index, pieces[n]))
    yield from StreamBuilder(start=False).block_stop(index).events()


def _tool_blocks(first_index: int, deltas: int, per_block: int) -> Iterator[dict[str, Any]]:
    index = first_index
    while deltas > 0:
        take = min(per_block, deltas)
        yield from _tool_block(index, take)
        deltas -= take
        index += 1


def synthetic_events(shape: str, size: int) -> Iterator[dict[str, Any]]:
    """`size` deltas of the given shape, with `message_start` before and the stop after."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; one of {', '.join(SHAPES)}")
    yield from StreamBuilder().events()
    body = max(2, size)
    if shape == "text":
        yield from _text_block(0, body)
        stop_reason = "end_turn"
    elif shape == "tool":
        yield from _tool_blocks(0, body, TOOL_PIECES + 1)
        stop_reason = "tool_use"
    elif shape == "mixed":
        text_deltas = body * 9 // 10
        yield from _text_block(0, text_deltas)
        yield from _tool_blocks(1, body - text_deltas, BLOCK_DELTAS)
        stop_reason = "tool_use"
    else:
        yield from _tool_block(0, body)
        stop_reason = "tool_use"
    yield from StreamBuilder(start=False).stop(stop_reason).events()
