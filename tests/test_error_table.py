"""Every row of the error table is reached by a cassette, with the exact message of its row."""

from __future__ import annotations

import re

import pytest
from conftest import LIBRARY

from harness import (
    ERROR_TABLE,
    PROTOCOL_ERROR_PREFIX,
    StreamProtocolError,
    expand_paths,
    replay_outcome,
)

#: What each placeholder of the table stands for: indexes, a count, a stop reason, an event type.
PLACEHOLDERS = {
    "index": r"\d+",
    "indexes": r"\d+(, \d+)*",
    "count": r"[1-9]\d*",
    "stop_reason": r"[a-z_]+",
    "event_type": r"[a-z_]+",
}


def message_pattern(code: str) -> re.Pattern[str]:
    """The full message of a row, its placeholders turned into what they may hold."""
    pattern = re.escape(PROTOCOL_ERROR_PREFIX)
    for n, part in enumerate(re.split(r"\{(\w+)\}", ERROR_TABLE[code])):
        pattern += PLACEHOLDERS[part] if n % 2 else re.escape(part)
    return re.compile(pattern)


@pytest.fixture(scope="module")
def reached() -> dict[str, list[tuple[str, str]]]:
    """code -> (cassette, message) for every cassette of the library that ends in that code."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in expand_paths([str(LIBRARY)]):
        error = replay_outcome(path).error
        if isinstance(error, StreamProtocolError):
            found.setdefault(error.code, []).append((path, str(error)))
    return found


@pytest.mark.parametrize("code", sorted(ERROR_TABLE))
def test_every_error_table_row_is_reached_by_a_cassette(
    code: str, reached: dict[str, list[tuple[str, str]]]
) -> None:
    assert code in reached, f"no cassette under cassettes/ ends in {code}"


@pytest.mark.parametrize("code", sorted(ERROR_TABLE))
def test_every_reached_row_has_its_exact_message(
    code: str, reached: dict[str, list[tuple[str, str]]]
) -> None:
    pattern = message_pattern(code)
    for path, message in reached.get(code, []):
        assert pattern.fullmatch(message), f"{path}: {message!r}"


def test_every_row_has_a_cassette_named_after_its_code() -> None:
    named = {path.stem for path in (LIBRARY / "errors").glob("*.jsonl")}
    assert set(ERROR_TABLE) <= named
