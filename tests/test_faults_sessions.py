"""`harness faults FOLDER --turn N`: a session's variants as session folders, which
`harness replay`, `harness coverage` and `harness agent` read alike (an answer the SDK
retries goes with the turn after it, `harness._replay.calls`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import SESSIONS

from harness import Cassette, expand_paths
from harness._cassette.sessions import turn_files
from harness._testing.coverage import measure_coverage
from harness.faults import CATALOGUE
from harness_cli.main import cli

READ_NOTES = SESSIONS / "read-notes"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def header(path: Path) -> dict[str, Any]:
    line: dict[str, Any] = json.loads(path.read_text().splitlines()[0])
    return line


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every variant of read-notes' first turn, in one folder."""
    out = tmp_path_factory.mktemp("variants")
    result = run("faults", str(READ_NOTES), "--turn", "1", "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def test_each_variant_is_the_session_with_the_turn_broken_and_the_rest_as_recorded(
    variants: Path,
) -> None:
    folders = sorted(variants.iterdir())
    assert [folder.name.split(".", 1)[1] for folder in folders] == sorted(
        fault.name for fault in CATALOGUE
    ), "read-notes' first turn has a tool block: every row applies"
    original = turn_files(READ_NOTES)
    for folder in folders:
        fault = folder.name.split(".", 1)[1]
        assert (folder / "session.json").read_bytes() == (READ_NOTES / "session.json").read_bytes()
        *broken, after = turn_files(folder)
        assert after.read_bytes() == original[1].read_bytes(), "turn 2 as recorded"
        for turn in broken:
            assert header(turn)["fault"] == fault
            assert header(turn)["derived_from"] == str(original[0])
        assert len(broken) == (2 if fault == "http_429_then_ok" else 1)
    session_row = variants / "read-notes.http_429_then_ok"
    assert list(Cassette(turn_files(session_row)[1]).events()) == list(
        Cassette(original[0]).events()
    ), "the 429, then the good turn"


def _replayed_codes(*paths: str) -> dict[str, str]:
    """What `harness replay --format json` ends each of its labels in."""
    result = run("replay", "--format", "json", *paths)
    codes: dict[str, str] = {}
    for line in map(json.loads, result.stdout.splitlines()):
        if line["type"] == "done":
            codes[line["cassette"]] = "done"
        elif line["type"] == "protocol_error":
            codes[line["cassette"]] = line["code"]
        elif line["type"] in ("api_error", "connection_error"):
            codes[line["cassette"]] = f"{line['type']}:{line['error_type']}"
    return codes


def test_replay_and_coverage_file_every_call_of_a_session_folder_alike(
    variants: Path, tmp_path: Path
) -> None:
    """The session variants, a file fault's two-turn session and the library's agent
    sessions: each call under one outcome, the same in both; no 429 is an outcome."""
    good = str(SESSIONS.parent / "interleaved.jsonl")
    assert run("faults", good, "--out", str(tmp_path)).exit_code == 0
    paths = [str(variants), str(tmp_path), str(SESSIONS)]
    replayed = _replayed_codes(*paths)
    report = measure_coverage(expand_paths(paths))
    covered = {path: code for code, files in report.reached.items() for path in files}
    assert covered == replayed
    assert "api_error:rate_limit_error" not in report.reached
    assert replayed[str(variants / "read-notes.http_429_then_ok" / "turn-02.jsonl")] == "done"
    for folder in variants.iterdir():
        first = turn_files(folder)[-2]  # the broken turn (after the 429, for the session row)
        assert replayed[str(first)] == header(first)["expect"]


def test_the_agent_plays_a_session_variant_as_replay_does(variants: Path) -> None:
    root = str(READ_NOTES / "files")
    recovered = run("agent", str(variants / "read-notes.http_429_then_ok"), "--root", root)
    assert recovered.exit_code == 0, recovered.output
    assert recovered.output.splitlines()[-1] == "stop_reason complete (turn 2)"
    broken = run("agent", str(variants / "read-notes.drop_tool_stop"), "--root", root)
    assert broken.exit_code == 1
    assert "unclosed tool_use block(s)" in broken.output


def test_the_last_turn_is_broken_unless_turn_says_otherwise(tmp_path: Path) -> None:
    assert run("faults", str(READ_NOTES), "--out", str(tmp_path)).exit_code == 0
    variant = tmp_path / "read-notes.drop_message_stop"
    first, last = turn_files(variant)
    assert first.read_bytes() == turn_files(READ_NOTES)[0].read_bytes()
    assert header(last)["derived_from"] == str(turn_files(READ_NOTES)[1])


def test_rewriting_a_variant_leaves_no_turn_of_an_earlier_one(tmp_path: Path) -> None:
    stale = tmp_path / "read-notes.stall" / "turn-03.jsonl"
    stale.parent.mkdir()
    shutil.copyfile(turn_files(READ_NOTES)[0], stale)
    assert run("faults", str(READ_NOTES), "--turn", "1", "--out", str(tmp_path)).exit_code == 0
    assert [path.name for path in turn_files(stale.parent)] == ["turn-01.jsonl", "turn-02.jsonl"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--turn", "3"], f"{READ_NOTES}: --turn 3, but the session folder holds 2 turns"),
        (
            ["--turn", "1", "-"],
            "--turn 1: - is not a session folder (turn-NN.jsonl files)",
        ),
        (["--turn", "0"], "Invalid value for '--turn'"),
    ],
    ids=["past-the-last", "a-file", "zero"],
)
def test_a_turn_the_folder_lacks_is_one_line_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    good = [args.pop()] if args[-1] == "-" else [str(READ_NOTES)]
    result = run("faults", *good, *args, "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_folder_without_turns_or_a_turn_that_fails_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("faults", str(empty), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.output == f"{empty}: a folder, but no session: no turn-NN.jsonl in it\n"
    variant = tmp_path / "variants"
    assert run("faults", str(READ_NOTES), "--turn", "1", "--out", str(variant)).exit_code == 0
    failing = variant / "read-notes.drop_tool_stop"
    result = run("faults", str(failing), "--turn", "1", "--out", str(tmp_path / "more"))
    assert result.exit_code == 2
    assert result.output == (
        f"{failing / 'turn-01.jsonl'}: does not complete (it ends in unclosed_tool_blocks); "
        "faults need a good stream\n"
    )
