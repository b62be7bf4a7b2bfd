"""Session folders: loading and checking them, and replaying them turn by turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import SESSIONS

from harness import CassetteError
from harness.agent.loop import AgentFailed, run_agent
from harness.agent.messages import ToolResultBlock
from harness.agent.session import (
    ReplayError,
    ReplayModelClient,
    SessionError,
    load_session,
    replay_session,
    write_session,
)
from harness.agent.signal import AbortController
from harness.builder import StreamBuilder

EXAMPLE_NAMES = sorted(path.parent.name for path in SESSIONS.glob("*/session.json"))


def answer(text: str = "Done.") -> StreamBuilder:
    return StreamBuilder().text(0, text).stop("end_turn")


def read_call(path: str, call_id: str = "toolu_read") -> StreamBuilder:
    return StreamBuilder().tool(0, "read", {"path": path}, id=call_id).stop("tool_use")


@pytest.fixture
def files(tmp_path: Path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha")
    return folder


def test_at_least_two_example_sessions_ship() -> None:
    assert len(EXAMPLE_NAMES) >= 2


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_session_loads_and_replays_with_all_turns_played(name: str) -> None:
    session = load_session(SESSIONS / name)
    result, client = asyncio.run(replay_session(session, SESSIONS / name / "files"))
    assert result.stop_reason in ("complete", "aborted")
    assert len(client.requests) == result.turns
    if result.stop_reason == "complete":
        assert result.turns == len(session.turns)


def test_load_session_reads_the_config_and_the_turns_in_name_order(tmp_path: Path) -> None:
    turns = [(f"turn {n}", read_call("a.txt")) for n in range(1, 11)] + [("end", answer())]
    folder = write_session(tmp_path / "s", turns, prompt="p", system="sys", max_turns=12)
    session = load_session(folder)
    assert (session.system, session.prompt, session.tools, session.max_turns) == (
        "sys",
        "p",
        ("read",),
        12,
    )
    assert [path.name for path in session.turns][8:] == [
        "turn-09.jsonl",
        "turn-10.jsonl",
        "turn-11.jsonl",
    ]


def test_the_replay_client_records_what_the_loop_sent_back(tmp_path: Path, files: Path) -> None:
    folder = write_session(
        tmp_path / "s", [("read", read_call("a.txt")), ("end", answer())], prompt="p"
    )
    result, client = asyncio.run(replay_session(load_session(folder), files))
    assert result.stop_reason == "complete"
    sent = client.requests[1].messages[-1]
    assert sent.role == "user"
    assert sent.content == (ToolResultBlock("toolu_read", "alpha"),)
    assert [tool.name for tool in client.requests[0].tools] == ["read"]


def test_asking_for_more_turns_than_recorded_fails_clearly(tmp_path: Path, files: Path) -> None:
    folder = write_session(tmp_path / "s", [("read", read_call("a.txt"))], prompt="p", max_turns=3)
    with pytest.raises(AgentFailed) as failed:
        asyncio.run(replay_session(load_session(folder), files))
    assert isinstance(failed.value.error, ReplayError)
    assert str(failed.value.error) == (
        "the loop asked for turn 2, but the session has 1 recorded turn(s)"
    )


def test_turns_left_unplayed_fail_clearly(tmp_path: Path, files: Path) -> None:
    turns = [("answer", answer()), ("never asked", answer()), ("nor this", answer())]
    folder = write_session(tmp_path / "s", turns, prompt="p")
    with pytest.raises(
        ReplayError, match=r"^2 recorded turn\(s\) left unplayed: turn-02\.jsonl, turn-03\.jsonl$"
    ):
        asyncio.run(replay_session(load_session(folder), files))


def test_the_abort_directive_sets_the_signal_at_its_line(tmp_path: Path) -> None:
    turn = StreamBuilder().text_delta(0, "one").directive("abort").text_delta(0, "two").stop()
    folder = write_session(tmp_path / "s", [("abort after one", turn)], prompt="p")
    controller = AbortController()
    client = ReplayModelClient(load_session(folder).turns, controller)

    async def texts_until_abort() -> list[str]:
        from harness.agent.client import ModelRequest

        seen = []
        async for event in client.stream(ModelRequest("", [], [], controller.signal)):
            seen.append((getattr(event, "text", ""), controller.signal.aborted))
        return [f"{text}:{aborted}" for text, aborted in seen]

    assert asyncio.run(texts_until_abort())[:2] == ["one:False", "two:True"]


def test_an_abort_directive_without_a_controller_is_a_replay_error(tmp_path: Path) -> None:
    turn = StreamBuilder().directive("abort").text(0, "x").stop()
    folder = write_session(tmp_path / "s", [("abort", turn)], prompt="p")
    client = ReplayModelClient(load_session(folder).turns)
    with pytest.raises(AgentFailed, match="an abort directive needs a controller"):
        asyncio.run(run_agent(client, prompt="p"))


def test_an_unknown_directive_makes_the_session_unusable(tmp_path: Path) -> None:
    turn = StreamBuilder().directive("teleport").text(0, "x").stop()
    folder = write_session(tmp_path / "s", [("odd directive", turn)], prompt="p")
    with pytest.raises(CassetteError, match=r"turn-01\.jsonl:3: unknown directive 'teleport'"):
        load_session(folder)


def test_every_directive_a_recording_holds_is_accepted(tmp_path: Path) -> None:
    turn = StreamBuilder().directive("at", ms=0).directive("stall", ms=1)
    turn.text(0, "x").stop()
    folder = write_session(tmp_path / "s", [("recorded", turn)], prompt="p")
    result, _ = asyncio.run(replay_session(load_session(folder), tmp_path))
    assert result.stop_reason == "complete"


def write_config(folder: Path, config: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    answer().write(folder / "turn-01.jsonl", "a final answer")
    (folder / "session.json").write_text(config if isinstance(config, str) else json.dumps(config))
    return folder


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "expected a JSON object"),
        ({"system": "s"}, "'prompt' is required"),
        ({"prompt": 3}, "'prompt' must be a string"),
        ({"prompt": "p", "max_turns": True}, "'max_turns' must be an integer"),
        ({"prompt": "p", "max_turns": 0}, "max_turns must be at least 1"),
        ({"prompt": "p", "tools": ["write"]}, "unknown tool 'write' (known: read)"),
        ({"prompt": "p", "tool": ["read"]}, "unknown key 'tool'"),
    ],
    ids=[
        "not-json",
        "not-object",
        "no-prompt",
        "prompt-type",
        "bool-turns",
        "zero-turns",
        "unknown-tool",
        "typo-key",
    ],
)
def test_an_unusable_session_json_names_the_file_and_the_reason(
    tmp_path: Path, config: Any, reason: str
) -> None:
    folder = write_config(tmp_path / "s", config)
    with pytest.raises(SessionError) as error:
        load_session(folder)
    assert str(error.value).startswith(f"{folder / 'session.json'}: ")
    assert reason in str(error.value)


def test_a_missing_session_json_is_unusable(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match=r"session\.json: cannot read"):
        load_session(tmp_path)


def test_a_session_without_turns_is_unusable(tmp_path: Path) -> None:
    folder = write_config(tmp_path / "s", {"prompt": "p"})
    (folder / "turn-01.jsonl").unlink()
    with pytest.raises(SessionError, match=r"no turn-NN\.jsonl cassettes"):
        load_session(folder)


def test_a_gap_in_turn_numbers_is_unusable(tmp_path: Path) -> None:
    folder = write_config(tmp_path / "s", {"prompt": "p"})
    answer().write(folder / "turn-03.jsonl", "turn 2 is missing")
    with pytest.raises(SessionError, match=r"turn-03\.jsonl: expected turn number 2 here"):
        load_session(folder)


def test_a_broken_turn_cassette_is_reported_with_its_line(tmp_path: Path) -> None:
    folder = write_config(tmp_path / "s", {"prompt": "p"})
    with (folder / "turn-01.jsonl").open("a") as handle:
        handle.write("{oops\n")
    with pytest.raises(CassetteError, match=r"turn-01\.jsonl:\d+: not valid JSON"):
        load_session(folder)
