"""The OpenAI adapters against their floor: `python -m bench.openai_adapters [--quick]`.

The floor is parsing each line of a body with `orjson.loads`; the figure is parsing and
feeding the adapter (`ChatAdapter`, `ResponsesAdapter`) the same lines, per event, CPU
time, the median of interleaved rounds (so that other work on a shared machine moves
both alike). The bodies: a text answer of many deltas, then a call of many pieces. The
target (docs/openai-adapters.md) is 2x; printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import orjson

from harness._providers.openai_chat.adapter import DONE, ChatAdapter
from harness._providers.openai_responses.adapter import ResponsesAdapter

__all__ = ["chat_body", "main", "responses_body"]

TARGET: Final = 2.0


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
    """A Responses body's `data` lines: text, then one call, numbered from 0."""
    response = {"id": "resp_68af4030592c81938ec0a5fbab4a3e9f", "object": "response"}
    text_at = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    call = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "read"}
    arguments = '{"path": "' + "a" * pieces + '"}'
    part = {"type": "output_text", "text": "", "annotations": []}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        {"type": "response.content_part.added", **text_at, "part": part},
        *(
            {"type": "response.output_text.delta", **text_at, "delta": f" word{n}", "logprobs": []}
            for n in range(deltas)
        ),
        {"type": "response.content_part.done", **text_at, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.output_item.added", "output_index": 1, "item": call},
        *(
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_1",
                "output_index": 1,
                "delta": piece,
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


def _parse(lines: Sequence[bytes]) -> None:
    loads = orjson.loads
    for line in lines:
        loads(line)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.openai_adapters")
    parser.add_argument("--quick", action="store_true", help="a small body, few rounds")
    options = parser.parse_args(argv)
    deltas, pieces, rounds, passes = (100, 20, 2, 3) if options.quick else (2000, 200, 5, 30)
    print(f"OpenAI adapters vs orjson.loads, ns per event ({rounds} interleaved rounds)")
    print(
        f"  {'dialect':<10} {'events':>6} {'line B':>6} {'loads':>6} {'+feed':>6} {'ratio':>6}  met"
    )
    bodies = [
        ("chat", _chat, chat_body(deltas, pieces)),
        ("responses", _responses, responses_body(deltas, pieces)),
    ]
    for name, run, lines in bodies:
        floor, fed = [], []
        for _ in range(rounds):
            floor.append(_per_event(_parse, lines, passes))
            fed.append(_per_event(run, lines, passes))
        parse, both = statistics.median(floor), statistics.median(fed)
        size = sum(map(len, lines)) / len(lines)
        ratio = both / parse
        met = "yes" if ratio <= TARGET else "NO"
        print(
            f"  {name:<10} {len(lines):>6} {size:>6.0f} {parse:>6.0f} {both:>6.0f}"
            f" {ratio:>5.2f}x  {met}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
