"""Bring your own adapter: the `harness_adapter` ini option and fixture, and the fault catalogue."""

from __future__ import annotations

import shutil

import pytest
from conftest import LENIENT_EXAMPLE

from harness.builder import StreamBuilder
from harness.faults import CATALOGUE

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

SHOUTING_ADAPTER = """
from harness import TextEvent, to_model_events

def shout(events):
    for event in to_model_events(events):
        yield TextEvent(event.text.upper()) if isinstance(event, TextEvent) else event
"""

TEXT_TEST = """
import pytest
from harness import TextEvent

@pytest.mark.cassette("hello")
def test_text(harness_replay):
    assert harness_replay.events[0] == TextEvent(EXPECTED)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """`cassettes/hello.jsonl` (text only) and `cassettes/tools.jsonl` (text and two calls)."""
    folder = pytester.path / "cassettes"
    folder.mkdir()
    StreamBuilder().text(0, "hello").stop().write(folder / "hello.jsonl", "text only")
    (
        StreamBuilder()
        .text(0, "Reading.")
        .tool(1, "read", {"path": "a.md"}, pieces=2)
        .tool(2, "read", {"path": "b.md"})
        .stop("tool_use")
        .write(folder / "tools.jsonl", "two calls")
    )
    pytester.makepyfile(shouting=SHOUTING_ADAPTER)
    return pytester


@pytest.mark.slow
def test_ini_option_points_replay_at_the_project_adapter(project: pytest.Pytester) -> None:
    project.makeini(INI + "harness_adapter = shouting:shout\npythonpath = .\n")
    project.makepyfile(test_inner="EXPECTED = 'HELLO'\n" + TEXT_TEST)
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.slow
def test_without_the_option_replay_uses_the_harness_adapter(project: pytest.Pytester) -> None:
    project.makeini(INI)
    project.makepyfile(test_inner="EXPECTED = 'hello'\n" + TEXT_TEST)
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.slow
def test_overriding_fixture_beats_the_ini_option(project: pytest.Pytester) -> None:
    project.makeini(INI + "harness_adapter = shouting:shout\npythonpath = .\n")
    project.makeconftest(
        """
        import pytest
        from harness import to_model_events

        @pytest.fixture
        def harness_adapter():
            return to_model_events
        """
    )
    project.makepyfile(test_inner="EXPECTED = 'hello'\n" + TEXT_TEST)
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "shouting.shout",
            "harness_adapter = 'shouting.shout' is not of the form pkg.module:function",
        ),
        ("no_such_module:shout", "harness_adapter = 'no_such_module:shout': cannot import *"),
        (
            "shouting:whisper",
            "harness_adapter = 'shouting:whisper': shouting has no function whisper",
        ),
    ],
    ids=["no-colon", "no-module", "no-function"],
)
@pytest.mark.slow
def test_bad_ini_option_is_one_clear_line(
    project: pytest.Pytester, spec: str, message: str
) -> None:
    project.makeini(INI + f"harness_adapter = {spec}\npythonpath = .\n")
    project.makepyfile(test_inner="EXPECTED = 'HELLO'\n" + TEXT_TEST)
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])


@pytest.mark.slow
def test_an_adapter_crash_is_not_mistaken_for_an_outcome(project: pytest.Pytester) -> None:
    project.makeini(INI)
    project.makeconftest(
        """
        import pytest

        def broken(events):
            for event in events:
                raise KeyError("the adapter's own bug")
            yield

        @pytest.fixture
        def harness_adapter():
            return broken
        """
    )
    project.makepyfile(test_inner="EXPECTED = 'hello'\n" + TEXT_TEST)
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(['E * KeyError: "the adapter\'s own bug"'])


FAULT_TEST = """
import pytest

@pytest.mark.cassette(CASSETTE)
def test_catches(fault_variant):
    fault_variant.assert_caught()
"""


@pytest.mark.slow
def test_strict_adapter_catches_every_row_of_the_catalogue(project: pytest.Pytester) -> None:
    project.makeini(INI)
    project.makepyfile(test_inner="CASSETTE = 'tools'\n" + FAULT_TEST)
    result = project.runpytest("-v")
    result.assert_outcomes(passed=len(CATALOGUE))
    result.stdout.fnmatch_lines_random(
        [f"test_inner.py::test_catches[[]{fault.name}[]] PASSED*" for fault in CATALOGUE]
    )


@pytest.mark.slow
def test_rows_that_need_a_tool_block_are_skipped_on_a_text_stream(
    project: pytest.Pytester,
) -> None:
    project.makeini(INI)
    project.makepyfile(test_inner="CASSETTE = 'hello'\n" + FAULT_TEST)
    result = project.runpytest("-rs")
    skipped = {line.split("fault ")[1].split()[0] for line in result.outlines if "SKIPPED" in line}
    assert skipped == {
        "repeat_tool_start",
        "truncate_tool_json",
        "tool_input_nan",
        "tool_input_null",
        "tool_input_list",
        "drop_tool_stop",
        "end_turn_despite_tools",
        "cut_connection_in_tool",
    }
    result.assert_outcomes(passed=len(CATALOGUE) - len(skipped), skipped=len(skipped))


@pytest.mark.slow
def test_catalogue_needs_a_cassette_that_completes(project: pytest.Pytester) -> None:
    project.makeini(INI)
    StreamBuilder().text(0, "cut").write(project.path / "cassettes/cut.jsonl", "no ending")
    project.makepyfile(test_inner="CASSETTE = 'cut'\n" + FAULT_TEST)
    result = project.runpytest()
    result.assert_outcomes(errors=len(CATALOGUE))
    result.stdout.fnmatch_lines(
        ["*derives variants from a good stream, but */cut.jsonl ends in an error: *"]
    )


@pytest.mark.slow
def test_lenient_example_fails_exactly_the_rows_it_does_not_handle(
    pytester: pytest.Pytester,
) -> None:
    shutil.copytree(LENIENT_EXAMPLE, pytester.path, dirs_exist_ok=True)
    result = pytester.runpytest()
    failed = sorted(
        line.split("[")[1].split("]")[0] for line in result.outlines if line.startswith("FAILED")
    )
    assert failed == sorted(
        [
            "drop_message_start",
            "event_after_message_stop",
            "repeat_tool_start",
            "orphan_json_delta",
            "tool_input_nan",  # json.loads takes NaN: the lenient example lets it through
            "drop_tool_stop",
            "drop_stop_reason",
            "end_turn_despite_tools",
            "tool_use_without_tools",
            "cut_connection_in_tool",
        ]
    )
    result.assert_outcomes(passed=1 + len(CATALOGUE) - len(failed), failed=len(failed))
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: fault drop_stop_reason: every message_delta's stop_reason *",
            "E         expected: missing_stop_reason",
            "E         got:      unsupported_stop_reason (Anthropic stream protocol error: *)",
            "E         events:   *",
            "E         trace:    harness replay --trace */drop_stop_reason.jsonl",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: fault orphan_json_delta: *",
            "E         expected: orphan_json_delta",
            "E         got:      the stream completed, as if nothing were wrong",
        ]
    )
