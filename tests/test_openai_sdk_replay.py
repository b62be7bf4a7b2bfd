"""OpenAI cassettes through the real `openai` SDK: `--via sdk`, the cassette clients, the trace.

Every cassette of cassettes/openai/ goes through the SDK's four readers (the iteration of
`create(stream=True)` and the helper `.stream()`, sync and async), its bytes cut at random
offsets, and comes out as direct replay's outcome, event for event; where the SDK itself
decides first (it never reads past `[DONE]`, its Responses helper raises on a broken
stream) the test says what it does, as docs/replay.md does.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import zlib
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner
from conftest import ROOT

from harness import (
    Chunking,
    InputError,
    async_cassette_client,
    captured_requests,
    cassette_client,
    replay_errors,
    replay_events,
    replay_outcome,
)
from harness._cassette.codec import Cassette, expand_paths, write_cassette
from harness._events import DoneEvent, TextEvent
from harness._replay.direct import Outcome, acollect, collect, failure_code
from harness._replay.sdk import areplay_events
from harness._testing.trace import format_rows, trace
from harness_cli.main import cli

LIBRARY = ROOT / "cassettes/openai"
CASSETTES = [Path(path) for path in expand_paths([str(LIBRARY)])]
IDS = [path.relative_to(LIBRARY).as_posix() for path in CASSETTES]
CHAT_TEXT = LIBRARY / "chat" / "text.jsonl"
CHAT_TOOL = LIBRARY / "chat" / "one_tool.jsonl"
RESPONSES_TEXT = LIBRARY / "responses" / "text.jsonl"
RESPONSES_TOOL = LIBRARY / "responses" / "one_tool.jsonl"
ANSWER = [TextEvent("Paris is "), TextEvent("the capital "), TextEvent("of France."), DoneEvent()]

#: What the SDK does first, where it decides before the adapter (docs/replay.md):
#: Chat's iteration stops at `data: [DONE]`, so a chunk after it is never read and a
#: missing one is not missed; the Responses helper raises `RuntimeError` on these: its
#: refusal of the stream, the outcome's `connection_error:RuntimeError`.
SDK_TAKES = {"chat/errors/chunk_after_done.jsonl", "chat/errors/missing_done.jsonl"}
HELPER_RAISES = {
    "responses/errors/duplicate_output_item.jsonl": "Duplicate response output index 0",
    "responses/errors/inconsistent_response.jsonl": "Lifecycle response identity changed",
    "responses/errors/missing_response_created.jsonl": "Expected to have received",
    "responses/errors/orphan_delta.jsonl": "before receiving its output item",
    "responses/errors/unfinished_output_items.jsonl": "unfinished output items",
}


def _code(outcome: Outcome) -> str | None:
    return "done" if outcome.error is None else failure_code(outcome.error)


def _sdk_outcome(path: Path, reader: str, asynchronous: bool) -> Outcome:
    chunking = Chunking(seed=zlib.crc32(str(path).encode()))  # random cuts, fixed per file
    if asynchronous:
        events = areplay_events(path, via="sdk", chunking=chunking, reader=reader)
        return asyncio.run(acollect(events))
    return collect(replay_events(path, via="sdk", chunking=chunking, reader=reader))


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("reader", ["create", "stream"])
@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_each_cassette_through_each_reader_comes_out_as_direct_replay(
    path: Path, reader: str, asynchronous: bool
) -> None:
    name = path.relative_to(LIBRARY).as_posix()
    direct = replay_outcome(path)
    if reader == "stream" and name in HELPER_RAISES:
        refused = _sdk_outcome(path, reader, asynchronous)
        assert isinstance(refused.error, RuntimeError)
        assert _code(refused) == "connection_error:RuntimeError"
        assert re.search(HELPER_RAISES[name], str(refused.error))
        return
    outcome = _sdk_outcome(path, reader, asynchronous)
    if name in SDK_TAKES:
        assert _code(direct) != "done"
        assert _code(outcome) == "done"
        return
    assert outcome.to_json_lines() == direct.to_json_lines()  # events, code and message


@pytest.mark.parametrize("source", [CHAT_TEXT, CHAT_TOOL], ids=["text", "one_tool"])
def test_a_chat_stream_cut_before_its_finish_comes_to_missing_finish_reason_through_the_sdk(
    tmp_path: Path, source: Path
) -> None:
    # docs/replay.md: the SDK's iteration ends alike without `[DONE]`, so the adapter
    # reaches the next rule; directly, the catalogue's `missing_done`.
    runner = CliRunner()
    made = runner.invoke(cli, ["faults", str(source), "--out", str(tmp_path)])
    assert made.exit_code == 0, made.output
    cut = tmp_path / f"{source.stem}.cut_connection.jsonl"
    assert _code(replay_outcome(cut)) == "missing_done"
    result = runner.invoke(cli, ["replay", "--via", "sdk", "--format", "json", str(cut)])
    assert result.exit_code == 1
    assert json.loads(result.stdout.splitlines()[-1])["code"] == "missing_finish_reason"


def _with(tmp_path: Path, source: Path, *before: dict[str, Any], after: int = 0) -> Path:
    """`source` with the directive lines `before` put ahead of its event line `after`."""
    cassette = Cassette(source)
    lines = [line.data for line in cassette.lines()]
    path = tmp_path / f"with_{source.parent.name}_{source.name}"
    write_cassette(path, [*lines[:after], *before, *lines[after:]], header=cassette.header)
    return path


@pytest.mark.parametrize("source", [CHAT_TEXT, RESPONSES_TEXT], ids=["chat", "responses"])
@pytest.mark.parametrize(
    ("directive", "code"),
    [
        (
            {
                "harness": "http_error",
                "status": 400,
                "body": {"error": {"type": "bad", "message": "no"}},
            },
            "api_error:bad",
        ),
        ({"harness": "cut"}, "connection_error:RemoteProtocolError"),
        ({"harness": "cut", "after_bytes": 9}, "connection_error:RemoteProtocolError"),
        ({"harness": "stall", "ms": 2_000}, "connection_error:ReadTimeout"),
    ],
    ids=["http_error", "cut", "cut_mid_event", "stall"],
)
def test_the_wire_directives_reach_the_sdk_as_a_live_servers_would(
    tmp_path: Path, source: Path, directive: dict[str, Any], code: str
) -> None:
    path = _with(tmp_path, source, directive, after=0 if "status" in directive else 2)
    outcome = collect(replay_events(path, via="sdk", read_timeout=0.2))
    assert _code(outcome) == code
    assert _code(collect(replay_events(path, read_timeout=0.2))) == code  # the same directly


@pytest.mark.slow
def test_realtime_paces_an_openai_stream_through_the_sdk(tmp_path: Path) -> None:
    path = _with(tmp_path, CHAT_TEXT, {"harness": "at", "ms": 300}, after=2)
    started = time.monotonic()
    events = list(replay_events(path, via="sdk", realtime=True))
    assert events == ANSWER
    assert time.monotonic() - started >= 0.3


def test_a_reader_is_checked_before_anything_is_read() -> None:
    with pytest.raises(InputError, match="reader must be one of create, stream"):
        replay_events(CHAT_TEXT, via="sdk", reader="parse")
    with pytest.raises(InputError, match="reader applies to via='sdk' only"):
        replay_events(CHAT_TEXT, reader="stream")
    anthropic = ROOT / "cassettes" / "text_only.jsonl"
    with pytest.raises(InputError, match="a cassette of Anthropic is replayed through create"):
        replay_events(anthropic, via="sdk", reader="stream")


# The command ------------------------------------------------------------------------------


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout


def test_replay_via_sdk_prints_what_direct_replay_prints_and_exits_alike() -> None:
    for path in (CHAT_TOOL, RESPONSES_TOOL, LIBRARY / "responses/errors/server_error.jsonl"):
        direct = _run("replay", str(path))
        assert _run("replay", "--via", "sdk", "--chunk-size", "3", str(path)) == direct
    assert _run("replay", "--via", "sdk", str(CHAT_TOOL))[0] == 0
    code, out = _run("replay", "--via", "sdk", str(LIBRARY / "chat/errors/server_error.jsonl"))
    assert (code, out.splitlines()[-1]) == (1, "api_error   server_error: The server had an error.")


def test_the_trace_of_a_chat_cassette_names_its_chunks_and_open_calls() -> None:
    assert list(format_rows(trace(CHAT_TOOL))) == [
        "line  open   event                 emits",
        "   2  {}     role assistant",
        "   3  {0}    call(0) get_weather call_01Weather",
        '   4  {0}    args(0) "{\\"city\\":"',
        '   5  {0}    args(0) " \\"Paris\\"}"',
        "   6  {}     finish tool_calls     tool_call get_weather call_01Weather",
        "   7  {}     directive done",
        " end  {}     end of stream         done",
    ]


def test_the_trace_names_an_error_line_beside_choices_an_error() -> None:
    profiles = Path(__file__).parent / "data" / "profiles"
    last = list(trace(profiles / "openrouter" / "in_band_error.jsonl"))[-1]
    assert last.event == "error" and last.error is not None
    assert failure_code(last.error) == "api_error:server_error"


def test_the_trace_of_a_responses_cassette_names_its_events_and_open_items() -> None:
    rows = list(trace(RESPONSES_TOOL))
    assert [(row.event, row.index, row.open) for row in rows[2:5]] == [
        ("response.output_item.added", 0, (0,)),
        ("response.function_call_arguments.delta", 0, (0,)),
        ("response.function_call_arguments.delta", 0, (0,)),
    ]
    assert rows[-1].event == "end"


@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_a_traces_emits_are_the_replays_events_and_it_ends_at_the_same_failure(path: Path) -> None:
    rows = list(trace(path))
    direct = replay_outcome(path)
    assert [event for row in rows for event in row.emits] == direct.events
    last = rows[-1].error
    assert (None if last is None else failure_code(last)) == (
        None if direct.error is None else failure_code(direct.error)
    )


def test_replay_trace_exits_1_at_a_failed_openai_stream() -> None:
    code, out = _run("replay", "--trace", str(LIBRARY / "chat/errors/unfinished_tool_calls.jsonl"))
    assert code == 1
    assert "error unfinished_tool_calls: OpenAI stream protocol error" in out
    code, out = _run("replay", "--trace", "--format", "json", str(RESPONSES_TEXT))
    assert code == 0
    assert json.loads(out.splitlines()[-1])["emits"] == [{"type": "done"}]


# The cassette clients ---------------------------------------------------------------------


def test_an_openai_cassette_gives_an_openai_client_answering_create_streamed_or_not() -> None:
    assert isinstance(cassette_client(CHAT_TOOL), openai.OpenAI)  # the header decides
    client = cassette_client([CHAT_TOOL, CHAT_TOOL], sdk="openai", chunking=Chunking(size=5))
    completion = client.chat.completions.create(model="m", messages=[])
    (choice,) = completion.choices
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls or []
    assert (call.id, call.function.name, call.function.arguments) == (  # type: ignore[union-attr]
        "call_01Weather",
        "get_weather",
        '{"city": "Paris"}',
    )
    with client.chat.completions.stream(model="m", messages=[]) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.tool_calls[0].function.parsed_arguments is None  # type: ignore[index]
    assert [request.path for request in captured_requests(client)] == ["/v1/chat/completions"] * 2


def test_a_chat_completion_carries_the_usage_chunk() -> None:
    completion = cassette_client(CHAT_TEXT, sdk="openai").chat.completions.create(
        model="m", messages=[]
    )
    assert completion.choices[0].message.content == "Paris is the capital of France."
    assert completion.usage is not None and completion.usage.total_tokens == 34


def test_a_responses_answer_not_streamed_is_the_terminal_events_response() -> None:
    client = cassette_client(RESPONSES_TOOL, sdk="openai")
    response = client.responses.create(model="m", input="hi")
    assert response.status == "completed"
    (item,) = response.output
    assert (item.type, item.call_id, item.arguments) == (  # type: ignore[union-attr]
        "function_call",
        "call_01Weather",
        '{"city": "Paris"}',
    )


def test_a_responses_stream_resumes_after_a_sequence_number() -> None:
    client = cassette_client(RESPONSES_TEXT, sdk="openai")
    first = [event.type for event in client.responses.create(model="m", input="hi", stream=True)]
    assert first[0] == "response.created"
    resumed = client.responses.retrieve("resp_HarnessSynthetic", stream=True, starting_after=7)
    assert [event.sequence_number for event in resumed] == [8, 9, 10]
    assert client.responses.retrieve("resp_HarnessSynthetic").status == "completed"
    with pytest.raises(openai.NotFoundError, match="no cassette holds"):
        client.responses.retrieve("resp_Other", stream=True, starting_after=1)


def test_the_async_client_reads_the_same_stream() -> None:
    async def read() -> list[str | None]:
        client = async_cassette_client(CHAT_TEXT, sdk="openai", chunking=Chunking(seed=2, size=4))
        assert isinstance(client, openai.AsyncOpenAI)
        stream = await client.chat.completions.create(model="m", messages=[], stream=True)
        return [chunk.choices[0].delta.content async for chunk in stream if chunk.choices]

    assert asyncio.run(read()) == ["", "Paris is ", "the capital ", "of France.", None]


def test_sessions_are_answered_in_turn_order_through_the_sdks_own_retries(tmp_path: Path) -> None:
    busy = {
        "harness": "http_error",
        "status": 429,
        "headers": {"retry-after-ms": "1"},
        "body": {"error": {"type": "rate_limit_exceeded", "message": "Slow down."}},
    }
    session = tmp_path / "session"
    session.mkdir()
    write_cassette(
        session / "turn-01.jsonl", [busy], header={"cassette": 1, "provider": "openai-chat"}
    )
    (session / "turn-02.jsonl").write_bytes(CHAT_TEXT.read_bytes())
    (session / "turn-03.jsonl").write_bytes(CHAT_TOOL.read_bytes())
    client = cassette_client(session, sdk="openai")
    first = client.chat.completions.create(model="m", messages=[])
    second = client.chat.completions.create(model="m", messages=[])
    assert first.choices[0].message.content == "Paris is the capital of France."
    assert second.choices[0].finish_reason == "tool_calls"
    assert len(captured_requests(client)) == 3
    with pytest.raises(openai.RateLimitError, match="Slow down"):
        cassette_client(session, sdk="openai", max_retries=0).chat.completions.create(
            model="m", messages=[]
        )


def test_a_stall_past_the_clients_timeout_is_its_timeout(tmp_path: Path) -> None:
    path = _with(tmp_path, CHAT_TEXT, {"harness": "stall", "ms": 2_000}, after=2)
    client = cassette_client(path, sdk="openai", timeout=0.2, max_retries=0)
    with pytest.raises(openai.APITimeoutError):
        list(client.chat.completions.create(model="m", messages=[], stream=True))


def test_requests_are_matched_on_the_dialects_own_fields(tmp_path: Path) -> None:
    cassette = Cassette(RESPONSES_TEXT)
    header = {**(cassette.header or {}), "request": {"model": "gpt-4.1-mini", "input": "hi"}}
    path = tmp_path / "recorded.jsonl"
    write_cassette(path, [line.data for line in cassette.lines()], header=header)
    client = cassette_client([path, path], sdk="openai")
    assert client.responses.create(model="gpt-4.1-mini", input="hi").status == "completed"
    with pytest.raises(openai.NotFoundError, match="compared on model, input, instructions, tools"):
        client.responses.create(model="gpt-4.1-mini", input="other")
    (error,) = replay_errors(client)
    assert '-"hi"\n+"other"' in str(error)


def test_a_request_to_the_other_dialects_endpoint_is_a_replay_error() -> None:
    client = cassette_client(RESPONSES_TEXT, sdk="openai", max_retries=0)
    with pytest.raises(openai.NotFoundError, match="answers POST /v1/responses"):
        client.chat.completions.create(model="m", messages=[])


def test_one_client_speaks_one_sdk() -> None:
    with pytest.raises(InputError, match="one client speaks one SDK"):
        cassette_client([CHAT_TEXT, ROOT / "cassettes" / "text_only.jsonl"])
    with pytest.raises(InputError, match="sdk='anthropic', but the cassettes are openai ones"):
        cassette_client(CHAT_TEXT, sdk="anthropic")
    said = "sdk must be 'anthropic' or 'openai' or 'boto3' or 'google.genai', not 'mistral'"
    with pytest.raises(InputError, match=re.escape(said)):
        cassette_client(CHAT_TEXT, sdk="mistral")  # type: ignore[call-overload]
    both = cassette_client([CHAT_TEXT, RESPONSES_TEXT], sdk="openai")  # one OpenAI calls both
    assert both.chat.completions.create(model="m", messages=[]).choices
    assert both.responses.create(model="m", input="hi").status == "completed"


@pytest.mark.slow
def test_the_openai_sdk_is_imported_only_when_a_client_hands_its_objects_out() -> None:
    import subprocess
    import sys

    script = (
        "import sys; from harness import replay_outcome, cassette_client\n"
        "from harness_cli.replay import replay\n"
        f"replay_outcome({str(CHAT_TEXT)!r})\n"
        "print('openai' in sys.modules)\n"
        f"cassette_client({str(CHAT_TEXT)!r})\n"
        "print('openai' in sys.modules, 'anthropic' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout == "False\nTrue False\n"


def test_replay_via_sdk_plays_an_openai_session_through_the_sdks_retries(tmp_path: Path) -> None:
    busy = {
        "harness": "http_error",
        "status": 429,
        "headers": {"retry-after-ms": "1"},
        "body": {"error": {"type": "rate_limit_exceeded", "message": "Slow down."}},
    }
    header = {"cassette": 1, "provider": "openai-chat"}
    write_cassette(tmp_path / "turn-01.jsonl", [busy], header=header)
    (tmp_path / "turn-02.jsonl").write_bytes(CHAT_TEXT.read_bytes())
    code, out = _run("replay", "--via", "sdk", str(tmp_path))
    assert (code, out.splitlines()) == (
        0,
        [
            'text        "Paris is "',
            'text        "the capital "',
            'text        "of France."',
            "done",
        ],
    )


def test_the_outcome_functions_via_sdk_read_the_header_too() -> None:
    from harness import aoutcome_via_sdk, outcome_via_sdk

    for path in (CHAT_TOOL, LIBRARY / "responses/errors/sequence_gap.jsonl"):
        direct = replay_outcome(path).to_json_lines()
        assert outcome_via_sdk(path, Chunking(size=3)).to_json_lines() == direct
        assert asyncio.run(aoutcome_via_sdk(path, Chunking(seed=4))).to_json_lines() == direct


def test_without_the_openai_extra_what_needs_the_sdk_names_the_extra_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `openai` is the `openai` extra's: a None in sys.modules makes its import fail as an
    # environment without it would.
    monkeypatch.setitem(__import__("sys").modules, "openai", None)
    path = str(ROOT / "cassettes/openai/chat/text.jsonl")
    expected = 'openai: the SDK is not installed; pip install "stream-harness[openai]"'
    result = CliRunner().invoke(cli, ["replay", "--via", "sdk", path])
    assert (result.exit_code, result.output) == (2, f"harness replay: {expected}\n")
    with pytest.raises(InputError, match=r"^openai: the SDK is not installed"):
        cassette_client(path)
    # what hands no SDK object on does not need it
    direct = CliRunner().invoke(cli, ["replay", path])
    assert direct.exit_code == 0, direct.output
