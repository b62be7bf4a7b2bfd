"""The report of a fault row the code under test got wrong: what `harness.strict` would
have raised for any turn of a session, the function the block called (never the
machinery around it), and `expect_failure(*types, match=)` telling a crash from a catch."""

from __future__ import annotations

import shutil

import pytest
from conftest import LIBRARY

from harness.builder import StreamBuilder

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

APP = """
from concurrent.futures import ThreadPoolExecutor


def summarize(client):
    with client.messages.stream(
        model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Sum up"}]
    ) as stream:
        return "".join(stream.text_stream)


def run_agent(client):
    with ThreadPoolExecutor(2) as pool:  # the tools run in a pool, as agents' often do
        ran = list(pool.map(lambda n: f"tool {n}", range(2)))
    return f"{summarize(client)} ({', '.join(ran)})"


def run_agent_unclosed(client):
    pool = ThreadPoolExecutor(2)  # never shut down: its weakref callback runs at the return
    ran = list(pool.map(lambda n: f"tool {n}", range(2)))
    return f"{summarize(client)} ({', '.join(ran)})"


def two_turns(client):
    return [summarize(client), summarize(client)]
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    (pytester.path / "cassettes").mkdir()
    shutil.copy(LIBRARY / "text_only.jsonl", pytester.path / "cassettes")
    chat = pytester.path / "cassettes" / "chat"
    chat.mkdir()
    for turn, text in ((1, "first"), (2, "second")):
        StreamBuilder().text(0, text, " answer").stop().write(chat / f"turn-{turn:02d}.jsonl", "t")
    pytester.makepyfile(app=APP)
    return pytester


def _errors(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("E       AssertionError")]


@pytest.mark.slow
def test_a_later_turn_of_a_session_reports_what_strict_would_have_raised(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_inner="""
        import pytest
        from app import two_turns

        @pytest.mark.cassette("chat")
        def test_chat(harness_client, fault_variant):
            with fault_variant.expect_failure():
                two_turns(harness_client)
        """
    )
    result = project.runpytest("-k", "drop_stop_reason")
    result.assert_outcomes(failed=1, deselected=20)
    (error,) = _errors(result)
    assert "two_turns returned ['first answer', 'second answer'] on drop_stop_reason" in error
    assert (
        "harness.strict would have raised StreamProtocolError: Anthropic stream protocol "
        "error: message_delta did not provide a stop_reason" in error
    )
    assert "harness.strict accepts it" not in error


@pytest.mark.slow
def test_the_report_names_the_function_the_block_called_not_the_machinery(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_inner="""
        import pytest
        from concurrent.futures import ThreadPoolExecutor
        from app import run_agent, run_agent_unclosed, summarize

        @pytest.mark.cassette("text_only")
        def test_pool(harness_client, fault_variant):
            with fault_variant.expect_failure():
                run_agent(harness_client)

        @pytest.mark.cassette("text_only")
        def test_unclosed_pool(harness_client, fault_variant):
            with fault_variant.expect_failure():
                run_agent_unclosed(harness_client)

        @pytest.mark.cassette("text_only")
        def test_pool_in_the_block(harness_client, fault_variant):
            with fault_variant.expect_failure():
                with ThreadPoolExecutor(1) as pool:
                    list(pool.map(lambda _: summarize(harness_client), [0]))

        @pytest.mark.cassette("text_only")
        def test_inline(harness_client, fault_variant):
            with fault_variant.expect_failure():
                with harness_client.messages.stream(
                    model="m", max_tokens=8, messages=[{"role": "user", "content": "Hi"}]
                ) as stream:
                    print("".join(stream.text_stream))  # pytest's capture runs here
        """
    )
    result = project.runpytest("-k", "drop_stop_reason")
    result.assert_outcomes(failed=4, deselected=80)
    pool, unclosed, in_the_block, inline = _errors(result)
    assert pool.startswith(
        "E       AssertionError: run_agent returned 'The file has three sections. (tool 0, "
        "tool 1)' on drop_stop_reason: the broken stream was accepted silently"
    )
    assert unclosed.startswith(
        "E       AssertionError: run_agent_unclosed returned 'The file has three sections. "
        "(tool 0, tool 1)' on drop_stop_reason: the broken stream was accepted silently"
    )
    assert in_the_block.startswith(
        "E       AssertionError: the block at test_inner.py:17 raised nothing on "
        "drop_stop_reason: the broken stream was accepted silently"
    )
    assert inline.startswith(
        "E       AssertionError: the block at test_inner.py:23 raised nothing on "
        "drop_stop_reason: the broken stream was accepted silently"
    )


EXPECTING = """
import pytest
from harness import StreamProtocolError
from app import summarize


def noticing(client):
    try:
        return summarize(client)
    except Exception as error:
        raise RuntimeError("the summary failed") from error


def crashing(client):
    summarize(client)
    raise TypeError("unhashable type: 'list'")


@pytest.mark.cassette("text_only", strict=True)
def test_chained(harness_client, fault_variant):
    with fault_variant.expect_failure(StreamProtocolError):
        noticing(harness_client)


@pytest.mark.cassette("text_only", strict=True)
def test_matched(harness_client, fault_variant):
    with fault_variant.expect_failure(RuntimeError, match="summary failed"):
        noticing(harness_client)


@pytest.mark.cassette("text_only")
def test_crash(harness_client, fault_variant):
    with fault_variant.expect_failure(StreamProtocolError):
        crashing(harness_client)


@pytest.mark.cassette("text_only", strict=True)
def test_unmatched(harness_client, fault_variant):
    with fault_variant.expect_failure(RuntimeError, match="timed out"):
        noticing(harness_client)
"""


@pytest.mark.slow
def test_expect_failure_with_types_counts_only_those_in_the_chain(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_inner=EXPECTING)
    result = project.runpytest("-k", "drop_stop_reason", "-rf")
    result.assert_outcomes(passed=2, failed=2, deselected=4 * 20)
    crash, unmatched = _errors(result)
    assert crash == (
        "E       AssertionError: crashing crashed with TypeError: unhashable type: 'list' on "
        "drop_stop_reason, not a caught fault (expect_failure expects StreamProtocolError)"
    )
    assert unmatched == (
        "E       AssertionError: noticing crashed with RuntimeError: the summary failed on "
        "drop_stop_reason, not a caught fault (expect_failure expects RuntimeError matching "
        "'timed out')"
    )


@pytest.mark.slow
def test_expect_failure_takes_exception_types_only(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("text_only")
        def test_it(harness_client, fault_variant):
            with fault_variant.expect_failure("StreamProtocolError"):
                pass
        """
    )
    result = project.runpytest("-k", "drop_stop_reason")
    result.assert_outcomes(failed=1, deselected=20)
    result.stdout.fnmatch_lines(
        ["*TypeError: expect_failure() takes exception types, not 'StreamProtocolError'"]
    )
