"""What the real streams showed: a dropped stream and its resume, a body cut mid-event, a
body of `data: [DONE]` alone, a forced call finished with `stop`.

`tests/data/openai-real-shapes/` holds them as vcrpy recorded them (its README says where
each shape was seen). Imported, each must give the cassette that replays as the live call
went, the same directly, through the `openai` SDK, async and in the trace.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import LIBRARY, ROOT

from harness import Cassette, write_cassette
from harness._events import DoneEvent, TextEvent
from harness._replay.direct import Outcome, acollect, areplay, collect, failure_code, replay
from harness._replay.sdk import areplay_events, replay_events
from harness._testing.coverage import outcome_code
from harness._testing.trace import trace
from harness_cli.main import cli

SHAPES = ROOT / "tests" / "data" / "openai-real-shapes"
RECORDING = SHAPES / "dropped_and_forced.yaml"
RESPONSE_ID = "resp_0a1b2c3d4e5f60718293a4b5c6d7e8f9"
CUT = "connection_error:RemoteProtocolError"
#: exchange -> (the code it replays to, the cassette's last line)
EXPECTED: dict[int, tuple[str, dict[str, Any] | None]] = {
    1: (CUT, {"harness": "cut", "after_bytes": 60}),  # the Responses stream that dropped
    2: ("done", None),  # its resume, `starting_after=6`
    3: (CUT, {"harness": "cut", "after_bytes": 75}),  # a Chat body cut mid-`data:` line
    4: ("missing_finish_reason", {"harness": "done"}),  # `data: [DONE]` alone
    5: ("done", {"harness": "done"}),  # `tool_choice: required`, finished with `stop`
}


def _run(*args: str | Path) -> Any:
    result = CliRunner().invoke(cli, [*map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def _code(outcome: Outcome) -> str:
    return outcome_code(outcome)


def _codes(path: Path) -> dict[str, str]:
    """The code of every way a cassette is replayed: directly (sync, async), through the
    SDK's `create(stream=True)` (sync, async), and the trace's last row."""
    rows = list(trace(path))
    return {
        "direct": _code(collect(replay(path))),
        "async": _code(asyncio.run(acollect(areplay(path)))),
        "sdk": _code(collect(replay_events(path, via="sdk"))),
        "async sdk": _code(asyncio.run(acollect(areplay_events(path, via="sdk")))),
        "trace": "done" if rows[-1].error is None else str(failure_code(rows[-1].error)),
    }


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("imported")
    result = _run("import", SHAPES, "--out", out)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "1 file: 5 cassettes written, 0 skipped"
    for path in out.iterdir():
        assert "PLANTED" not in path.read_text(encoding="utf-8"), path
    return out


@pytest.mark.parametrize("number", sorted(EXPECTED))
def test_each_recorded_call_imports_and_replays_as_the_live_one_went(
    imported: Path, number: int
) -> None:
    path = imported / f"dropped_and_forced-{number:02d}.jsonl"
    code, last = EXPECTED[number]
    lines = [line.data for line in Cassette(path).lines()]
    if last is not None:
        assert lines[-1] == last
    assert set(_codes(path).values()) == {code}
    result = _run("validate", path)
    assert result.exit_code == 0, result.output


def test_a_resume_replays_from_its_cursor_and_its_text_joins_the_dropped_ones(
    imported: Path,
) -> None:
    dropped = collect(replay(imported / "dropped_and_forced-01.jsonl"))
    resumed = imported / "dropped_and_forced-02.jsonl"
    header = Cassette(resumed).header or {}
    assert header["provider"] == "openai-responses"
    assert header["request"] == {"response_id": RESPONSE_ID, "starting_after": 6}
    first = next(line.data for line in Cassette(resumed).lines())
    assert first["sequence_number"] == 7  # no response.created: the stream resumes
    events = [*dropped.events, *collect(replay(resumed)).events]
    texts = [event.text for event in events if isinstance(event, TextEvent)]
    assert "".join(texts) == "Otters hold hands while they sleep on the tide."
    assert events[-1] == DoneEvent()


def _rewritten(tmp_path: Path, source: Path, **request: Any) -> Path:
    """`source` with its header's request replaced by `request`."""
    cassette = Cassette(source)
    path = tmp_path / source.name
    header = {**(cassette.header or {}), "request": request}
    write_cassette(path, [line.data for line in cassette.lines()], header=header)
    return path


@pytest.mark.parametrize(
    ("request_fields", "code"),
    [
        ({}, "missing_response_created"),
        ({"response_id": RESPONSE_ID, "starting_after": "six"}, "missing_response_created"),
        ({"response_id": RESPONSE_ID, "starting_after": 5}, "sequence_gap"),
    ],
    ids=["no-cursor", "cursor-not-a-number", "cursor-behind"],
)
def test_the_cursor_is_what_lets_a_stream_start_without_response_created(
    imported: Path, tmp_path: Path, request_fields: dict[str, Any], code: str
) -> None:
    path = _rewritten(tmp_path, imported / "dropped_and_forced-02.jsonl", **request_fields)
    assert set(_codes(path).values()) == {code}


