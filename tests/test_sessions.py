"""Session folders: one naming for every writer, turn order (by number) for every reader."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness import cassette_client, cassettes_from
from harness._cassette.sessions import (
    is_session_folder,
    last_turn,
    turn_files,
    turn_name,
    turn_number,
    turn_path,
    write_turns,
)
from harness._http.server import CassetteServer
from harness.agent.session import load_session, replay_session, write_session
from harness.builder import StreamBuilder

TURNS = 101


def answer(text: str) -> StreamBuilder:
    return StreamBuilder().text(0, text).stop("end_turn")


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """101 turns: the first 100 each read a file, the last one answers."""
    folder = tmp_path_factory.mktemp("long") / "session"
    turns = [
        (
            f"turn {number}",
            StreamBuilder()
            .text(0, f"turn {number}")
            .tool(1, "read", {"path": "notes.txt"}, id=f"toolu_{number:03d}")
            .stop("tool_use"),
        )
        for number in range(1, TURNS)
    ]
    write_session(folder, [*turns, (f"turn {TURNS}", answer(f"turn {TURNS}"))], prompt="go")
    (folder / "files").mkdir()
    (folder / "files" / "notes.txt").write_text("notes\n")
    return folder


def test_every_writer_names_turns_alike_and_the_width_grows_past_99() -> None:
    assert [turn_name(n) for n in (1, 9, 10, 99, 100, 101)] == [
        "turn-01.jsonl",
        "turn-09.jsonl",
        "turn-10.jsonl",
        "turn-99.jsonl",
        "turn-100.jsonl",
        "turn-101.jsonl",
    ]
    assert turn_path("s", 3) == Path("s/turn-03.jsonl")
    with pytest.raises(ValueError, match="numbered from 1"):
        turn_name(0)


def test_turn_files_orders_by_number_not_by_name(long_session: Path) -> None:
    names = [path.name for path in turn_files(long_session)]
    assert len(names) == TURNS
    assert names[9:12] == ["turn-10.jsonl", "turn-11.jsonl", "turn-12.jsonl"]
    assert names[-3:] == ["turn-99.jsonl", "turn-100.jsonl", "turn-101.jsonl"]
    assert sorted(names) != names  # by name, turn-100 would come before turn-11


def test_the_replayer_reads_a_101_turn_folder_in_turn_order(long_session: Path) -> None:
    paths = [Path(cassette.path).name for cassette in cassettes_from([long_session])]
    assert paths == [turn_name(n) for n in range(1, TURNS + 1)]


def test_a_cassette_client_answers_a_101_turn_folder_in_turn_order(long_session: Path) -> None:
    client = cassette_client(long_session, match_on=None)
    texts = []
    for _ in range(TURNS):
        message = client.messages.create(
            model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}]
        )
        block = message.content[0]
        assert block.type == "text"
        texts.append(block.text)
    assert texts == [f"turn {n}" for n in range(1, TURNS + 1)]


def test_the_server_serves_a_101_turn_folder_in_turn_order(long_session: Path) -> None:
    server = CassetteServer([str(long_session)])
    served = [Path(cassette.path).name for cassette in server.cassettes]
    assert served == [turn_name(n) for n in range(1, TURNS + 1)]


def test_the_agent_replays_a_101_turn_session_in_turn_order(long_session: Path) -> None:
    session = load_session(long_session)
    assert [path.name for path in session.turns] == [turn_name(n) for n in range(1, TURNS + 1)]
    result, client = asyncio.run(replay_session(session, long_session / "files"))
    assert result.stop_reason == "complete"
    assert result.turns == TURNS
    assert len(client.requests) == TURNS


def test_fault_variant_breaks_the_last_turn_of_a_101_turn_session(long_session: Path) -> None:
    from harness._testing.fault_runs import faulted_turn

    assert faulted_turn(long_session, None).name == turn_name(TURNS)
    assert faulted_turn(long_session, 11).name == "turn-11.jsonl"


def test_the_fault_catalogue_writes_a_session_through_the_one_naming(tmp_path: Path) -> None:
    lines = answer("x").events()
    written = write_turns(tmp_path / "v", [lines] * TURNS, header={"cassette": 1})
    assert [path.name for path in written] == [turn_name(n) for n in range(1, TURNS + 1)]
    assert turn_files(tmp_path / "v") == written


@pytest.mark.parametrize("width", [1, 2, 4], ids=["turn-1", "turn-01", "turn-0001"])
def test_folders_written_with_another_width_still_read_in_turn_order(
    tmp_path: Path, width: int
) -> None:
    for number in (1, 2, 10, 11):
        answer(f"turn {number}").write(tmp_path / f"turn-{number:0{width}d}.jsonl", "t")
    assert [turn_number(path.name) for path in turn_files(tmp_path)] == [1, 2, 10, 11]
    assert [turn_number(Path(c.path).name) for c in cassettes_from([tmp_path])] == [1, 2, 10, 11]
    assert is_session_folder(tmp_path)
    assert last_turn(tmp_path) == 11


def test_other_names_are_not_turns(tmp_path: Path) -> None:
    assert turn_number("turn-x.jsonl") is None
    assert turn_number("turn-01.json") is None
    assert turn_number("my-turn-01.jsonl") is None
    (tmp_path / "other.jsonl").write_text("")
    assert not is_session_folder(tmp_path)
    assert last_turn(tmp_path / "missing") == 0
