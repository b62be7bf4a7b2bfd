"""`httpx` (v1) code served from cassettes in-process (`HTTPXReplayTransport`) and guarded
by the same `StrictTransport`: what litellm and plain-httpx code read."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY, not_installed

# httpx is no dependency of the harness (HTTPXReplayTransport imports it): skip without it.
httpx = pytest.importorskip("httpx", reason=not_installed("httpx"))

from harness import (  # noqa: E402
    Chunking,
    HTTPXReplayTransport,
    Replayer,
    ReplayTransport,
    StreamProtocolError,
    StrictTransport,
    cassettes_from,
    read_cassette,
)
from harness.builder import StreamBuilder  # noqa: E402

ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
    "stream": True,
}
GOOD = sorted(path for path in LIBRARY.glob("*.jsonl"))


def _transport(path: Path, *, strict: bool, chunking: Chunking | None = None) -> Any:
    replayer = Replayer(cassettes_from([path]), match_on=None, chunking=chunking or Chunking())
    inner = HTTPXReplayTransport(replayer)
    return StrictTransport(inner) if strict else inner


def _body(transport: Any, payload: dict[str, Any] = ASK) -> bytes:
    with (
        httpx.Client(transport=transport, base_url="https://api.anthropic.com") as client,
        client.stream("POST", "/v1/messages", json=payload) as response,
    ):
        return b"".join(response.iter_bytes())


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_httpx_reads_the_bytes_the_sdk_reads_and_strict_passes_them(path: Path) -> None:
    import httpx2

    replayer = Replayer([read_cassette(path)], match_on=None)
    with (
        httpx2.Client(transport=ReplayTransport(replayer), base_url="https://x") as client,
        client.stream("POST", "/v1/messages", json=ASK) as response,
    ):
        sdk_bytes = response.read()
    plain = _body(_transport(path, strict=False, chunking=Chunking(size=5)))
    assert plain == sdk_bytes
    assert _body(_transport(path, strict=True, chunking=Chunking(size=5))) == plain


def test_a_broken_stream_raises_from_the_httpx_body() -> None:
    path = LIBRARY / "errors/orphan_json_delta.jsonl"
    assert _body(_transport(path, strict=False))
    with pytest.raises(StreamProtocolError) as raised:
        _body(_transport(path, strict=True))
    assert raised.value.code == "orphan_json_delta"


def test_the_async_httpx_client_is_served_and_guarded() -> None:
    async def body(path: Path) -> bytes:
        async with (
            httpx.AsyncClient(transport=_transport(path, strict=True), base_url="https://x") as c,
            c.stream("POST", "/v1/messages", json=ASK) as response,
        ):
            return b"".join([chunk async for chunk in response.aiter_bytes()])

    assert b"message_stop" in asyncio.run(body(LIBRARY / "two_tools.jsonl"))
    with pytest.raises(StreamProtocolError, match="message_stop"):
        asyncio.run(body(LIBRARY / "errors/missing_message_stop.jsonl"))


def test_a_cut_reaches_httpx_as_its_own_remote_protocol_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    StreamBuilder().text(0, "partial").directive("cut").write(path, "cut mid-answer")
    with pytest.raises(httpx.RemoteProtocolError):
        _body(_transport(path, strict=True))


def test_a_message_answer_is_checked_whole() -> None:
    good = _transport(LIBRARY / "two_tools.jsonl", strict=True)
    with httpx.Client(transport=good, base_url="https://x") as client:
        answer = client.post("/v1/messages", json={**ASK, "stream": False})
    assert answer.json()["stop_reason"] == "tool_use"
    broken = _transport(LIBRARY / "errors/end_turn_with_tool_calls.jsonl", strict=True)
    with (
        httpx.Client(transport=broken, base_url="https://x") as client,
        pytest.raises(StreamProtocolError, match="end_turn arrived with 2"),
    ):
        client.post("/v1/messages", json={**ASK, "stream": False})
