"""The directive registry: every directive defined once, and every reader accepts each one."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness import (
    AT_DIRECTIVE,
    CassetteError,
    cassette_client,
    collect,
    read_cassette,
    replay_events,
    replay_outcome,
)
from harness._cassette.codec import schema
from harness._directives import AT, DIRECTIVES, READERS, directive_problem
from harness.agent.session import load_session, replay_session, write_session
from harness.builder import StreamBuilder
from harness.faults import CATALOGUE, derive_variants
from harness_cli.main import cli

ROOT = Path(__file__).parent.parent


def test_at_directive_stays_exported_from_the_registry() -> None:
    assert AT_DIRECTIVE == AT == "at"


def test_the_schema_checks_the_fields_the_registry_names() -> None:
    rules = schema()["$defs"]["directive"]["allOf"]
    in_schema = {rule["if"]["properties"]["harness"]["const"]: rule["then"] for rule in rules}
    for name, then in in_schema.items():
        directive = DIRECTIVES[name]
        assert set(then.get("required", [])) == set(directive.required), name
        assert set(then["properties"]) == {*directive.required, *directive.optional}, name


def test_every_directive_is_in_the_cassette_docs_table() -> None:
    doc = (ROOT / "docs" / "cassettes.md").read_text()
    for name in DIRECTIVES:
        assert f'`{{"harness": "{name}"' in doc, name


def test_each_reader_acts_on_or_passes_over_every_directive() -> None:
    for directive in DIRECTIVES.values():
        assert directive.acted_on_by | directive.passed_over_by == set(READERS)
        assert not directive.acted_on_by & directive.passed_over_by


def test_the_fault_catalogue_writes_only_registered_directives() -> None:
    good = read_cassette(ROOT / "cassettes" / "two_tools.jsonl")
    lines = [
        line
        for variant in derive_variants(list(good.events()))
        for r in variant.responses
        for line in r
    ]
    lines += [line for fault in CATALOGUE for before in fault.before for line in before]
    names = {line["harness"] for line in lines if "harness" in line}
    assert names and names <= set(DIRECTIVES)
    assert all(directive_problem(line) is None for line in lines if "harness" in line)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ({"harness": "teleport"}, "unknown directive 'teleport' (known: at, http_error"),
        ({"harness": "at"}, "an at directive needs ms"),
        ({"harness": "at", "ms": -1}, "an at directive needs ms"),
        ({"harness": "stall"}, "directive line does not match the cassette schema"),
    ],
    ids=["unknown", "at-without-ms", "at-negative", "stall-without-ms"],
)
def test_a_bad_directive_is_told_at_its_line(
    tmp_path: Path, line: dict[str, Any], reason: str
) -> None:
    path = tmp_path / "bad.jsonl"
    events = StreamBuilder().text(0, "x").stop().events()
    path.write_text("\n".join(json.dumps(x) for x in [events[0], line, *events[1:]]) + "\n")
    with pytest.raises(CassetteError, match=re.escape(f"bad.jsonl:2: {reason}")):
        read_cassette(path).validate()


def recorded_turn(builder: StreamBuilder, step_ms: int = 10) -> StreamBuilder:
    """The turn as `harness record` writes it: an `at` line before every event."""
    timed = StreamBuilder()
    for number, event in enumerate(builder.events()):
        timed.directive(AT, ms=number * step_ms).raw(event)
    return timed


def every_directive_turn() -> StreamBuilder:
    """A good turn holding every directive no reader fails on (`abort` needs a controller,
    `hang` waits forever, `http_error` and `cut` end the answer: told apart below)."""
    return recorded_turn(StreamBuilder().text(0, "Done.").stop("end_turn")).directive("stall", ms=1)


def test_direct_and_wire_replay_pass_over_what_they_do_not_act_on(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    every_directive_turn().write(path, "every directive")
    assert replay_outcome(path).completed
    client = cassette_client(path, match_on=None)
    message = client.messages.create(
        model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}]
    )
    assert message.content[0].type == "text"


@pytest.fixture
def recorded_session(tmp_path: Path) -> Path:
    """A two-turn session with `at` lines, as `harness record`/`harness proxy` write them."""
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "notes.txt").write_text("notes\n")
    first = StreamBuilder().tool(0, "read", {"path": "notes.txt"}, id="toolu_1").stop("tool_use")
    second = StreamBuilder().text(0, "Read it.").stop("end_turn")
    return write_session(
        tmp_path / "recorded",
        [("turn 1", recorded_turn(first, 10_000)), ("turn 2", recorded_turn(second, 10_000))],
        prompt="read the notes",
    )


def test_the_agent_replays_a_recorded_session_with_at_lines(recorded_session: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["agent", str(recorded_session), "--root", str(recorded_session.parent / "files")],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "stop_reason complete" in result.output
    assert "Read it." in result.output


def requested_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every delay asked of the event loop (`asyncio.sleep`), none of them slept."""
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float, result: Any = None) -> Any:
        asked.append(delay)
        return await real_sleep(0, result)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    return asked


