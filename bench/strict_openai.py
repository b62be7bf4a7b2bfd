"""`harness bench` (f'): what `harness.strict` costs an openai client, per streamed request.

One 120-event answer of each dialect (text, then a call: the bodies of
`bench.openai_adapters`), served a chunk an event by an httpx2 `MockTransport`, read
through the SDK's own helpers, `chat.completions.stream()` and `responses.stream()`, to
the final completion or response: CPU time per request, a plain client and a strict one
side by side, the order turning, the median pair's ratio. The target
(docs/performance.md) is 1.10x; printed, never asserted.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Final

import orjson

from bench.openai_adapters import chat_body, responses_body

__all__ = ["EVENTS", "TARGET", "section_strict_openai"]

#: The events of each answer.
EVENTS: Final = 120
TARGET: Final = 1.10


def _bodies() -> dict[str, list[bytes]]:
    chat = [b"data: " + line + b"\n\n" for line in chat_body(100, 15)]
    responses = [_named(orjson.loads(line)) for line in responses_body(95, 15)]
    assert len(chat) == len(responses) == EVENTS
    return {"chat": [*chat, b"data: [DONE]\n\n"], "responses": responses}


def _named(event: dict[str, Any]) -> bytes:
    """A Responses event as the API frames it; an added call with the empty `arguments`
    the API sends (which `responses.stream()` adds the deltas to)."""
    kind = str(event["type"])
    item: dict[str, Any] = event.get("item") or {}
    if kind == "response.output_item.added" and item["type"] == "function_call":
        event = {**event, "item": {**item, "arguments": ""}}
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"


def _client(chunks: list[bytes], guarded: bool) -> Any:
    import httpx2
    import openai

    from harness._strict.client import strict

    class Body(httpx2.SyncByteStream, httpx2.AsyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    client = openai.OpenAI(
        api_key="benchmark",
        base_url="https://api.example.test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(answer)),
    )
    return strict(client) if guarded else client


def _chat(client: Any) -> None:
    ask = {"model": "gpt-5-mini", "messages": [{"role": "user", "content": "Go"}]}
    with client.chat.completions.stream(**ask) as stream:
        stream.get_final_completion()


def _responses(client: Any) -> None:
    with client.responses.stream(model="gpt-5-mini", input="Go") as stream:
        stream.get_final_response()


def _cpu(read: Callable[[Any], None], client: Any) -> float:
    begin = time.process_time()
    read(client)
    return time.process_time() - begin


def section_strict_openai(requests: int, report: Any) -> dict[str, float]:
    """Print the figures; return each dialect's median ratio, strict against plain."""
    report.line(
        f"(f') harness.strict, openai: one request of {EVENTS} events through "
        "chat.completions.stream() and responses.stream(), CPU ms per request; "
        f"{requests} pairs, one plain and one strict side by side, the order turning"
    )
    if importlib.util.find_spec("openai") is None:
        report.line('  skipped: openai is not installed (pip install "stream-harness[openai]")')
        report.line()
        return {}
    bodies = _bodies()
    ratios: dict[str, float] = {}
    rows: list[list[str]] = []
    for name, read in (("chat", _chat), ("responses", _responses)):
        plain_client, strict_client = _client(bodies[name], False), _client(bodies[name], True)
        for client in (plain_client, strict_client):
            for _ in range(max(1, requests // 25)):
                read(client)  # warm: imports, first-call caches
        plain: list[float] = []
        guarded: list[float] = []
        for number in range(requests):
            if number % 2:
                guarded.append(_cpu(read, strict_client))
                plain.append(_cpu(read, plain_client))
            else:
                plain.append(_cpu(read, plain_client))
                guarded.append(_cpu(read, strict_client))
        pairs = sorted(g / p for p, g in zip(plain, guarded, strict=True) if p > 0)
        ratios[name] = statistics.median(pairs)
        rows.append(
            [
                name,
                f"{statistics.median(plain) * 1000:.2f}",
                f"{statistics.median(guarded) * 1000:.2f}",
                f"{ratios[name]:.3f}x",
                f"{_guard_alone(name, bodies[name], requests) * 1000:.2f}",
            ]
        )
    report.table(["dialect", "plain ms", "strict ms", "median pair", "guard alone ms"], rows)
    report.line(
        "  guard alone: the same bytes through a StreamGuard and the dialect's reader, no SDK"
        " (what the guard itself costs a request, the median of as many runs)"
    )
    report.line()
    return ratios


def _guard_alone(name: str, chunks: list[bytes], runs: int) -> float:
    """CPU seconds per answer through the guard alone: its check made from the request,
    the chunks fed, every byte released."""
    import httpx2

    from harness._strict.guard import StreamGuard, guarded
    from harness._strict.transport import check_for

    path = "/v1/chat/completions" if name == "chat" else "/v1/responses"
    request = httpx2.Request(
        "POST", f"https://api.example.test{path}", json={"model": "m", "stream": True}
    )
    times = []
    for _ in range(runs):
        begin = time.process_time()
        check = check_for(request, httpx2.Response(200), ())
        assert check is not None
        for _ in guarded(iter(chunks), StreamGuard(reader=check.reader())):
            pass
        times.append(time.process_time() - begin)
    return statistics.median(times)
