"""The Gemini part of the library (`cassettes/gemini/`) held to its script: each cassette
replays to what its path says, through direct replay and `harness replay`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import GEMINI_LIBRARY, library_cassettes

from harness import Cassette, replay_outcome
from harness._events import ToolCallEvent
from harness._exceptions import ERROR_TABLES
from harness._testing.coverage import DONE, outcome_code
from harness_cli.main import cli

CASSETTES = library_cassettes(provider=None, folder=GEMINI_LIBRARY)
IDS = [path.relative_to(GEMINI_LIBRARY).as_posix() for path in CASSETTES]


def expected_outcome(path: Path) -> str:
    """What a library cassette's path says it replays to: `errors/<code>` or
    `errors/<code>_<variant>` (the longest code of the table the name starts with;
    `server_error`, the API's INTERNAL error), else done."""
    if path.parent.name != "errors":
        return DONE
    if path.stem == "server_error":
        return "api_error:INTERNAL"
    table = ERROR_TABLES["gemini"].templates
    return max((code for code in table if re.fullmatch(rf"{code}(_\w+)?", path.stem)), key=len)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gemini-library")
    subprocess.run([sys.executable, str(GEMINI_LIBRARY / "generate.py"), str(out)], check=True)
    return out


def test_generator_writes_exactly_the_committed_cassettes(generated: Path) -> None:
    """Every file below `cassettes/gemini/` but the script is the script's, byte for byte."""

    def files(folder: Path) -> dict[str, bytes]:
        found = (p for p in folder.rglob("*") if p.is_file() and p.name != "generate.py")
        kept = (p for p in found if "__pycache__" not in p.parts)
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in kept}

    assert files(generated) == files(GEMINI_LIBRARY)


@pytest.mark.parametrize("path", CASSETTES, ids=IDS)
def test_each_cassette_replays_to_the_outcome_its_path_says(path: Path) -> None:
    assert Cassette(path).provider == "gemini"
    assert outcome_code(replay_outcome(path)) == expected_outcome(path)
    result = CliRunner().invoke(cli, ["replay", str(path)])
    assert (result.exit_code, result.stderr) == (0 if expected_outcome(path) == DONE else 1, "")


def test_the_calls_come_out_in_answer_order_with_the_apis_ids_or_their_position() -> None:
    events = replay_outcome(GEMINI_LIBRARY / "parallel_tools.jsonl").events
    calls = [(e.call.id, e.call.name) for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [
        ("c9bjmkfz", "get_weather"),
        ("q2wd8s1x", "get_weather"),
        ("call_2", "get_time"),
    ]
