"""The client fixtures' `strict` option: ini < marker's `strict=` < `--harness-strict`, and
the fault report of a row accepted silently saying what `harness.strict` would have raised."""

from __future__ import annotations

import shutil

import pytest
from conftest import LIBRARY

APP = """
def summarize(client):
    with client.messages.stream(
        model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Sum up"}]
    ) as stream:
        return "".join(stream.text_stream)
"""

#: One test a line of the precedence table: what the marker says, and the outcome it gets.
TESTS = """
import pytest
from harness import StreamProtocolError
from app import summarize


def outcome(client):
    try:
        return summarize(client)
    except StreamProtocolError as error:
        return error.code


@pytest.mark.cassette("cut_off")
def test_unmarked(harness_client):
    print("OUTCOME unmarked", outcome(harness_client))


@pytest.mark.cassette("cut_off", strict=True)
def test_marked_strict(harness_client):
    print("OUTCOME marked_strict", outcome(harness_client))


@pytest.mark.cassette("cut_off", strict=False)
def test_marked_lenient(harness_client):
    print("OUTCOME marked_lenient", outcome(harness_client))
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "cassettes").mkdir()
    shutil.copy(
        LIBRARY / "errors/missing_stop_reason.jsonl", pytester.path / "cassettes/cut_off.jsonl"
    )
    shutil.copy(LIBRARY / "text_only.jsonl", pytester.path / "cassettes")
    pytester.makepyfile(app=APP, test_inner=TESTS)
    return pytester


def _outcomes(pytester: pytest.Pytester, ini: str, *args: str) -> dict[str, str]:
    pytester.makeini(f"[pytest]\naddopts = -p no:cacheprovider\nfilterwarnings = error\n{ini}")
    result = pytester.runpytest("-s", *args)
    result.assert_outcomes(passed=3)
    found = [line.partition("OUTCOME ")[2].split() for line in result.outlines]
    return {words[0]: words[1] for words in found if words}


@pytest.mark.parametrize(
    ("ini", "args", "expected"),
    [
        ("", (), ("lenient", "strict", "lenient")),
        ("harness_strict = true", (), ("strict", "strict", "lenient")),
        ("harness_strict = true", ("--harness-strict", "off"), ("lenient",) * 3),
        ("", ("--harness-strict", "on"), ("strict",) * 3),
    ],
    ids=["default", "ini", "command-line-off", "command-line-on"],
)
def test_ini_then_marker_then_command_line(
    project: pytest.Pytester, ini: str, args: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    outcomes = _outcomes(project, ini, *args)
    seen = tuple(
        "strict" if outcomes[name] == "missing_stop_reason" else "lenient"
        for name in ("unmarked", "marked_strict", "marked_lenient")
    )
    assert seen == expected, outcomes


def test_a_strict_marker_takes_a_bool(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.cassette("text_only", strict="yes")
        def test_it(harness_client):
            pass
        """
    )
    result = project.runpytest("test_bad.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.cassette strict= takes True or False"])


def test_the_fault_report_says_what_strict_would_have_raised(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_fault_rows="""
        import pytest
        from app import summarize

        @pytest.mark.cassette("text_only")
        def test_summarize(fault_variant, harness_client):
            with fault_variant.expect_failure():
                summarize(harness_client)
        """
    )
    result = project.runpytest("test_fault_rows.py", "-k", "drop_stop_reason or truncate")
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: summarize returned * on drop_stop_reason: the broken stream "
            "was accepted silently (the harness's adapter fails it with missing_stop_reason; "
            "harness.strict would have raised StreamProtocolError: Anthropic stream protocol "
            "error: message_delta did not provide a stop_reason; trace: harness replay --trace *)",
        ]
    )


def test_with_strict_on_the_same_code_notices_every_broken_row(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_fault_rows="""
        import pytest
        from app import summarize

        @pytest.mark.cassette("text_only", strict=True)
        def test_summarize(fault_variant, harness_client):
            with fault_variant.expect_failure():
                summarize(harness_client)
        """
    )
    result = project.runpytest("test_fault_rows.py")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0, result.stdout.str()
    assert outcomes["passed"] >= 10
