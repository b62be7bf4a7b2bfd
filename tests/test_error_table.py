"""Every row of each provider's error table is reached by a cassette of the library, with
the exact message of its row, and has a cassette under its `errors/` named after its code."""

from __future__ import annotations

import re

import pytest
from conftest import ERRORS_FOLDERS, library_cassettes

from harness import StreamProtocolError, replay_outcome
from harness._exceptions import ERROR_TABLES, error_pattern

#: (provider, code) for every row of every table the library covers
ROWS = [
    (provider, code)
    for provider in ERRORS_FOLDERS
    for code in sorted(ERROR_TABLES[provider].templates)
]
IDS = [f"{provider}:{code}" for provider, code in ROWS]


@pytest.fixture(scope="module")
def reached() -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(provider, code) -> (cassette, message) for every cassette of the library (every
    provider's) that ends in that code."""
    found: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for path in library_cassettes(provider=None):
        error = replay_outcome(path).error
        if isinstance(error, StreamProtocolError):
            found.setdefault((error.provider, error.code), []).append((str(path), str(error)))
    return found


@pytest.mark.parametrize(("provider", "code"), ROWS, ids=IDS)
def test_every_error_table_row_is_reached_by_a_cassette(
    provider: str, code: str, reached: dict[tuple[str, str], list[tuple[str, str]]]
) -> None:
    assert (provider, code) in reached, f"no {provider} cassette under cassettes/ ends in {code}"


@pytest.mark.parametrize(("provider", "code"), ROWS, ids=IDS)
def test_every_reached_row_has_its_exact_message(
    provider: str, code: str, reached: dict[tuple[str, str], list[tuple[str, str]]]
) -> None:
    pattern = re.compile(error_pattern(code, provider=provider))
    for path, message in reached.get((provider, code), []):
        assert message.startswith(ERROR_TABLES[provider].prefix), f"{path}: {message!r}"
        assert pattern.fullmatch(message), f"{path}: {message!r}"


@pytest.mark.parametrize(("provider", "code"), ROWS, ids=IDS)
def test_each_pattern_recognises_its_own_messages_alone(
    provider: str, code: str, reached: dict[tuple[str, str], list[tuple[str, str]]]
) -> None:
    """What `harness conform` relies on: a message, prefixed or not, maps to one code of
    its provider's table."""
    table = ERROR_TABLES[provider]
    for _, message in reached.get((provider, code), []):
        for shown in (message, message.removeprefix(table.prefix)):
            matching = [
                other
                for other in table.templates
                if re.match(error_pattern(other, provider=provider), shown)
            ]
            assert matching == [code], shown


@pytest.mark.parametrize("provider", ERRORS_FOLDERS)
def test_every_row_has_a_cassette_named_after_its_code(provider: str) -> None:
    named = {path.stem for path in ERRORS_FOLDERS[provider].glob("*.jsonl")}
    assert set(ERROR_TABLES[provider].templates) <= named
