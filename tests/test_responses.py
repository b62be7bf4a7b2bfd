"""The responses core: one cassette answers as the API would, whatever the transport.

HTTP errors, cuts and stalls are cassette lines; the in-process `ReplayTransport` carries
out the plan, so a real SDK client sees what it would see from a live server.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from conftest import LIBRARY, raises_connection_error

from harness import (
    Replayer,
    ReplayTransport,
    StreamProtocolError,
    failure_code,
    read_cassette,
    replay_events,
    replay_outcome,
    write_cassette,
)
from harness._replay.plan import Chunking, Cut, Stall, plan_response
from harness.builder import StreamBuilder

OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
REQUEST: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
}


def _client(replayer: Replayer, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="sk-ant-test-not-a-key",
        base_url="https://api.anthropic.com",
        http_client=httpx2.Client(transport=ReplayTransport(replayer)),
        **options,
    )


def _http_error(path: Path, status: int = 529, retry_after_ms: str = "1") -> Path:
    line = {
        "harness": "http_error",
        "status": status,
        "headers": {"retry-after-ms": retry_after_ms, "request-id": "req_test"},
        "body": OVERLOADED,
    }
    write_cassette(path, [line])
    return path


def _text(stream: Any) -> str:
    return "".join(
        event.delta.text
        for event in stream
        if event.type == "content_block_delta" and event.delta.type == "text_delta"
    )


def test_a_streaming_request_gets_the_events_and_a_plain_one_the_message(tmp_path: Path) -> None:
    cassette = LIBRARY / "text_only.jsonl"
    client = _client(Replayer([cassette, cassette]))
    streamed = _text(client.messages.create(**REQUEST, stream=True))
    message = client.messages.create(**REQUEST)
    assert streamed and message.content[0].text == streamed
    assert message.stop_reason == "end_turn"


def test_the_stream_helper_folds_a_two_tool_stream_into_its_final_message() -> None:
    client = _client(Replayer([LIBRARY / "parallel_tools.jsonl"]))
    with client.messages.stream(**REQUEST) as stream:
        final = stream.get_final_message()
    tools = [block for block in final.content if block.type == "tool_use"]
    assert len(tools) == 2 and final.stop_reason == "tool_use"


def test_an_http_error_line_is_the_status_headers_and_body_the_sdk_raises(tmp_path: Path) -> None:
    client = _client(Replayer([_http_error(tmp_path / "e.jsonl")]), max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(**REQUEST, stream=True)
    assert raised.value.status_code == 529
    assert raised.value.request_id == "req_test"
    assert raised.value.body == OVERLOADED


def test_a_session_of_two_overloads_then_a_stream_passes_through_the_sdks_own_retries(
    tmp_path: Path,
) -> None:
    error = _http_error(tmp_path / "e.jsonl")
    replayer = Replayer([error, error, LIBRARY / "text_only.jsonl"])
    started = time.monotonic()
    text = _text(_client(replayer).messages.create(**REQUEST, stream=True))
    assert text and len(replayer.requests) == 3
    # retry-after-ms: 1 is obeyed; the SDK's own backoff (0.5 s and more) would show
    assert time.monotonic() - started < 0.5 * 2


def test_a_cut_is_the_error_httpx_raises_when_a_server_drops_the_connection(
    tmp_path: Path,
) -> None:
    events = StreamBuilder().text(0, "The text ", "goes on").stop().events()
    cut = tmp_path / "cut.jsonl"
    write_cassette(cut, [*events[:3], {"harness": "cut", "after_bytes": 10}, *events[3:]])
    stream = _client(Replayer([cut])).messages.create(**REQUEST, stream=True)
    seen = []
    with raises_connection_error("RemoteProtocolError", "peer closed connection"):
        for event in stream:
            seen.append(event.type)
    assert seen == ["message_start", "content_block_start", "content_block_delta"]
    assert failure_code(replay_outcome(cut).error or Exception()) == (
        "connection_error:RemoteProtocolError"
    )


def test_a_mid_event_cut_sends_part_of_the_line_and_then_drops(tmp_path: Path) -> None:
    events = StreamBuilder().text(0, "Hello").stop().events()
    path = tmp_path / "cut.jsonl"
    write_cassette(path, [events[0], {"harness": "cut", "after_bytes": 12}, *events[1:]])
    pieces = list(plan_response(read_cassette(path), stream=True).body)
    assert pieces[-1] == Cut()
    assert pieces[-2] == b"event: conte"


def test_a_stall_longer_than_the_read_timeout_times_the_client_out(tmp_path: Path) -> None:
    events = StreamBuilder().text(0, "Hello").stop().events()
    path = tmp_path / "stall.jsonl"
    write_cassette(path, [*events[:2], {"harness": "stall", "ms": 5000}, *events[2:]])
    client = _client(Replayer([path]), max_retries=0, timeout=0.05)
    with pytest.raises((httpx2.ReadTimeout, anthropic.APITimeoutError)):
        list(client.messages.create(**REQUEST, stream=True))


def test_a_short_stall_only_delays(tmp_path: Path) -> None:
    events = StreamBuilder().text(0, "Hello").stop().events()
    path = tmp_path / "stall.jsonl"
    write_cassette(path, [*events[:2], {"harness": "stall", "ms": 30}, *events[2:]])
    planned = plan_response(read_cassette(path), stream=True, chunking=Chunking(size=5))
    pieces = list(planned.body)
    assert Stall(30) in pieces
    assert all(len(piece) <= 5 for piece in pieces if isinstance(piece, bytes))
    assert [e.type for e in replay_events(path, via="sdk")][-1] == "done"


def test_running_out_of_cassettes_is_one_line_not_a_hang() -> None:
    replayer = Replayer([LIBRARY / "text_only.jsonl"] * 2)
    client = _client(replayer)
    for _ in range(2):
        list(client.messages.create(**REQUEST, stream=True))
    with pytest.raises(anthropic.NotFoundError, match="request 3, but the cassettes hold 2"):
        client.messages.create(**REQUEST, stream=True)
    assert [str(error) for error in replayer.errors] == [
        "request 3, but the cassettes hold 2 responses"
    ]


def test_a_request_that_differs_from_the_recorded_one_fails_with_a_diff(tmp_path: Path) -> None:
    path = tmp_path / "recorded.jsonl"
    header = {"cassette": 1, "source": "recorded", "request": {**REQUEST, "system": "Be brief."}}
    write_cassette(path, StreamBuilder().text(0, "Hi").stop().events(), header=header)
    replayer = Replayer([path])
    with pytest.raises(anthropic.NotFoundError):
        _client(replayer).messages.create(**REQUEST, system="Be long.", stream=True)
    (error,) = replayer.errors
    assert "does not match" in str(error) and "compared on model, messages, system, tools" in str(
        error
    )
    assert '-"Be brief."' in str(error).splitlines()
    assert '+"Be long."' in str(error).splitlines()
    assert Replayer([path], match_on=None).matches(read_cassette(path), replayer.requests[0])


def test_captured_requests_keep_the_body_and_drop_every_credential() -> None:
    replayer = Replayer([LIBRARY / "text_only.jsonl"])
    client = _client(replayer)
    list(
        client.messages.create(
            **REQUEST,
            stream=True,
            metadata={"user_id": "u1"},
            extra_body={"tools_config": {"api_key": "sk-secret-nested"}},
            extra_headers={"Authorization": "Bearer sk-secret-header"},
        )
    )
    (request,) = replayer.requests
    assert request.method == "POST" and request.path == "/v1/messages"
    assert request.json["messages"] == REQUEST["messages"]
    assert request.json["metadata"] == {"user_id": "u1"}
    dumped = repr(request)
    assert "sk-secret" not in dumped and "sk-ant-test" not in dumped
    assert "x-api-key" not in request.headers and "authorization" not in request.headers


def test_an_error_event_answers_a_plain_request_with_the_apis_status() -> None:
    client = _client(Replayer([LIBRARY / "errors" / "overloaded_error.jsonl"]), max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(**REQUEST)
    assert raised.value.status_code == 529


def test_the_adapter_over_an_http_error_cassette_reports_the_api_error(tmp_path: Path) -> None:
    path = _http_error(tmp_path / "e.jsonl")
    for via in ("direct", "sdk"):
        with pytest.raises(anthropic.APIStatusError) as raised:
            list(replay_events(path, via=via))
        assert raised.value.status_code == 529, via
    assert not isinstance(replay_outcome(path).error, StreamProtocolError)
