"""The frameworks people use, served every broken row of two cassettes, without and with
`harness.strict`: the table of docs/strict.md is this test's output, compared with the
installed releases row by row, or written with `HARNESS_WRITE_TABLES=1` (`make tables`;
tests/doc_tables.py). And no false positive: every good library cassette and every
imported recording reads the same, strict or not, in every framework."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY, ROOT
from doc_tables import Block, check, require, version_line
from frameworks import FRAMEWORKS, SOME_MISSING, framework_params

from harness import import_recording, replay_outcome, to_model_events
from harness._exceptions import CassetteImportError
from harness._testing.fault_runs import FaultCase, run_fault
from harness.faults import CATALOGUE, DONE

pytestmark = pytest.mark.slow

ROW_SOURCES = ("text_only", "two_tools")
#: An answer for any follow-up turn (a tool runner asks again once its tools have run).
FOLLOW_UP = LIBRARY / "text_only.jsonl"
DOC = ROOT / "docs" / "strict.md"
#: The releases the table depends on: the SDK, and each framework's distribution.
RELEASES = ("anthropic", "pydantic-ai-slim", "langchain-anthropic", "litellm")
RECORDINGS = ROOT / "tests" / "data" / "recordings"


@pytest.fixture(scope="module", autouse=True)
def quiet_frameworks() -> Iterator[None]:
    """The frameworks' own warnings (deprecations inside litellm, pydantic) are theirs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[FaultCase]:
    """Every catalogue row that applies to the two cassettes, as the plugin serves it."""
    found = []
    for source in ROW_SOURCES:
        folder = tmp_path_factory.mktemp(source)
        for fault in CATALOGUE:
            case = run_fault(to_model_events, LIBRARY / f"{source}.jsonl", fault, folder)
            if case is not None:
                found.append(case)
    return found


def _returned(framework: str, served: list[Path], options: dict[str, Any], strict: bool) -> bool:
    try:
        FRAMEWORKS[framework](served, options, strict)
    except Exception:
        return False
    return True


def _table(rows: list[FaultCase]) -> tuple[str, dict[str, list[str]]]:
    """The Markdown table, and per framework the rows strict still let through."""
    broken = [case for case in rows if case.expected_code != DONE]
    lines = [
        f"| framework | broken rows accepted silently (of {len(broken)}) | with `harness.strict` |",
        "|---|---|---|",
    ]
    let_through: dict[str, list[str]] = {}
    for framework in FRAMEWORKS:
        counts = []
        for strict in (False, True):
            accepted = [
                f"{case.path.parent.name}/{case.fault.name}"
                for case in broken
                if _returned(framework, [*case.served, FOLLOW_UP], case.client_options, strict)
            ]
            counts.append(len(accepted))
            if strict:
                let_through[framework] = accepted
        lines.append(f"| {framework} | {counts[0]} | {counts[1]} |")
    return "\n".join(lines) + "\n", let_through


def test_strict_lets_no_broken_row_through_any_framework_and_the_doc_table_shows_it(
    rows: list[FaultCase],
) -> None:
    require(SOME_MISSING and f"the table needs every framework: {SOME_MISSING}")
    table, let_through = _table(rows)
    assert let_through == {framework: [] for framework in FRAMEWORKS}
    check(DOC, Block("frameworks-table", version_line(RELEASES), table))


@pytest.mark.parametrize("framework", framework_params())
def test_a_row_the_sdk_recovers_from_ends_under_strict_as_without(
    rows: list[FaultCase], framework: str
) -> None:
    recovering = [case for case in rows if case.expected_code == DONE]
    assert recovering
    for case in recovering:
        served = [*case.served, FOLLOW_UP]
        plain = _returned(framework, served, case.client_options, False)
        assert _returned(framework, served, case.client_options, True) == plain, case.fault.name
        assert plain == (framework != "litellm"), "litellm alone does not retry a 429 by default"


def _good_cassettes(folder: Path) -> list[Path]:
    """The library's good cassettes and every imported recording's cassettes."""
    good = [path for path in sorted(LIBRARY.glob("*.jsonl")) if replay_outcome(path).error is None]
    for recording in sorted(RECORDINGS.iterdir()):
        if recording.suffix in {".md"}:
            continue
        try:
            import_recording(str(recording), str(folder / recording.name))
        except CassetteImportError:
            continue
    imported = sorted(folder.rglob("*.jsonl"))
    assert imported, "no recording imported"
    return good + [path for path in imported if replay_outcome(path).error is None]


@pytest.mark.parametrize("framework", framework_params())
def test_no_false_positive_on_good_cassettes_and_imported_recordings(
    framework: str, tmp_path: Path
) -> None:
    for path in _good_cassettes(tmp_path):
        served = [path, FOLLOW_UP, FOLLOW_UP]
        try:
            plain: Any = FRAMEWORKS[framework](served, {}, False)
        except Exception as error:  # the framework's own limits (an index gap): strict agrees
            plain = type(error)
            with pytest.raises(plain):
                FRAMEWORKS[framework](served, {}, True)
            continue
        assert FRAMEWORKS[framework](served, {}, True) == plain, path.name
