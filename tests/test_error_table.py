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
from harness._exceptions import error_pattern


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
    pattern = re.compile(error_pattern(code))
    for path, message in reached.get(code, []):
        assert message.startswith(PROTOCOL_ERROR_PREFIX), f"{path}: {message!r}"
        assert pattern.fullmatch(message), f"{path}: {message!r}"


@pytest.mark.parametrize("code", sorted(ERROR_TABLE))
def test_each_pattern_recognises_its_own_messages_alone(
    code: str, reached: dict[str, list[tuple[str, str]]]
) -> None:
    """What `harness conform` relies on: a message, prefixed or not, maps to one code."""
    for _, message in reached.get(code, []):
        for shown in (message, message.removeprefix(PROTOCOL_ERROR_PREFIX)):
            matching = [other for other in ERROR_TABLE if re.match(error_pattern(other), shown)]
            assert matching == [code], shown


def test_every_row_has_a_cassette_named_after_its_code() -> None:
    named = {path.stem for path in (LIBRARY / "errors").glob("*.jsonl")}
    assert set(ERROR_TABLE) <= named
