"""OpenAI cassettes (a header's `provider`) through direct replay, validate and coverage;
the OpenAI part of the library (`cassettes/openai/`) held to its script, and its sessions."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LIBRARY, OPENAI_LIBRARY, library_cassettes

from harness import Cassette, replay_outcome, write_cassette
from harness._cassette.sessions import turn_files
from harness._events import DoneEvent, ModelEvent, TextEvent, ToolCall, ToolCallEvent
from harness._exceptions import ANTHROPIC, ERROR_TABLES
from harness._replay.direct import acollect, areplay
from harness._testing.coverage import DONE, measure_coverages, outcome_code
from harness.builder import StreamBuilder
from harness_cli.main import cli

CASSETTES = library_cassettes(provider=None, folder=OPENAI_LIBRARY)
IDS = [path.relative_to(OPENAI_LIBRARY).as_posix() for path in CASSETTES]
PROVIDERS = {"chat": "openai-chat", "responses": "openai-responses"}
CHAT_TEXT = OPENAI_LIBRARY / "chat" / "text.jsonl"
RESPONSES_TEXT = OPENAI_LIBRARY / "responses" / "text.jsonl"
#: folder -> the session folders of its API
SESSIONS = {
    folder: sorted(path for path in (OPENAI_LIBRARY / folder / "sessions").iterdir())
    for folder in PROVIDERS
}


def expected_outcome(path: Path) -> str:
    """What a library cassette's path says it replays to: `errors/<code>` or
    `errors/<code>_<variant>` (the longest code of its table the name starts with; an API
    error's name for `server_error`), else done."""
    if path.parent.name != "errors":
        return DONE
    if path.stem == "server_error":
        return "api_error:server_error"
    table = ERROR_TABLES[Cassette(path).provider].templates
    return max((code for code in table if re.fullmatch(rf"{code}(_\w+)?", path.stem)), key=len)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("openai-library")
    subprocess.run([sys.executable, str(OPENAI_LIBRARY / "generate.py"), str(out)], check=True)
    return out


def test_generator_writes_exactly_the_committed_cassettes(generated: Path) -> None:
    """Every file below `cassettes/openai/` but the script is the script's, byte for byte."""

    def files(folder: Path) -> dict[str, bytes]:
        found = (p for p in folder.rglob("*") if p.is_file() and p.name != "generate.py")
        kept = (p for p in found if "__pycache__" not in p.parts)
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in kept}

    assert files(generated) == files(OPENAI_LIBRARY)


def test_the_library_holds_every_kind_of_answer_for_each_api() -> None:
    """Issue 29's list, for each API: each good kind of answer, a refusal (filed under
    errors/: the strict default fails on it), a multi-turn session; and the shapes real
    streams showed that the default reads (issue 36)."""
    kinds = {"text", "one_tool", "parallel_tools", "zero_argument_tool", "reasoning"}
    shown = {"chat": {"empty_name_on_later_pieces"}, "responses": {"one_piece_call", "unnumbered"}}
    for folder in PROVIDERS:
        root = OPENAI_LIBRARY / folder
        good = {path.stem for path in root.glob("*.jsonl")}
        assert good == kinds | shown[folder]
        assert (root / "errors" / "refusal.jsonl").is_file()
        assert SESSIONS[folder]


@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_each_cassette_replays_to_the_outcome_its_path_says(path: Path) -> None:
    cassette = Cassette(path)
    assert cassette.provider == PROVIDERS[path.relative_to(OPENAI_LIBRARY).parts[0]]
    assert outcome_code(replay_outcome(cassette)) == expected_outcome(path)
    status, _, stderr = run("replay", str(path))
    assert (status, stderr) == (0 if expected_outcome(path) == DONE else 1, "")


@pytest.mark.parametrize("folder", ["chat", "responses"])
def test_each_dialect_yields_the_same_three_events(folder: str) -> None:
    def events(name: str) -> list[ModelEvent]:
        return replay_outcome(OPENAI_LIBRARY / folder / f"{name}.jsonl").events

    assert events("text") == [
        TextEvent("Paris is "),
        TextEvent("the capital "),
        TextEvent("of France."),
        DoneEvent(),
    ]
    weather = ToolCall("call_01Weather", "get_weather", {"city": "Paris"})
    assert events("one_tool") == [ToolCallEvent(weather), DoneEvent()]
    paris = ToolCall("call_01Paris", "get_weather", {"city": "Paris"})
    rome = ToolCall("call_02Rome", "get_weather", {"city": "Rome"})
    assert events("parallel_tools") == [ToolCallEvent(paris), ToolCallEvent(rome), DoneEvent()]
    time = ToolCall("call_01Time", "get_time", {})
    assert events("zero_argument_tool") == [ToolCallEvent(time), DoneEvent()]
    assert events("reasoning") == [TextEvent("Paris."), DoneEvent()]


