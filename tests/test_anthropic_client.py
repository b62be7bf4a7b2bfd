"""`AnthropicModelClient` against an in-process transport serving SSE bytes: the request
body it sends, the events it yields, and how it answers the abort signal."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from harness import ModelEvent, StreamProtocolError, TextEvent
from harness.agent.client import AnthropicModelClient, ModelRequest
from harness.agent.loop import AgentFailed, Checkpoint, run_agent
from harness.agent.messages import Message, TextBlock
from harness.agent.signal import AbortController
from harness.agent.tools import ReadTool
from harness.builder import StreamBuilder

MODEL = "claude-test-model"


class Body(httpx2.AsyncByteStream):
    """An SSE response body; `silent_after` chunks in, the provider stops sending."""

    def __init__(self, builder: StreamBuilder, silent_after: int | None = None) -> None:
        self.chunks = [
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            for event in builder.events()
        ]
        self.silent_after = silent_after
        self.sent = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            if self.sent == self.silent_after:
                await asyncio.Event().wait()
            self.sent += 1
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


class Provider:
    """Serves one body per request and keeps each request's JSON body."""

    def __init__(self, *bodies: Body) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []

    async def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(await request.aread()))
        body = self.bodies[len(self.requests) - 1]
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    def client(self) -> AnthropicModelClient:
        from anthropic import AsyncAnthropic

        http = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))
        sdk = AsyncAnthropic(api_key="test-key", http_client=http, max_retries=0)
        return AnthropicModelClient(sdk, model=MODEL, max_tokens=512)


def reads(path: str) -> StreamBuilder:
    return (
        StreamBuilder()
        .text(0, "Reading.")
        .tool(1, "read", {"path": path}, pieces=2, id="toolu_x")
        .stop("tool_use")
    )


def answer(*pieces: str) -> StreamBuilder:
    return StreamBuilder().text(0, *pieces).stop("end_turn")


def test_messages_and_tools_are_mapped_to_the_request_body(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("alpha")
    provider = Provider(Body(reads("a.md")), Body(answer("It says alpha.")))
    tool = ReadTool(tmp_path)
    result = asyncio.run(
        run_agent(provider.client(), prompt="Read a.md", system="Be brief.", tools=[tool])
    )
    assert result.stop_reason == "complete"
    first, second = provider.requests
    assert first == {
        "model": MODEL,
        "max_tokens": 512,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Read a.md"}]}],
        "tools": [tool.definition.to_api()],
        "stream": True,
    }
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_x", "name": "read", "input": {"path": "a.md"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_x",
                    "content": "alpha",
                    "is_error": False,
                }
            ],
        },
    ]
    assert result.messages[-1] == Message("assistant", (TextBlock("It says alpha."),))


def test_without_system_or_tools_those_parameters_are_left_out() -> None:
    provider = Provider(Body(answer("Hi.")))
    asyncio.run(run_agent(provider.client(), prompt="Hello"))
    assert "system" not in provider.requests[0]
    assert "tools" not in provider.requests[0]


def test_the_sdk_stream_goes_through_the_strict_adapter() -> None:
    provider = Provider(Body(StreamBuilder().text(0, "cut").stop("max_tokens")))
    with pytest.raises(AgentFailed) as failed:
        asyncio.run(run_agent(provider.client(), prompt="p"))
    error = failed.value.error
    assert isinstance(error, StreamProtocolError) and error.code == "unsupported_stop_reason"
    assert provider.bodies[0].closed


def test_an_abort_while_the_provider_is_silent_closes_the_stream() -> None:
    body = Body(answer("one", "two"), silent_after=3)  # start, block start, "one", then silence
    provider = Provider(body)
    controller = AbortController()

    async def consume() -> list[ModelEvent]:
        request = ModelRequest("", [Message.user_text("p")], [], controller.signal)
        seen: list[ModelEvent] = []
        async for event in provider.client().stream(request):
            seen.append(event)
            asyncio.get_running_loop().call_later(0.05, controller.abort)
        return seen

    seen = asyncio.run(asyncio.wait_for(consume(), timeout=10))
    assert seen == [TextEvent("one")]
    assert body.closed
    assert body.sent == 3


def test_the_loop_returns_on_abort_even_while_the_provider_is_silent() -> None:
    body = Body(answer("one", "two"), silent_after=3)
    controller = AbortController()

    async def abort_soon() -> None:
        await asyncio.sleep(0.05)
        controller.abort()

    async def run() -> Any:
        aborter = asyncio.ensure_future(abort_soon())
        client = Provider(body).client()
        result = await asyncio.wait_for(
            run_agent(client, prompt="p", signal=controller.signal), timeout=10
        )
        await aborter
        return result

    result = asyncio.run(run())
    assert (result.stop_reason, result.checkpoint) == ("aborted", Checkpoint.BEFORE_COMMIT)
    assert result.messages == [Message.user_text("p")]
    assert body.closed


def test_a_loop_stopping_at_a_checkpoint_closes_the_sdk_stream() -> None:
    body = Body(answer("one", "two", "three"))

    async def run() -> Any:
        client = Provider(body).client()
        signal = AbortController().signal
        stream = client.stream(ModelRequest("", [Message.user_text("p")], [], signal))
        first = await anext(stream)
        await stream.aclose()
        return first

    assert asyncio.run(run()) == TextEvent("one")
    assert body.closed
    assert body.sent < len(body.chunks)
