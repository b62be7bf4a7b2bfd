"""The adapters against their floor: `python -m bench.openai_adapters [--quick]`.

The floor is parsing each line of a body with `orjson.loads`; the figure is parsing and
feeding an adapter the same lines, per event, CPU time. Each round times a body's floor
and then its adapter, `passes` runs each, and keeps each one's median run; the ratio
printed is the median of the rounds' ratios, with their spread (lowest-highest), so that
other work on a shared machine moves both sides of a round alike and shows as a spread.
The bodies: a text answer of many deltas, then a call of many pieces, in each dialect:
Chat Completions (`ChatAdapter`), Responses (`ResponsesAdapter`), Bedrock's
ConverseStream (`ConverseAdapter`, the events as boto3 yields them), Gemini's chunks
(`GeminiAdapter`: text chunks, then a call whose arguments are streamed as
`partialArgs`, each chunk with its usage, as the API sends them), and Anthropic's
Messages as replay feeds them (`StreamAdapter.feed` over each line's dict). Every
adapter's target (docs/performance.md, docs/openai-adapters.md,
docs/bedrock-converse.md, docs/gemini.md) is 2x; printed, never asserted. `harness
bench` prints the same table (section h) and its targets.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any, Final

import orjson

from harness._providers.anthropic.adapter import StreamAdapter
from harness._providers.bedrock_converse.adapter import ConverseAdapter
from harness._providers.gemini.adapter import GeminiAdapter
from harness._providers.openai_chat.adapter import DONE, ChatAdapter
from harness._providers.openai_responses.adapter import ResponsesAdapter
from harness.builder import StreamBuilder

__all__ = [
    "TARGET",
    "Row",
    "anthropic_body",
    "chat_body",
    "converse_body",
    "gemini_body",
    "main",
    "measure",
    "print_rows",
    "responses_body",
]

#: every adapter's target (issues 29 and 38): at most this many times the floor an event
TARGET: Final = 2.0


def anthropic_body(deltas: int, pieces: int) -> list[bytes]:
    """An Anthropic Messages body's `data` lines: text, then one tool call."""
    builder = StreamBuilder().text(0, *(f" word{n}" for n in range(deltas)))
    builder.tool_start(1, "read")
    for piece in ['{"path": "', *("a" * pieces), '"}']:
        builder.json_delta(1, piece)
    builder.block_stop(1).stop("tool_use")
    return [orjson.dumps(event) for event in builder.events()]


