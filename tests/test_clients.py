"""Cassette clients: real Anthropic clients answered from cassettes, and the recording client."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from conftest import LIBRARY, raises_connection_error
from fake_api import FakeMessagesAPI

from harness import (
    Cassette,
    Chunking,
    InputError,
    Replayer,
    async_cassette_client,
    captured_requests,
    cassette_client,
    outcome_via_sdk,
    recording_client,
    replay_errors,
    write_cassette,
)
from harness.builder import StreamBuilder
from harness.faults import HTTP_429, fault_named

TWO_TOOLS = LIBRARY / "two_tools.jsonl"
TEXT_ONLY = LIBRARY / "text_only.jsonl"
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Hi"}],
}


def overloaded(retry_after_ms: str = "1") -> dict[str, object]:
    return {
        "harness": "http_error",
        "status": 529,
        "headers": {"retry-after-ms": retry_after_ms, "x-should-retry": "true"},
        "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    }


def test_one_cassette_serves_create_create_stream_and_messages_stream() -> None:
    client = cassette_client([TWO_TOOLS] * 3)
    plain = client.messages.create(**ASK)
    streamed = list(client.messages.create(**ASK, stream=True))
    with client.messages.stream(**ASK) as stream:
        helper = stream.get_final_message()
    assert plain.model_dump() == helper.model_dump()
    assert [block.type for block in plain.content] == ["text", "tool_use", "tool_use"]
    assert plain.content[1].input == {"city": "Lisbon", "unit": "celsius"}
    assert (plain.stop_reason, plain.usage.output_tokens) == ("tool_use", 12)
    assert [event.type for event in streamed] == [
        event["type"] for event in Cassette(TWO_TOOLS).events() if event["type"] != "ping"
    ]


def test_several_cassettes_answer_one_request_each_in_order() -> None:
    client = cassette_client([TEXT_ONLY, TWO_TOOLS])
    first, second = client.messages.create(**ASK), client.messages.create(**ASK)
    assert first.stop_reason == "end_turn"
    assert second.stop_reason == "tool_use"


def test_a_session_folder_answers_its_turns_by_number(tmp_path: Path) -> None:
    shutil.copy(TWO_TOOLS, tmp_path / "turn-10.jsonl")
    shutil.copy(TEXT_ONLY, tmp_path / "turn-2.jsonl")
    client = cassette_client(tmp_path)
    assert [client.messages.create(**ASK).stop_reason for _ in range(2)] == ["end_turn", "tool_use"]


def test_a_folder_named_jsonl_in_a_folder_of_cassettes_is_no_cassette(tmp_path: Path) -> None:
    # It was opened as one: `.../kept.jsonl:1: cannot read: a folder, not a cassette file`.
    shutil.copy(TEXT_ONLY, tmp_path / "a.jsonl")
    (tmp_path / "kept.jsonl").mkdir()
    shutil.copy(TWO_TOOLS, tmp_path / "kept.jsonl" / "two_tools.jsonl")
    client = cassette_client(tmp_path)
    assert client.messages.create(**ASK).stop_reason == "end_turn"
    with pytest.raises(
        anthropic.NotFoundError, match="request 2, but the cassettes hold 1 response"
    ):
        client.messages.create(**ASK)


def test_running_out_fails_with_one_line_and_never_hangs() -> None:
    client = cassette_client([TEXT_ONLY, TEXT_ONLY])
    client.messages.create(**ASK)
    client.messages.create(**ASK)
    with pytest.raises(
        anthropic.NotFoundError, match="request 3, but the cassettes hold 2 responses"
    ):
        client.messages.create(**ASK)
    assert [str(error) for error in replay_errors(client)] == [
        "request 3, but the cassettes hold 2 responses"
    ]


def test_every_request_is_captured_without_credentials() -> None:
    client = cassette_client(TEXT_ONLY, default_headers={"authorization": "Bearer sk-ant-secret"})
    client.messages.create(**ASK, system="Be brief.", extra_headers={"x-trace": "t-1"})
    (request,) = captured_requests(client)
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.json == {**ASK, "system": "Be brief."}
    assert request.headers["x-trace"] == "t-1"
    assert "x-api-key" not in request.headers and "authorization" not in request.headers
    assert "sk-ant-secret" not in repr(request)


def test_a_529_529_stream_session_goes_through_the_sdks_own_retries(tmp_path: Path) -> None:
    for turn in (1, 2):
        write_cassette(tmp_path / f"turn-0{turn}.jsonl", [overloaded()])
    shutil.copy(TEXT_ONLY, tmp_path / "turn-03.jsonl")
    client = cassette_client(tmp_path)
    message = client.messages.create(**ASK)
    assert message.content[0].text == "The file has three sections."
    retries = [request.headers["x-stainless-retry-count"] for request in captured_requests(client)]
    assert retries == ["0", "1", "2"]


def test_an_http_error_the_sdk_may_not_retry_reaches_the_code_as_the_sdks_error(
    tmp_path: Path,
) -> None:
    write_cassette(tmp_path / "busy.jsonl", fault_named("http_529").derive([]) or [])
    client = cassette_client(tmp_path / "busy.jsonl")
    with pytest.raises(anthropic.OverloadedError) as raised:
        client.messages.create(**ASK)
    assert raised.value.status_code == 529
    assert len(captured_requests(client)) == 1


def test_a_429_then_ok_session_recovers_with_the_default_retries(tmp_path: Path) -> None:
    write_cassette(tmp_path / "turn-01.jsonl", [HTTP_429])
    shutil.copy(TEXT_ONLY, tmp_path / "turn-02.jsonl")
    with cassette_client(tmp_path).messages.stream(**ASK) as stream:
        assert stream.get_final_text() == "The file has three sections."


def test_a_cut_mid_event_raises_what_a_dropped_connection_raises(tmp_path: Path) -> None:
    variant = fault_named("cut_mid_event").derive(list(Cassette(TEXT_ONLY).events()))
    write_cassette(tmp_path / "cut.jsonl", variant or [])
    client = cassette_client(tmp_path / "cut.jsonl")
    with (
        raises_connection_error("RemoteProtocolError", "peer closed connection without"),
        client.messages.stream(**ASK) as stream,
    ):
        stream.get_final_text()


def test_a_stall_longer_than_the_read_timeout_raises_read_timeout(tmp_path: Path) -> None:
    variant = fault_named("stall").derive(list(Cassette(TEXT_ONLY).events()))
    write_cassette(tmp_path / "stall.jsonl", variant or [])
    client = cassette_client(tmp_path / "stall.jsonl", timeout=0.01)
    with raises_connection_error("ReadTimeout"), client.messages.stream(**ASK) as stream:
        stream.get_final_text()


def recorded(tmp_path: Path, request: dict[str, object]) -> Path:
    path = tmp_path / "recorded.jsonl"
    StreamBuilder().text(0, "Hi").stop().write(path, "recorded for a request")
    lines = path.read_text().splitlines()
    header = Cassette(path).header or {}
    import json

    lines[0] = json.dumps({**header, "request": request})
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_request_unlike_the_recorded_one_fails_with_a_diff_of_the_field(tmp_path: Path) -> None:
    path = recorded(tmp_path, ASK)
    client = cassette_client(path)
    with pytest.raises(anthropic.NotFoundError) as raised:
        client.messages.create(**{**ASK, "model": "claude-opus-5"})
    message = str(replay_errors(client)[0])
    assert message.splitlines() == [
        f"request 1 does not match the one {path} was recorded for "
        "(compared on model, messages, system, tools):",
        "--- model (recorded)",
        "+++ model (sent)",
        "@@ -1 +1 @@",
        '-"claude-sonnet-5"',
        '+"claude-opus-5"',
    ]
    assert "request 1 does not match" in str(raised.value)


def test_a_refused_request_consumes_no_cassette(tmp_path: Path) -> None:
    """A call the cassettes do not hold (`models.list()`: a path no cassette of theirs
    answers) and a request unlike the recorded one are refused, and the next cassette
    stays next: the correct requests after them get the first, then the second."""
    first = recorded(tmp_path, ASK)
    second = tmp_path / "second.jsonl"
    StreamBuilder().text(0, "Bye").stop().write(second, "the second answer")
    client = cassette_client([first, second])
    with pytest.raises(anthropic.NotFoundError, match="request 1 is GET /v1/models"):
        client.models.list()
    with pytest.raises(anthropic.NotFoundError, match="request 2 does not match"):
        client.messages.create(**{**ASK, "model": "claude-opus-5"})
    texts = [client.messages.create(**ASK).content[0] for _ in range(2)]
    assert [block.text for block in texts if block.type == "text"] == ["Hi", "Bye"]
    with pytest.raises(anthropic.NotFoundError, match="request 5, but the cassettes hold 2"):
        client.messages.create(**ASK)
    assert len(replay_errors(client)) == 3


def test_a_refused_request_takes_no_turn_of_a_fault_session(tmp_path: Path) -> None:
    """The plugin's fault replayer counts the turns answered as the replayer does: after a
    call the cassettes do not hold, the good turn still answers first (whole, not taken
    for the broken stream's turn and skipped), the broken one second."""
    from harness._testing.client_session import _FaultReplayer
    from harness._testing.fault_runs import FaultCase

    fault = fault_named("drop_message_stop")
    good = list(Cassette(TEXT_ONLY).events())
    variant = tmp_path / "broken.jsonl"
    write_cassette(variant, fault.derive(good) or [])
    case = FaultCase(fault, fault.expect, variant, responses=[TEXT_ONLY, variant])
    case.variant_index = 1
    client = cassette_client([], replayer=_FaultReplayer(case))
    with pytest.raises(anthropic.NotFoundError, match="GET /v1/models"):
        client.models.list()
    try:
        whole = client.messages.create(**ASK)
    except pytest.skip.Exception as skipped:
        pytest.fail(f"the good turn was taken for the broken one: {skipped}")
    assert whole.stop_reason == "end_turn"
    last = list(client.messages.create(**ASK, stream=True))[-1]
    assert last.type == "message_delta"  # no message_stop: the broken turn


def test_matching_is_chosen_per_client(tmp_path: Path) -> None:
    path = recorded(tmp_path, ASK)
    other_model = {**ASK, "model": "claude-opus-5"}
    assert cassette_client(path, match_on=["messages"]).messages.create(**other_model)
    assert cassette_client(path, match_on=None).messages.create(**other_model)
    with pytest.raises(InputError, match="not the string 'model'"):
        cassette_client(path, match_on="model")


@pytest.mark.parametrize(
    ("match_on", "says"),
    [
        ("model", "match_on takes a sequence of field names, not the string 'model'"),
        (3, "match_on takes a sequence of field names, not int"),
        (["model", 3], "match_on takes field names (strings), not 3"),
    ],
    ids=["string", "int", "int-in-list"],
)
def test_a_match_on_that_is_no_field_names_is_one_input_error(match_on: Any, says: str) -> None:
    for taking in (Replayer, cassette_client, async_cassette_client):
        with pytest.raises(InputError) as raised:
            taking([TEXT_ONLY], match_on=match_on)
        assert str(raised.value) == says


@pytest.mark.parametrize("chunking", [3, None, {"size": 3}], ids=["int", "none", "dict"])
def test_a_chunking_that_is_no_chunking_is_one_input_error(chunking: Any) -> None:
    says = f"chunking takes a Chunking(size=..., seed=...), not {type(chunking).__name__}"
    for taking in (Replayer, cassette_client, async_cassette_client):
        with pytest.raises(InputError) as raised:
            taking([TEXT_ONLY], chunking=chunking)
        assert str(raised.value) == says
    with pytest.raises(InputError, match=re.escape(says)):
        outcome_via_sdk(TEXT_ONLY, chunking=chunking)


@pytest.mark.parametrize("replayer", [3, "cassettes/text_only.jsonl"], ids=["int", "string"])
def test_a_replayer_that_is_no_replayer_is_one_input_error(replayer: Any) -> None:
    says = f"replayer takes a harness.Replayer, not {type(replayer).__name__}"
    for taking in (cassette_client, async_cassette_client):
        with pytest.raises(InputError) as raised:
            taking([TEXT_ONLY], replayer=replayer)
        assert str(raised.value) == says


@pytest.mark.parametrize("size", ["8", 2.0, True], ids=["string", "float", "bool"])
def test_a_chunk_size_that_is_no_whole_number_is_one_value_error(size: Any) -> None:
    with pytest.raises(ValueError) as raised:
        Chunking(size=size)
    assert str(raised.value) == f"chunk size must be a whole number, not {size!r}"


def test_the_async_client_answers_from_the_same_cassettes() -> None:
    client = async_cassette_client([TEXT_ONLY, TWO_TOOLS])

    async def run() -> tuple[str, list[str]]:
        plain = await client.messages.create(**ASK)
        stream = await client.messages.create(**ASK, stream=True)
        return plain.content[0].text, [event.type async for event in stream]

    text, kinds = asyncio.run(run())
    assert text == "The file has three sections."
    assert kinds.count("content_block_start") == 3
    assert len(captured_requests(client)) == 2


def test_chunking_cuts_the_bytes_without_changing_the_answer() -> None:
    for chunking in (Chunking(size=1), Chunking(seed=7)):
        with cassette_client(TWO_TOOLS, chunking=chunking).messages.stream(**ASK) as stream:
            assert stream.get_final_text() == "I'll check the weather and the local time in Lisbon."


def test_a_client_not_made_here_is_named_not_crashed_on() -> None:
    with pytest.raises(InputError, match="Anthropic was not made by a cassette client"):
        captured_requests(anthropic.Anthropic(api_key="x"))
    with pytest.raises(InputError, match="sets api_key itself"):
        cassette_client(TEXT_ONLY, api_key="sk-ant-mine")


# -- recording, offline against the fake API ------------------------------------------------------


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    served = StreamBuilder().text(0, "Recorded", " live").stop().events()
    errors = [
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            {"retry-after-ms": "1", "x-should-retry": "true"},
        )
    ]
    with FakeMessagesAPI(served, errors=errors) as server:
        yield server


