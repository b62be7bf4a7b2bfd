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
@pytest.mark.slow
def test_ini_then_marker_then_command_line(
    project: pytest.Pytester, ini: str, args: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    outcomes = _outcomes(project, ini, *args)
    seen = tuple(
        "strict" if outcomes[name] == "missing_stop_reason" else "lenient"
        for name in ("unmarked", "marked_strict", "marked_lenient")
    )
    assert seen == expected, outcomes


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_an_unknown_strict_ini_value_is_a_usage_error_naming_the_option(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\nharness_strict = sometimes\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: ini option harness_strict = 'sometimes': expected true or false"]
    )
    assert "Traceback" not in result.stderr.str()


#: A stream that stops at max_tokens: strict refuses it unless the policy allows it.
MAX_TOKENS_TESTS = """
import pytest
from harness import StreamProtocolError
from app import summarize


@pytest.mark.cassette("cut_at_max_tokens", strict=True)
def test_cut(harness_client):
    try:
        print("OUTCOME", summarize(harness_client).replace(" ", "_"))
    except StreamProtocolError as error:
        print("OUTCOME", error.code)
"""


@pytest.mark.parametrize(
    ("ini", "args", "expected"),
    [
        ("", (), "unsupported_stop_reason"),
        ("harness_allow_stop_reasons = max_tokens, refusal", (), "The_file_has_three_sections."),
        (
            "harness_allow_stop_reasons = max_tokens",
            ("--harness-allow-stop-reasons", "refusal"),
            "unsupported_stop_reason",
        ),
        ("", ("--harness-allow-stop-reasons", "max_tokens"), "The_file_has_three_sections."),
    ],
    ids=["default", "ini", "command-line-wins", "command-line"],
)
@pytest.mark.slow
def test_the_strict_clients_take_the_stop_reason_policy(
    project: pytest.Pytester, ini: str, args: tuple[str, ...], expected: str
) -> None:
    from harness import Cassette, write_cassette
    from harness.faults import fault_named

    good = Cassette(LIBRARY / "text_only.jsonl")
    cut = fault_named("stop_reason_max_tokens").derive(list(good.events()))
    assert cut is not None
    write_cassette(project.path / "cassettes/cut_at_max_tokens.jsonl", cut, header=good.header)
    project.makepyfile(test_inner=MAX_TOKENS_TESTS)
    project.makeini(f"[pytest]\naddopts = -p no:cacheprovider\n{ini}")
    result = project.runpytest("-s", *args)
    result.assert_outcomes(passed=1)
    found = [
        line.partition("OUTCOME ")[2].split()[0] for line in result.outlines if "OUTCOME " in line
    ]
    assert found == [expected]


@pytest.mark.slow
def test_a_malformed_stop_reason_list_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    result = project.runpytest("--harness-allow-stop-reasons", "max tokens")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --harness-allow-stop-reasons 'max tokens': 'max tokens' is not a stop "
            "reason: one is lower-case letters and underscores, as max_tokens or length"
        ]
    )


@pytest.mark.slow
def test_the_fault_reports_strict_verdict_follows_the_stop_reason_policy(
    project: pytest.Pytester,
) -> None:
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
    args = ("test_fault_rows.py", "-k", "stop_reason_max_tokens")
    plain = project.runpytest(*args).stdout.str()
    allowing = project.runpytest(*args, "--harness-allow-stop-reasons", "max_tokens").stdout.str()
    assert "harness.strict would have raised StreamProtocolError: " in plain
    assert "harness.strict accepts it" in allowing