def _calls(path: Path) -> list[ToolCall]:
    return [event.call for event in replay_outcome(path).events if isinstance(event, ToolCallEvent)]


def _answered(folder: str, calls: list[ToolCall], conversation: list[Any]) -> None:
    """`conversation` is `calls` sent back in the API's request shape, then a result each:
    Chat, one assistant message with `tool_calls` and a `role: tool` message a call;
    Responses, a `function_call` item a call and a `function_call_output` item each."""
    if folder == "chat":
        assistant, *results = conversation
        assert assistant["role"] == "assistant"
        sent = [
            ToolCall(
                call["id"], call["function"]["name"], json.loads(call["function"]["arguments"])
            )
            for call in assistant["tool_calls"]
        ]
        assert [(item["role"], item["tool_call_id"]) for item in results] == [
            ("tool", call.id) for call in calls
        ]
    else:
        items, results = conversation[: len(calls)], conversation[len(calls) :]
        assert [item["type"] for item in items] == ["function_call"] * len(calls)
        sent = [
            ToolCall(item["call_id"], item["name"], json.loads(item["arguments"])) for item in items
        ]
        assert [(item["type"], item["call_id"]) for item in results] == [
            ("function_call_output", call.id) for call in calls
        ]
    assert sent == calls
    assert all(isinstance(item.get("content", item.get("output")), str) for item in results)


@pytest.mark.parametrize("folder", PROVIDERS)
def test_each_session_replays_turn_by_turn_to_done(folder: str) -> None:
    """Every turn of each session, directly and in turn order, ends in done: tool calls
    until the last turn, whose answer is text alone."""
    for session in SESSIONS[folder]:
        turns = turn_files(session)
        assert len(turns) >= 2, session
        for number, turn in enumerate(turns, start=1):
            outcome = replay_outcome(turn)
            assert outcome.completed, turn
            assert outcome.events[-1] == DoneEvent()
            assert bool(_calls(turn)) == (number < len(turns)), turn
            assert asyncio.run(acollect(areplay(turn))).to_json_lines() == outcome.to_json_lines()
        assert any(isinstance(event, TextEvent) for event in replay_outcome(turns[-1]).events)


@pytest.mark.parametrize("folder", PROVIDERS)
def test_each_turns_request_carries_the_conversation_so_far(folder: str) -> None:
    """Turn 1's request is the user's question; each later turn's is the one before, then
    the calls that turn's response made (as replay yields them) and their results."""
    key = "messages" if folder == "chat" else "input"
    for session in SESSIONS[folder]:
        turns = turn_files(session)
        before: list[Any] = []
        calls: list[ToolCall] = []
        for turn in turns:
            header = Cassette(turn).header or {}
            conversation = header["request"][key]
            if not before:
                assert [item["role"] for item in conversation] == ["user"]
            else:
                assert conversation[: len(before)] == before, turn
                _answered(folder, calls, conversation[len(before) :])
            assert header["request"]["tools"], turn
            before, calls = conversation, _calls(turn)


def test_replay_json_prints_the_events_then_the_api_error_line() -> None:
    status, out, _ = run(
        "replay", "--format", "json", str(OPENAI_LIBRARY / "chat/errors/server_error.jsonl")
    )
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 1
    assert lines == [
        {"type": "text", "text": "Paris "},
        {"type": "api_error", "error_type": "server_error", "message": "The server had an error."},
    ]


def test_the_async_driver_replays_an_openai_cassette_alike() -> None:
    for path in (CHAT_TEXT, RESPONSES_TEXT, OPENAI_LIBRARY / "responses/errors/sequence_gap.jsonl"):
        outcome = asyncio.run(acollect(areplay(path)))
        assert outcome.to_json_lines() == replay_outcome(path).to_json_lines()


