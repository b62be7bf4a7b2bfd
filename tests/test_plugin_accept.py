"""The marker's `accept={"fault": "why"}` (rows the code accepts on purpose pass, with their
reason) and the session's summary of fault rows, per test function."""

from __future__ import annotations

import shutil

import pytest
from conftest import LIBRARY

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

TESTS = """
import pytest


def summarize(client):
    with client.messages.stream(
        model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Sum up"}]
    ) as stream:
        return "".join(stream.text_stream)


ACCEPT = {
    "stop_reason_max_tokens": "a cut answer is shown as it is",
    "drop_stop_reason": "the UI shows any text it gets",
}


@pytest.mark.cassette("text_only", accept=ACCEPT)
def test_summarize(harness_client, fault_variant):
    with fault_variant.expect_failure():
        summarize(harness_client)


@pytest.mark.cassette("text_only", accept={"drop_stop_reason": "the adapter shows any text"})
def test_adapter(fault_variant):
    fault_variant.assert_caught()
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    (pytester.path / "cassettes").mkdir()
    shutil.copy(LIBRARY / "text_only.jsonl", pytester.path / "cassettes")
    pytester.makepyfile(test_inner=TESTS)
    return pytester


def _summary(result: pytest.RunResult) -> list[str]:
    lines = result.outlines
    start = next(n for n, line in enumerate(lines) if "stream-harness fault rows" in line)
    end = next(n for n, line in enumerate(lines) if n > start and line.startswith("=="))
    return lines[start + 1 : end]


@pytest.mark.slow
def test_rows_accepted_on_purpose_pass_and_the_summary_lists_each_row_per_test(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest()
    # text_only: 13 rows apply; summarize accepts 7 silently, 2 of them on purpose.
    result.assert_outcomes(passed=8 + 13, failed=5, skipped=2 * 8)
    assert _summary(result) == [
        "test_inner.py::test_summarize",
        "  caught (6): orphan_json_delta, overloaded_mid_stream, http_529, http_429_then_ok, "
        "cut_mid_event, stall",
        "  accepted silently (5): drop_message_start, drop_message_stop, "
        "event_after_message_stop, tool_use_without_tools, cut_connection",
        "  accepted on purpose (2): drop_stop_reason (the UI shows any text it gets), "
        "stop_reason_max_tokens (a cut answer is shown as it is)",
        "  does not apply (8)",
        "test_inner.py::test_adapter",
        "  caught (13): drop_message_start, drop_message_stop, event_after_message_stop, "
        "orphan_json_delta, drop_stop_reason, stop_reason_max_tokens, tool_use_without_tools, "
        "overloaded_mid_stream, cut_connection, http_529, http_429_then_ok, cut_mid_event, stall",
        "  does not apply (8)",
    ]


@pytest.mark.slow
def test_the_adapters_row_accepted_on_purpose_passes(project: pytest.Pytester) -> None:
    project.makeini(INI + "harness_adapter = lenient:to_model_events\npythonpath = .\n")
    project.makepyfile(
        lenient="""
        from harness import to_model_events as strict_events, DoneEvent

        def to_model_events(stream):
            try:
                yield from strict_events(stream)
            except Exception as error:
                if getattr(error, "code", None) != "missing_stop_reason":
                    raise
                yield DoneEvent()
        """
    )
    result = project.runpytest("-k", "test_adapter and drop_stop_reason")
    result.assert_outcomes(passed=1, deselected=41)
    assert _summary(result) == [
        "test_inner.py::test_adapter",
        "  accepted on purpose (1): drop_stop_reason (the adapter shows any text)",
    ]


@pytest.mark.parametrize(
    ("accept", "problem"),
    [
        (
            '{"no_such_row": "why"}',
            "no_such_row: no such row in the anthropic catalogue, the cassette's "
            "(harness faults --list --provider anthropic names them)",
        ),
        ('{"stall": ""}', "each with its reason"),
        ('["stall"]', "each with its reason"),
    ],
    ids=["unknown-row", "no-reason", "not-a-dict"],
)
@pytest.mark.slow
def test_a_misused_accept_is_one_line_once(
    project: pytest.Pytester, accept: str, problem: str
) -> None:
    project.makepyfile(
        test_inner=f"""
        import pytest

        @pytest.mark.cassette("text_only", accept={accept})
        def test_it(fault_variant):
            pass
        """
    )
    result = project.runpytest()
    # told once, by the test's one item, not once a row
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_it[[]accept[]]*",
            f"test_inner.py::test_it: @pytest.mark.cassette accept= takes *{problem}",
        ]
    )


@pytest.mark.slow
def test_the_summary_is_the_whole_runs_under_xdist(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("-n", "2", "-k", "test_summarize")
    result.assert_outcomes(passed=8, failed=5, skipped=8)
    summary = _summary(result)
    assert summary[0] == "test_inner.py::test_summarize"
    assert "  accepted on purpose (2): " in [line.partition("drop")[0] for line in summary]
    counts = sorted(line.split(":")[0].strip() for line in summary[1:])
    assert counts == [
        "accepted on purpose (2)",
        "accepted silently (5)",
        "caught (6)",
        "does not apply (8)",
    ]