def test_recording_keeps_errors_streams_and_messages_and_replays_them(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    session = tmp_path / "session"
    client = recording_client(
        [], session=session, api_key="sk-ant-dummy-recording-key", base_url=api.base_url
    )
    assert isinstance(client, anthropic.Anthropic)
    with client, client.messages.stream(**ASK) as stream:  # a 529 first: the SDK retries it
        live_text = stream.get_final_text()
        live_message = client.messages.create(**ASK)
    assert [p.name for p in sorted(session.iterdir())] == [
        "turn-01.jsonl",
        "turn-02.jsonl",
        "turn-03.jsonl",
    ]
    error, streamed, message = (Cassette(p) for p in sorted(session.iterdir()))
    assert [line.data["status"] for line in error.lines()] == [529]
    assert (message.header or {})["synthesized_from"] == "message"
    assert (streamed.header or {})["request"] == ASK
    for path in session.iterdir():
        assert "sk-ant-dummy-recording-key" not in path.read_text()
        assert "req_011CFakeRequestIdentifier" not in path.read_text()
    replayed = cassette_client(session)
    with replayed.messages.stream(**ASK) as stream:
        assert stream.get_final_text() == live_text == "Recorded live"
    assert replayed.messages.create(**ASK).model_dump() == live_message.model_dump()


def test_recording_more_requests_than_cassettes_named_says_so(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    api.errors.clear()
    client = recording_client(
        [tmp_path / "one.jsonl"], api_key="sk-ant-dummy", base_url=api.base_url
    )
    client.messages.create(**ASK)
    with pytest.raises(Exception, match="the code sent request 2, but the cassette marker names 1"):
        client.messages.create(**ASK)


def test_recording_needs_a_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY is not set"):
        recording_client([tmp_path / "x.jsonl"])