def test_a_cassette_without_provider_reads_as_anthropic(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    StreamBuilder().text(0, "Hi").stop("end_turn").write(path, "plain")
    assert Cassette(path).provider == ANTHROPIC
    assert replay_outcome(path).events == [TextEvent("Hi"), DoneEvent()]


def _write(path: Path, provider: str | None, *lines: dict[str, Any]) -> str:
    header: dict[str, object] = {"cassette": 1}
    if provider is not None:
        header["provider"] = provider
    write_cassette(path, lines, header=header)
    return str(path)


CHUNK: dict[str, Any] = {
    "id": "c",
    "object": "chat.completion.chunk",
    "choices": [{"index": 0, "delta": {}}],
}
CREATED: dict[str, Any] = {
    "type": "response.created",
    "sequence_number": 0,
    "response": {"id": "r"},
}
START = StreamBuilder().stop("end_turn").events()[0]


@pytest.mark.parametrize(
    ("provider", "bad"),
    [
        ("openai-chat", {"type": "message_start", "message": {}}),
        ("openai-chat", {"id": "c", "choices": "none"}),
        ("openai-chat", {"id": "c"}),
        ("openai-responses", {"type": "message_stop"}),
        ("openai-responses", {"type": 7, "sequence_number": 1}),
        ("openai-responses", {"sequence_number": 1}),
        (None, {"type": "response.created", "response": {}}),
    ],
    ids=lambda value: value if isinstance(value, str | None) else json.dumps(value),
)
def test_validate_refuses_a_bad_line_of_each_provider_at_its_line(
    tmp_path: Path, provider: str | None, bad: dict[str, object]
) -> None:
    good = {None: START, "openai-chat": CHUNK, "openai-responses": CREATED}[provider]
    path = _write(tmp_path / "bad.jsonl", provider, good, bad)
    status, out, stderr = run("validate", path)
    assert status == 2
    assert out == ""
    assert stderr.startswith(f"{path}:3: event line does not match the cassette schema")
    assert len(stderr.splitlines()) == 1


@pytest.mark.parametrize("provider", [None, "anthropic", "openai-responses"])
def test_a_done_line_belongs_to_chat_cassettes_only(tmp_path: Path, provider: str | None) -> None:
    good = (
        CREATED if provider == "openai-responses" else StreamBuilder().stop("end_turn").events()[0]
    )
    path = _write(tmp_path / "done.jsonl", provider, good, {"harness": "done"})
    status, _, stderr = run("validate", path)
    assert (status, stderr) == (
        2,
        f"{path}:3: a done line is data: [DONE], which only openai-chat sends\n",
    )


def test_an_unknown_provider_is_refused_at_the_header(tmp_path: Path) -> None:
    path = _write(tmp_path / "mistral.jsonl", "mistral", CHUNK)
    status, _, stderr = run("replay", path)
    assert status == 2
    assert stderr.startswith(f"{path}:1: header line does not match the cassette schema")


def test_validate_counts_each_providers_events() -> None:
    status, out, _ = run("validate", str(CHAT_TEXT), str(RESPONSES_TEXT))
    assert status == 0
    assert out.splitlines() == [f"{CHAT_TEXT}: ok, 6 events", f"{RESPONSES_TEXT}: ok, 11 events"]


def test_coverage_reports_each_provider_against_its_own_table() -> None:
    anthropic = str(LIBRARY / "text_only.jsonl")
    reports = measure_coverages([anthropic, str(RESPONSES_TEXT), str(CHAT_TEXT)])
    assert [report.provider for report in reports] == [
        "anthropic",
        "openai-chat",
        "openai-responses",
    ]
    assert [report.reached for report in reports] == [
        {DONE: [anthropic]},
        {DONE: [str(CHAT_TEXT)]},
        {DONE: [str(RESPONSES_TEXT)]},
    ]
    assert reports[1].missing == list(ERROR_TABLES["openai-chat"].templates)


@pytest.mark.parametrize(("folder", "provider"), PROVIDERS.items())
def test_coverage_of_each_library_folder_reaches_every_code(folder: str, provider: str) -> None:
    status, out, stderr = run("coverage", str(OPENAI_LIBRARY / folder))
    codes = len(ERROR_TABLES[provider].templates)
    assert (status, stderr) == (0, "")
    assert out.splitlines()[-1] == f"{codes} of {codes} {provider} error codes reached"


def test_coverage_of_the_whole_library_reaches_every_code_of_every_provider() -> None:
    """What `make test` runs: `harness coverage cassettes/`, a table per provider."""
    status, out, stderr = run("coverage", str(LIBRARY))
    assert (status, stderr) == (0, "")
    assert [line for line in out.splitlines() if line.endswith(" error codes reached")] == [
        "12 of 12 error codes reached",
        "17 of 17 openai-chat error codes reached",
        "16 of 16 openai-responses error codes reached",
        "13 of 13 bedrock-converse error codes reached",
        "11 of 11 gemini error codes reached",
    ]


def test_serve_of_the_library_answers_from_every_providers_cassettes() -> None:
    """A folder served holds every provider's cassettes, nothing left out."""
    from harness._http.server import CassetteServer

    server = CassetteServer([str(LIBRARY)], match_on=None)
    assert len(server.cassettes) == len(library_cassettes(None))
    assert {cassette.provider for cassette in server.cassettes} == {
        ANTHROPIC,
        *PROVIDERS.values(),
        "bedrock-converse",  # cassettes/bedrock/, its own library
        "gemini",
    }
    assert server.left_out == []


def test_coverage_of_mixed_providers_prints_a_table_each_and_fails_on_a_gap() -> None:
    anthropic = str(LIBRARY / "errors")
    status, out, _ = run("coverage", anthropic, str(CHAT_TEXT))
    lines = out.splitlines()
    assert status == 1
    assert lines.count("") == 1
    assert lines[lines.index("") - 1] == "12 of 12 error codes reached"
    assert lines[-1].startswith("0 of 17 openai-chat error codes reached; not reached: ")


def test_the_fast_check_never_contradicts_the_validator_on_the_library() -> None:
    from harness._cassette.codec import EVENT_SCHEMAS, _fast_checks, _validators

    for path in CASSETTES:
        cassette = Cassette(path)
        definition = EVENT_SCHEMAS[cassette.provider]
        for line in cassette.lines():
            if line.kind == "event":
                assert _fast_checks()[definition](line.data) is not False
                assert _validators()[definition].is_valid(line.data)
    for definition, bad in [
        ("openai-chat-event", {"choices": [1]}),
        ("openai-responses-event", {"type": "x"}),
    ]:
        assert _fast_checks()[definition](bad) is not True
        assert not _validators()[definition].is_valid(bad)


def test_the_schema_names_the_providers_that_register_their_tables() -> None:
    from harness._cassette.codec import EVENT_SCHEMAS
    from harness._providers.gemini.errors import PROVIDER as GEMINI
    from harness._providers.openai_chat.errors import PROVIDER as CHAT
    from harness._providers.openai_responses.errors import PROVIDER as RESPONSES

    assert (
        set(EVENT_SCHEMAS) - {"bedrock-converse", GEMINI}
        == {ANTHROPIC, CHAT, RESPONSES}
        == set(PROVIDERS.values()) | {ANTHROPIC}
    )
    assert set(EVENT_SCHEMAS) <= set(ERROR_TABLES)


@pytest.mark.parametrize(
    ("directive", "failure"),
    [
        (
            {
                "harness": "http_error",
                "status": 429,
                "body": {"error": {"type": "rate_limit_exceeded", "message": "Slow down."}},
            },
            {"type": "api_error", "error_type": "rate_limit_exceeded", "message": "Slow down."},
        ),
        ({"harness": "cut"}, {"type": "connection_error", "error_type": "RemoteProtocolError"}),
        (
            {"harness": "stall", "ms": 601_000},
            {"type": "connection_error", "error_type": "ReadTimeout"},
        ),
    ],
    ids=["http_error", "cut", "stall"],
)
@pytest.mark.parametrize("folder", ["chat", "responses"])
def test_the_direct_readers_directives_act_in_an_openai_cassette(
    tmp_path: Path, folder: str, directive: dict[str, Any], failure: dict[str, str]
) -> None:
    source = Cassette(OPENAI_LIBRARY / folder / "text.jsonl")
    lines = [line.data for line in source.lines()]
    path = tmp_path / "with.jsonl"
    write_cassette(path, [directive, *lines], header=source.header)
    (line,) = replay_outcome(path).to_json_lines()
    assert {key: line[key] for key in failure} == failure


@pytest.mark.slow
def test_direct_replay_of_openai_cassettes_imports_no_sdk() -> None:
    script = (
        "import sys; from harness import replay_outcome\n"
        f"for path in {[str(path) for path in CASSETTES]!r}: replay_outcome(path)\n"
        "print(sorted({'anthropic', 'openai'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout == "[]\n"


def test_direct_replay_reads_a_forced_call_from_the_headers_request(tmp_path: Path) -> None:
    # `stop` with calls is refused, unless the request forced a call: OpenAI answers a
    # named or `required` `tool_choice` that way, and the header keeps the request.
    library = OPENAI_LIBRARY / "chat" / "errors" / "stop_with_tool_calls.jsonl"
    header, *lines = library.read_text(encoding="utf-8").splitlines()
    assert replay_outcome(library).error.code == "stop_with_tool_calls"  # type: ignore[union-attr]
    data = json.loads(header)
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        data["request"] = {**data.get("request", {}), "tool_choice": choice}
        forced = tmp_path / "forced.jsonl"
        forced.write_text("\n".join([json.dumps(data), *lines]) + "\n", encoding="utf-8")
        outcome = replay_outcome(forced)
        assert outcome.error is None, outcome.error
        assert [event.type for event in outcome.events][-1] == "done"