@pytest.mark.parametrize("realtime", [False, True], ids=["plain", "realtime"])
def test_agent_realtime_waits_for_the_recorded_offsets(
    recorded_session: Path, monkeypatch: pytest.MonkeyPatch, realtime: bool
) -> None:
    asked = requested_sleeps(monkeypatch)
    session = load_session(recorded_session)
    result, _ = asyncio.run(
        replay_session(session, recorded_session.parent / "files", realtime=realtime)
    )
    assert result.stop_reason == "complete"
    waits = [delay for delay in asked if delay > 0]
    if not realtime:
        assert waits == []
        return
    # Each turn's events are 10 s apart: the waits asked for are the offsets (10 s, 20 s,
    # ... from the turn's request) less the moment replay itself took, as nothing was slept.
    offsets = [10 * max(round(wait / 10), 1) for wait in waits]
    assert all(offset - 5 < wait <= offset for wait, offset in zip(waits, offsets, strict=True))
    assert offsets[:3] == [10, 20, 30]
    assert offsets.count(10) == len(session.turns)


#: A line of each directive, fields filled in.
EXAMPLES: dict[str, dict[str, Any]] = {
    "at": {"harness": "at", "ms": 0},
    "http_error": {
        "harness": "http_error",
        "status": 529,
        "headers": {"x-should-retry": "false"},
        "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    },
    "cut": {"harness": "cut"},
    "stall": {"harness": "stall", "ms": 1},
    "abort": {"harness": "abort"},
    "hang": {"harness": "hang"},
    "frame": {"harness": "frame", "fault": "prelude_crc"},
}


def test_every_directive_has_an_example() -> None:
    assert set(EXAMPLES) == set(DIRECTIVES)


def with_directive(tmp_path: Path, name: str) -> Path:
    """A good answer with the directive's line first (where an `http_error` must stand)."""
    events = StreamBuilder().text(0, "Done.").stop("end_turn").events()
    path = tmp_path / f"{name}.jsonl"
    lines = [EXAMPLES[name], *events]
    if name == "frame":  # a line of a stream in frames: a Bedrock one
        lines.insert(0, {"cassette": 1, "host": "bedrock"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def outcome_of(path: Path, reader: str) -> list[dict[str, Any]]:
    if reader == "direct":
        return replay_outcome(path).to_json_lines()
    return collect(replay_events(path, via="sdk")).to_json_lines()


@pytest.mark.parametrize("reader", ["direct", "wire"])
@pytest.mark.parametrize("name", sorted(DIRECTIVES))
def test_a_reader_passes_over_what_the_registry_says_and_acts_on_the_rest(
    tmp_path: Path, reader: Any, name: str
) -> None:
    plain = tmp_path / "plain.jsonl"
    StreamBuilder().text(0, "Done.").stop("end_turn").write(plain, "plain")
    same = outcome_of(with_directive(tmp_path, name), reader) == outcome_of(plain, reader)
    if reader in DIRECTIVES[name].passed_over_by:
        assert same, f"{reader} replay should pass over {name}"
    elif name != "stall":  # a 1 ms stall is carried out (or known short) and shows nothing
        assert not same, f"{reader} replay should act on {name}"


@pytest.mark.parametrize("name", sorted(DIRECTIVES))
def test_agent_replay_passes_over_what_the_registry_says(tmp_path: Path, name: str) -> None:
    if "agent" not in DIRECTIVES[name].passed_over_by:
        pytest.skip(f"agent replay acts on {name} (its own tests: test_agent_session.py)")
    folder = tmp_path / "s"
    folder.mkdir()
    with_directive(tmp_path, name).rename(folder / "turn-01.jsonl")
    (folder / "session.json").write_text(json.dumps({"prompt": "p"}))
    result, _ = asyncio.run(replay_session(load_session(folder), tmp_path))
    assert result.stop_reason == "complete"