def chat_body(deltas: int, pieces: int) -> list[bytes]:
    """A Chat Completions body's `data` lines (but `[DONE]`): text, then one call."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        line = {
            "id": "chatcmpl-Bx7Qp2u1Yv9mZ3kR8aLw",
            "object": "chat.completion.chunk",
            "created": 1764644400,
            "model": "gpt-5-mini-2025-08-07",
            "service_tier": "default",
            "system_fingerprint": None,
            "choices": [choice],
            "obfuscation": "Fz3k",
        }
        return orjson.dumps(line)

    opening = {"index": 0, "id": "call_1", "type": "function"}
    return [
        chunk({"role": "assistant", "content": "", "refusal": None}),
        *(chunk({"content": f" word{n}"}) for n in range(deltas)),
        chunk({"tool_calls": [{**opening, "function": {"name": "read", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "'}}]}),
        *(chunk({"tool_calls": [{"index": 0, "function": {"arguments": "a"}}]}),) * pieces,
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}),
        chunk({}, "tool_calls"),
    ]


def responses_body(deltas: int, pieces: int) -> list[bytes]:
    """A Responses body's `data` lines: text, then one call, numbered from 0, as the API
    sends them: ids of its length (a prefix and 48 hex digits), and on each delta event
    the `obfuscation` field the API adds by default (`stream_options.include_obfuscation`)."""
    hex48 = "68af4030592c81938ec0a5fbab4a3e9f0c6b4e0d2a1f7c35"
    message_id, call_item_id = f"msg_{hex48}", f"fc_{hex48}"
    response = {"id": f"resp_{hex48}", "object": "response"}
    text_at = {"item_id": message_id, "output_index": 0, "content_index": 0}
    message = {"id": message_id, "type": "message", "role": "assistant", "content": []}
    call = {"id": call_item_id, "type": "function_call", "call_id": "call_1", "name": "read"}
    arguments = '{"path": "' + "a" * pieces + '"}'
    part = {"type": "output_text", "text": "", "annotations": []}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {"type": "response.content_part.added", **text_at, "part": part},
        *(
            {
                "type": "response.output_text.delta",
                **text_at,
                "delta": f" word{n}",
                "logprobs": [],
                "obfuscation": "Fz3kQ9x2Lw",
            }
            for n in range(deltas)
        ),
        {"type": "response.content_part.done", **text_at, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.output_item.added", "output_index": 1, "item": call},
        *(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": call_item_id,
                "output_index": 1,
                "delta": piece,
                "obfuscation": "Fz3kQ9x2Lw",
            }
            for piece in ['{"path": "', *("a" * pieces), '"}']
        ),
        {
            "type": "response.output_item.done",
            "output_index": 1,
            "item": {**call, "arguments": arguments},
        },
        {"type": "response.completed", "response": {**response, "status": "completed"}},
    ]
    return [orjson.dumps({**event, "sequence_number": n}) for n, event in enumerate(events)]


def converse_body(deltas: int, pieces: int) -> list[bytes]:
    """A ConverseStream's events as boto3 yields them: text, then one call, metadata."""

    def delta(index: int, value: dict[str, Any]) -> bytes:
        return orjson.dumps({"contentBlockDelta": {"contentBlockIndex": index, "delta": value}})

    use = {"toolUseId": "tooluse_Bx7Qp2u1Yv9mZ3kR8aLw", "name": "read"}
    usage = {"inputTokens": 25, "outputTokens": 12, "totalTokens": 37}
    return [
        orjson.dumps({"messageStart": {"role": "assistant"}}),
        *(delta(0, {"text": f" word{n}"}) for n in range(deltas)),
        orjson.dumps({"contentBlockStop": {"contentBlockIndex": 0}}),
        orjson.dumps({"contentBlockStart": {"contentBlockIndex": 1, "start": {"toolUse": use}}}),
        *(
            delta(1, {"toolUse": {"input": piece}})
            for piece in ['{"path": "', *("a" * pieces), '"}']
        ),
        orjson.dumps({"contentBlockStop": {"contentBlockIndex": 1}}),
        orjson.dumps({"messageStop": {"stopReason": "tool_use"}}),
        orjson.dumps({"metadata": {"usage": usage, "metrics": {"latencyMs": 412}}}),
    ]


def gemini_body(deltas: int, pieces: int) -> list[bytes]:
    """Gemini's chunks as the API streams them: text, then one call whose `path` argument
    comes in `partialArgs` pieces, closed by `{}`, then `STOP`; each with its usage."""
    usage = {"promptTokenCount": 12, "candidatesTokenCount": 4, "totalTokenCount": 16}

    def chunk(part: dict[str, Any], **candidate: Any) -> bytes:
        content = {"parts": [part], "role": "model"}
        return orjson.dumps(
            {
                "candidates": [{"content": content, **candidate, "index": 0}],
                "usageMetadata": usage,
                "modelVersion": "gemini-2.5-flash",
            }
        )

    def piece(value: str) -> dict[str, Any]:
        partial = [{"jsonPath": "$.path", "stringValue": value, "willContinue": True}]
        return {"functionCall": {"partialArgs": partial, "willContinue": True}}

    return [
        *(chunk({"text": f" word{n}"}) for n in range(deltas)),
        chunk({"functionCall": {"name": "read", "willContinue": True}}),
        *(chunk(piece("a")) for _ in range(pieces)),
        chunk({"functionCall": {}}),
        chunk({"text": ""}, finishReason="STOP"),
    ]