def test_the_responses_helper_cannot_read_a_resumed_stream(imported: Path) -> None:
    """`responses.stream(response_id=..., starting_after=N)` asks for the whole stream
    again and drops the events up to N itself: its accumulator needs `response.created`,
    and refuses the stream (the outcome's `connection_error:RuntimeError`)."""
    path = imported / "dropped_and_forced-02.jsonl"
    with pytest.raises(RuntimeError, match=r"Expected to have received `response\.created`"):
        list(replay_events(path, via="sdk", reader="stream"))
    refused = collect(replay_events(path, via="sdk", reader="stream")).error
    assert isinstance(refused, RuntimeError)
    assert failure_code(refused) == "connection_error:RuntimeError"


def test_a_body_of_done_alone_is_a_cassette_that_fails_not_unusable_input(
    imported: Path, tmp_path: Path
) -> None:
    path = imported / "dropped_and_forced-04.jsonl"
    assert [line.data for line in Cassette(path).lines()] == [{"harness": "done"}]
    written = tmp_path / "done_only.jsonl"  # the same, written by hand
    header = {"cassette": 1, "source": "synthetic", "provider": "openai-chat"}
    written.write_text(json.dumps(header) + '\n{"harness": "done"}\n')
    for cassette in (path, written):
        assert _run("validate", cassette).exit_code == 0
        result = _run("replay", cassette)
        assert result.exit_code == 1
        assert result.stdout.startswith("error       missing_finish_reason: ")
        assert _run("replay", "--via", "sdk", cassette).exit_code == 1
    anthropic = tmp_path / "anthropic.jsonl"  # no other dialect sends it
    anthropic.write_text('{"harness": "done"}\n')
    result = _run("replay", anthropic)
    assert result.exit_code == 2
    assert "a done line is data: [DONE], which only openai-chat sends" in result.stderr


def _body(path: Path) -> tuple[str, bytes]:
    """A library cassette's provider and its SSE body, as its API frames it."""
    from harness._interop.dialects import for_provider

    cassette = Cassette(path)
    dialect = for_provider(cassette.provider)
    lines: list[Any] = [
        dialect.done if line.data.get("harness") == "done" else line.data
        for line in cassette.lines()
    ]
    return cassette.provider, dialect.sse_body(lines)


def _recording(tmp_path: Path, uri: str, body: bytes) -> Path:
    exchange = {
        "request": {"method": "POST", "uri": uri, "body": "{}", "headers": {}},
        "response": {"status": {"code": 200}, "headers": {}, "body": {"string": body.decode()}},
    }
    source = tmp_path / "cut.yaml"
    source.write_text(yaml.safe_dump({"interactions": [exchange], "version": 1}))
    return source


URIS = {
    "anthropic": "https://api.anthropic.com/v1/messages",
    "openai-chat": "https://api.openai.com/v1/chat/completions",
    "openai-responses": "https://api.openai.com/v1/responses",
}


@pytest.mark.parametrize(
    "source",
    [
        LIBRARY / "text_only.jsonl",
        LIBRARY / "openai" / "chat" / "text.jsonl",
        LIBRARY / "openai" / "responses" / "text.jsonl",
    ],
    ids=["anthropic", "chat", "responses"],
)
@pytest.mark.parametrize("line_end", [False, True], ids=["mid-line", "before-blank-line"])
def test_a_body_cut_mid_event_keeps_its_events_and_its_cut(
    tmp_path: Path, source: Path, line_end: bool
) -> None:
    provider, body = _body(source)
    frames = body.split(b"\n\n")
    kept = b"".join(frame + b"\n\n" for frame in frames[:2])
    partial = frames[2] + b"\n" if line_end else frames[2][: len(frames[2]) // 2]
    result = _run("import", _recording(tmp_path, URIS[provider], kept + partial), "--out", tmp_path)
    assert result.exit_code == 0, result.output
    lines = [line.data for line in Cassette(tmp_path / "cut-01.jsonl").lines()]
    original = [line.data for line in Cassette(source).lines()]
    assert lines == [*original[:2], {"harness": "cut", "after_bytes": len(partial)}]
    assert _code(collect(replay(tmp_path / "cut-01.jsonl"))) == CUT


def test_a_body_cut_in_its_first_event_is_skipped_with_the_reason(tmp_path: Path) -> None:
    body = b'data: {"id":"chatcmpl-1","object":"chat.comp'
    result = _run("import", _recording(tmp_path, URIS["openai-chat"], body), "--out", tmp_path)
    assert result.exit_code == 1
    assert "the body ends 44 bytes into its first event, before any event ended" in result.stdout
    assert not list(tmp_path.glob("*.jsonl"))