def _parse(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    for line in lines:
        loads(line)


def _anthropic(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    adapter = StreamAdapter()
    feed = adapter.feed
    for line in lines:
        feed(loads(line))
    adapter.finish()


def _chat(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    adapter = ChatAdapter()
    feed = adapter.feed
    for line in lines:
        feed(loads(line))
    feed(DONE)
    adapter.finish()


def _responses(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    adapter = ResponsesAdapter()
    feed = adapter.feed
    for line in lines:
        feed(loads(line))
    adapter.finish()


def _converse(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    adapter = ConverseAdapter()
    feed = adapter.feed
    for line in lines:
        feed(loads(line))
    adapter.finish()


def _gemini(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    adapter = GeminiAdapter()
    feed = adapter.feed
    for line in lines:
        feed(loads(line))
    adapter.finish()


BODIES: Final[dict[str, tuple[Callable[[int, int], list[bytes]], Callable[..., None]]]] = {
    "anthropic": (anthropic_body, _anthropic),
    "chat": (chat_body, _chat),
    "responses": (responses_body, _responses),
    "converse": (converse_body, _converse),
    "gemini": (gemini_body, _gemini),
}


def _per_event(
    run: Callable[[Sequence[bytes]], None], lines: Sequence[bytes], passes: int
) -> float:
    """ns per line, the median of `passes` runs."""
    times = []
    for _ in range(passes):
        start = time.process_time_ns()
        run(lines)
        times.append(time.process_time_ns() - start)
    return statistics.median(times) / len(lines)


@dataclass(frozen=True, slots=True)
class Row:
    """One dialect's figures: its body, the floor and the adapter a line (ns, medians of
    the rounds), and each round's ratio."""

    dialect: str
    events: int
    line_bytes: float
    loads_ns: float
    fed_ns: float
    ratios: tuple[float, ...]

    @property
    def ratio(self) -> float:
        """The median of the rounds' ratios."""
        return statistics.median(self.ratios)

    @property
    def met(self) -> bool:
        """Whether the target is met."""
        return self.ratio <= TARGET


def measure(deltas: int, pieces: int, rounds: int, passes: int) -> list[Row]:
    """Each dialect's body of `deltas` text deltas and a call of `pieces` pieces, against
    its floor, in `rounds` rounds of `passes` runs each."""
    rows = []
    for dialect, (body, run) in BODIES.items():
        lines = body(deltas, pieces)
        floor, fed = [], []
        for _ in range(rounds):
            floor.append(_per_event(_parse, lines, passes))
            fed.append(_per_event(run, lines, passes))
        rows.append(
            Row(
                dialect,
                len(lines),
                sum(map(len, lines)) / len(lines),
                statistics.median(floor),
                statistics.median(fed),
                tuple(ours / theirs for ours, theirs in zip(fed, floor, strict=True)),
            )
        )
    return rows


def print_rows(rows: Sequence[Row], out: IO[str]) -> None:
    """The table: one row a dialect."""
    out.write(
        f"  {'dialect':<10} {'events':>6} {'line B':>6} {'loads':>6} {'+feed':>6}"
        f" {'ratio':>6} {'rounds':>11}  met\n"
    )
    for row in rows:
        spread = f"{min(row.ratios):.2f}-{max(row.ratios):.2f}x"
        met = "yes" if row.met else "NO"
        out.write(
            f"  {row.dialect:<10} {row.events:>6} {row.line_bytes:>6.0f} {row.loads_ns:>6.0f}"
            f" {row.fed_ns:>6.0f} {row.ratio:>5.2f}x {spread:>11}  {met}\n"
        )
    out.flush()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.openai_adapters")
    parser.add_argument("--quick", action="store_true", help="a small body, few rounds")
    options = parser.parse_args(argv)
    deltas, pieces, rounds, passes = (100, 20, 2, 3) if options.quick else (2000, 200, 7, 30)
    print(f"Adapters vs orjson.loads, ns per event ({rounds} interleaved rounds)")
    print_rows(measure(deltas, pieces, rounds, passes), sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
