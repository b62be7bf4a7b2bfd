"""`harness_client`, `harness_async_client`, `harness_requests`: the user's own code under the
cassette marker, faults served to it, and record modes (offline, against the fake API)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from conftest import EXAMPLES, LIBRARY, ROOT
from fake_api import FakeMessagesAPI

from harness import Cassette, write_cassette
from harness.builder import StreamBuilder
from harness.faults import CATALOGUE

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

APP = """
import asyncio


def summarize(client):
    with client.messages.stream(
        model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Sum up"}]
    ) as stream:
        return "".join(stream.text_stream)


def forgiving_summarize(client):
    try:
        return summarize(client)
    except Exception:
        return "(no summary)"


def classify(client):
    message = client.messages.create(
        model="claude-sonnet-5", max_tokens=8, messages=[{"role": "user", "content": "Label"}]
    )
    return message.content[0].text


async def forgiving_step(client):
    try:
        return await agent_step(client)
    except Exception:
        return []


async def agent_step(client):
    stream = await client.messages.create(
        model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Go"}],
        stream=True,
    )
    return [event.type async for event in stream]
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    (pytester.path / "cassettes").mkdir()
    for name in ("text_only", "two_tools"):
        shutil.copy(LIBRARY / f"{name}.jsonl", pytester.path / "cassettes")
    pytester.makepyfile(app=APP)
    return pytester


@pytest.mark.slow
def test_each_fixture_serves_the_users_own_code(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner="""
        import asyncio
        import pytest
        from app import agent_step, classify, summarize

        @pytest.mark.cassette("text_only")
        def test_summary(harness_client, harness_requests):
            assert summarize(harness_client) == "The file has three sections."
            assert harness_requests[0].json["messages"] == [{"role": "user", "content": "Sum up"}]
            assert "x-api-key" not in harness_requests[0].headers

        @pytest.mark.cassette("text_only")
        def test_non_streaming(harness_client):
            assert classify(harness_client) == "The file has three sections."

        @pytest.mark.cassette("two_tools")
        def test_async(harness_async_client):
            kinds = asyncio.run(agent_step(harness_async_client))
            assert kinds.count("content_block_stop") == 3

        @pytest.mark.cassette("text_only", "two_tools")
        def test_several_in_order(harness_client, harness_requests):
            assert classify(harness_client) == "The file has three sections."
            assert summarize(harness_client).endswith("in Lisbon.")
            assert len(harness_requests) == 2
        """
    )
    project.runpytest().assert_outcomes(passed=4)


@pytest.mark.slow
def test_a_session_folder_with_retries_goes_through_the_sdks_own_retries(
    project: pytest.Pytester,
) -> None:
    session = project.path / "cassettes" / "busy"
    session.mkdir()
    overloaded = {
        "harness": "http_error",
        "status": 529,
        "headers": {"retry-after-ms": "1", "x-should-retry": "true"},
        "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    }
    write_cassette(session / "turn-01.jsonl", [overloaded])
    write_cassette(session / "turn-02.jsonl", [overloaded])
    shutil.copy(LIBRARY / "text_only.jsonl", session / "turn-03.jsonl")
    project.makepyfile(
        test_inner="""
        import pytest
        from app import summarize

        @pytest.mark.cassette("busy")
        def test_retried(harness_client, harness_requests):
            assert summarize(harness_client) == "The file has three sections."
            retries = [r.headers["x-stainless-retry-count"] for r in harness_requests]
            assert retries == ["0", "1", "2"]
        """
    )
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.slow
def test_running_out_of_responses_fails_the_test_with_one_line(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner="""
        import pytest
        from app import forgiving_summarize

        @pytest.mark.cassette("text_only")
        def test_twice(harness_client):
            forgiving_summarize(harness_client)
            assert forgiving_summarize(harness_client) == "(no summary)"
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)  # once: no ERROR at teardown for the same request
    result.stdout.fnmatch_lines(
        [
            "*_ test_twice _*",
            "test_inner.py::test_twice: request 2, but the cassettes hold 1 response",
            "=* short test summary info =*",
        ]
    )
    assert "pytest_plugin.py" not in result.stdout.str()


@pytest.mark.slow
def test_a_request_the_code_lets_through_is_reported_once_without_the_sdks_traceback(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_inner="""
        import pytest
        from app import summarize

        @pytest.mark.cassette("text_only")
        def test_twice(harness_client):
            summarize(harness_client)
            summarize(harness_client)
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "test_inner.py::test_twice: request 2, but the cassettes hold 1 response" in text
    assert "ERROR" not in text
    assert "Error code: 404" not in text and "During handling" not in text  # the SDK's


RECORDED_FOR_OPUS = """
import pytest
from app import summarize

@pytest.mark.cassette("recorded")
def test_default(harness_client):
    summarize(harness_client)

@pytest.mark.cassette("recorded", match_on=["messages"])
def test_messages_only(harness_client):
    summarize(harness_client)

@pytest.mark.cassette("recorded", match_on=None)
def test_off(harness_client):
    summarize(harness_client)
"""


@pytest.mark.slow
def test_matching_fails_with_a_diff_and_is_chosen_per_marker(project: pytest.Pytester) -> None:
    path = project.path / "cassettes" / "recorded.jsonl"
    request = {
        "model": "claude-opus-5",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Sum up"}],
    }
    events = list(Cassette(LIBRARY / "text_only.jsonl").events())
    write_cassette(path, events, header={"cassette": 1, "description": "x", "request": request})
    project.makepyfile(test_inner=RECORDED_FOR_OPUS)
    result = project.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_default: request 1 does not match the one */recorded.jsonl was recorded for "
            "(compared on model, messages, system, tools):",
            "--- model (recorded)",
            "+++ model (sent)",
            "@@ -1 +1 @@",
            '-"claude-opus-5"',
            '+"claude-sonnet-5"',
            "to fix it: compare fewer fields (@pytest.mark.cassette(..., match_on=[...]), or "
            "match_on=None to compare none), or record the cassette again for the new request "
            "(--harness-record=all, with ANTHROPIC_API_KEY set)",
        ]
    )
    assert "ERROR" not in result.stdout.str()


@pytest.mark.slow
def test_the_match_on_fixture_sets_the_default_the_marker_overrides(
    project: pytest.Pytester,
) -> None:
    path = project.path / "cassettes" / "recorded.jsonl"
    request = {"model": "claude-opus-5", "messages": [{"role": "user", "content": "Sum up"}]}
    events = list(Cassette(LIBRARY / "text_only.jsonl").events())
    write_cassette(path, events, header={"cassette": 1, "description": "x", "request": request})
    project.makeconftest(
        """
        import pytest

        @pytest.fixture
        def harness_match_on():
            return ["messages"]
        """
    )
    project.makepyfile(test_inner=RECORDED_FOR_OPUS.replace("match_on=None", 'match_on=["model"]'))
    result = project.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_off: request 1 does not match *(compared on model):"])


FAULT_TESTS = """
import asyncio
import pytest
from app import forgiving_step, forgiving_summarize, summarize

@pytest.mark.cassette("text_only")
def test_strict(harness_client, fault_variant):
    with fault_variant.expect_failure():
        summarize(harness_client)

@pytest.mark.cassette("text_only")
def test_forgiving(harness_client, fault_variant):
    with fault_variant.expect_failure():
        forgiving_summarize(harness_client)

@pytest.mark.cassette("text_only")
def test_async_forgiving(harness_async_client, fault_variant):
    with fault_variant.expect_failure():
        asyncio.run(forgiving_step(harness_async_client))
"""


@pytest.mark.slow
def test_expect_failure_names_the_function_and_what_it_returned(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_inner=FAULT_TESTS)
    result = project.runpytest("-k", "test_forgiving", "-rf")
    failed = {line.split("[")[1].split("]")[0] for line in result.outlines if "FAILED" in line}
    assert failed == {
        "drop_message_start",
        "drop_message_stop",
        "event_after_message_stop",
        "orphan_json_delta",
        "drop_stop_reason",
        "stop_reason_max_tokens",
        "tool_use_without_tools",
        "overloaded_mid_stream",
        "cut_connection",
        "http_529",
        "cut_mid_event",
        "stall",
    }
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: forgiving_summarize returned '(no summary)' on cut_mid_event: "
            "the broken stream was accepted silently (the harness's adapter fails it with "
            "connection_error:RemoteProtocolError; harness.strict leaves it to the SDK, which "
            "fails with connection_error:RemoteProtocolError; "
            "trace: harness replay --trace */cut_mid_event.jsonl)",
        ]
    )
    assert "test_forgiving[http_429_then_ok] PASSED" not in result.stdout.str()  # -rf only
    assert "[http_429_then_ok]" not in " ".join(
        line for line in result.outlines if "FAILED" in line
    )


@pytest.mark.slow
def test_expect_failure_reports_a_request_the_variant_cannot_answer(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_inner="""
import pytest
from app import forgiving_summarize


@pytest.mark.cassette("text_only")
def test_again(harness_client, fault_variant):
    with fault_variant.expect_failure():
        for _ in range(4):  # the variant is served to the SDK's 3 attempts, then runs out
            forgiving_summarize(harness_client)
"""
    )
    result = project.runpytest("-k", "again and drop_message_stop", "-rf")
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: forgiving_summarize on drop_message_stop: the cassettes "
            "could not answer: request 4, but the cassettes hold 3 responses*",
        ]
    )


@pytest.mark.slow
def test_expect_failure_accepts_a_loud_failure_and_demands_recovery_from_429(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_inner=FAULT_TESTS
        + """
from app import classify

@pytest.mark.cassette("text_only")
def test_no_retries(fault_variant, harness_client):
    with fault_variant.expect_failure():
        classify(harness_client.with_options(max_retries=0))
"""
    )
    result = project.runpytest("-k", "no_retries", "-v", "-rs")
    passed = {line.split("[")[1].split("]")[0] for line in result.outlines if "PASSED" in line}
    assert passed == {"http_529", "cut_mid_event", "stall"}  # raised: noticed
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: classify raised RateLimitError: *429* on "
            "http_429_then_ok: a retry recovers from it (the harness's adapter completes the "
            "stream), the SDK's own where it retries by default, else one the client or the "
            "request sets up",
            "SKIPPED [[]1[]] test_inner.py:*: fault drop_message_stop breaks a stream, and the "
            "code made a non-streaming request (answered with a Message)",
        ]
    )
    result.assert_outcomes(passed=3, failed=1, skipped=len(CATALOGUE) - 4)


# -- record modes, offline against the fake API -------------------------------------------------

RECORD_TESTS = """
import pytest
from app import classify, summarize

@pytest.mark.cassette("new_stream")
def test_stream(harness_client):
    assert summarize(harness_client) == "Recorded live"

@pytest.mark.cassette("new_message")
def test_message(harness_client, harness_requests):
    assert classify(harness_client) == "Recorded live"
    assert "x-api-key" not in harness_requests[0].headers
"""


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(StreamBuilder().text(0, "Recorded", " live").stop().events()) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-client-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        yield api


@pytest.mark.slow
def test_missing_without_a_key_skips_saying_why(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    project.makepyfile(test_inner=RECORD_TESTS)
    result = project.runpytest("--harness-record=missing", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*record mode missing: recording */new_stream.jsonl live needs*"])
    result = project.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*cassette not found: */new_stream.jsonl (record it with*"])


@pytest.mark.slow
def test_missing_records_what_the_code_sends_then_replays_it(
    project: pytest.Pytester, live: FakeMessagesAPI
) -> None:
    project.makepyfile(test_inner=RECORD_TESTS)
    project.runpytest("--harness-record=missing").assert_outcomes(passed=2)
    assert len(live.received) == 2
    message = Cassette(project.path / "cassettes" / "new_message.jsonl")
    assert message.header is not None
    assert message.header["synthesized_from"] == "message"
    assert message.header["request"]["messages"] == [{"role": "user", "content": "Label"}]
    for name in ("new_stream", "new_message"):
        assert "sk-ant-dummy" not in (project.path / "cassettes" / f"{name}.jsonl").read_text()
    project.runpytest("--harness-record=missing").assert_outcomes(passed=2)
    project.runpytest().assert_outcomes(passed=2)
    assert len(live.received) == 2  # replayed, not recorded again


PARALLEL_TESTS = """
import pytest
from app import summarize

@pytest.mark.parametrize("run", range(4))
@pytest.mark.cassette("shared")
def test_shared(harness_client, run):
    assert summarize(harness_client) == "Recorded live"
"""


@pytest.mark.slow
def test_parallel_tests_sharing_a_missing_cassette_record_it_once(
    project: pytest.Pytester, live: FakeMessagesAPI
) -> None:
    project.makepyfile(test_inner=PARALLEL_TESTS)
    result = project.runpytest_subprocess("-n", "2", "--harness-record=missing")
    result.assert_outcomes(passed=4)
    assert len(live.received) == 1
    assert Cassette(project.path / "cassettes" / "shared.jsonl").validate() > 0


@pytest.mark.slow
def test_all_rerecords_a_shared_cassette_once_per_run(
    project: pytest.Pytester, live: FakeMessagesAPI
) -> None:
    project.makepyfile(test_inner=PARALLEL_TESTS)
    project.runpytest_subprocess("-n", "2", "--harness-record=all").assert_outcomes(passed=4)
    assert len(live.received) == 1
    project.runpytest_subprocess("-n", "2", "--harness-record=all").assert_outcomes(passed=4)
    assert len(live.received) == 2  # a new run re-records, once


@pytest.mark.slow
def test_the_example_app_finds_the_faults_summarize_accepts_silently(
    pytester: pytest.Pytester,
) -> None:
    shutil.copytree(EXAMPLES / "your_app", pytester.path, dirs_exist_ok=True)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=7, passed=37, skipped=25)
    failed = {line.split("[")[1].split("]")[0] for line in result.outlines if "FAILED" in line}
    assert failed == {
        "drop_message_start",
        "drop_message_stop",
        "event_after_message_stop",
        "drop_stop_reason",
        "stop_reason_max_tokens",
        "tool_use_without_tools",
        "cut_connection",
    }
    assert all("test_summarize_notices" in line for line in result.outlines if "FAILED" in line)


@pytest.mark.slow
def test_expect_failure_names_the_coroutine_asyncio_ran(project: pytest.Pytester) -> None:
    project.makepyfile(test_inner=FAULT_TESTS)
    result = project.runpytest("-k", "test_async_forgiving and cut_mid_event")
    result.assert_outcomes(failed=1, deselected=3 * len(CATALOGUE) - 1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: forgiving_step returned [] on cut_mid_event: the broken "
            "stream was accepted silently *",
        ]
    )


# -- fault_variant over a session folder: one turn broken, the earlier ones as recorded ---------

SESSION_APP = """
from harness import TextEvent, to_model_events


def two_turns(client):
    answers = []
    for prompt in ("one", "two"):
        with client.messages.stream(
            model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": prompt}]
        ) as stream:
            events = to_model_events(stream)
            answers.append("".join(e.text for e in events if isinstance(e, TextEvent)))
    return answers
"""

SESSION_TESTS = """
import pytest
from session_app import two_turns


def sent(requests):
    return [request.json["messages"][0]["content"] for request in requests]


@pytest.mark.cassette("chat")
def test_last_turn(harness_client, harness_requests, fault_variant):
    with fault_variant.expect_failure():
        two_turns(harness_client)
    assert sent(harness_requests)[:2] == ["one", "two"]  # the first turn was answered


@pytest.mark.cassette("chat", fault_turn=1)
def test_first_turn(harness_client, harness_requests, fault_variant):
    with fault_variant.expect_failure():
        answers = two_turns(harness_client)
    if fault_variant.recoverable:  # the SDK retried through the 429: turn 2 as recorded
        assert answers == ["first answer", "second answer"]
    else:
        assert "two" not in sent(harness_requests)


@pytest.mark.cassette("chat")
def test_adapter(fault_variant):
    fault_variant.assert_caught()
"""


@pytest.fixture
def session_project(project: pytest.Pytester) -> pytest.Pytester:
    """`cassettes/chat/`: two text turns, "first answer" and "second answer"."""
    chat = project.path / "cassettes" / "chat"
    chat.mkdir()
    for turn, text in ((1, "first"), (2, "second")):
        builder = StreamBuilder().text(0, text, " answer").stop()
        builder.write(chat / f"turn-{turn:02d}.jsonl", f"turn {turn}")
    project.makepyfile(session_app=SESSION_APP, test_inner=SESSION_TESTS)
    return project


def _applicable_to_text() -> int:
    events = StreamBuilder().text(0, "first", " answer").stop().events()
    return sum(fault.derive(events) is not None for fault in CATALOGUE)


@pytest.mark.slow
def test_fault_variant_breaks_one_turn_of_a_session_and_serves_the_others(
    session_project: pytest.Pytester,
) -> None:
    applies = _applicable_to_text()
    result = session_project.runpytest("-rs")
    result.assert_outcomes(passed=3 * applies, skipped=3 * (len(CATALOGUE) - applies))
    assert "Is a directory" not in result.stdout.str()


@pytest.mark.slow
def test_the_fault_turn_fixture_chooses_and_the_marker_wins(
    session_project: pytest.Pytester,
) -> None:
    session_project.makeconftest(
        """
        import pytest

        @pytest.fixture
        def harness_fault_turn():
            return 1
        """
    )
    # The fixture moves test_last_turn's fault to turn 1: it never sends "two" now.
    result = session_project.runpytest("-k", "drop_message_stop")
    result.assert_outcomes(passed=2, failed=1, deselected=3 * len(CATALOGUE) - 3)
    result.stdout.fnmatch_lines(["FAILED test_inner.py::test_last_turn[[]drop_message_stop[]]*"])
    assert "AssertionError: assert ['one'] == ['one', 'two']" in result.stdout.str()


@pytest.mark.slow
def test_a_fault_turn_the_session_lacks_is_one_line(session_project: pytest.Pytester) -> None:
    session_project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("chat", fault_turn=3)
        def test_rows(fault_variant):
            pass
        """
    )
    result = session_project.runpytest("-k", "drop_message_stop")
    result.assert_outcomes(errors=1, deselected=len(CATALOGUE) - 1)
    result.stdout.fnmatch_lines(
        ["*/cassettes/chat: fault_turn=3, but the session folder holds 2 turns"]
    )


def _docs_session_test() -> str:
    """The complete test docs/clients.md shows under "A session folder", as it is shown."""
    text = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    section = text.split("### A session folder", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
def test_the_documented_session_fault_test_runs_once_a_row(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    chat = pytester.path / "tests" / "cassettes" / "chat"
    chat.mkdir(parents=True)
    for turn, text in ((1, "The notes say"), (2, "Short")):
        builder = StreamBuilder().text(0, text).stop()
        builder.write(chat / f"turn-{turn:02d}.jsonl", f"turn {turn}")
    (pytester.path / "tests" / "test_chat.py").write_text(_docs_session_test())
    result = pytester.runpytest("-rs")
    applies = _applicable_to_text()
    result.assert_outcomes(passed=applies, skipped=len(CATALOGUE) - applies)


@pytest.mark.slow
def test_a_recording_the_api_spoils_is_tried_once_a_run(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(
        test_inner="""
        import pytest
        from app import forgiving_summarize

        @pytest.mark.parametrize("run", range(2))
        @pytest.mark.cassette("new_stream")
        def test_shared(harness_client, run):
            forgiving_summarize(harness_client)
        """
    )
    events = StreamBuilder().text(0, "Recorded", " live").stop().events()
    with FakeMessagesAPI(events, behaviour="html") as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-client-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        result = project.runpytest("--harness-record=missing")
        assert len(api.received) == 1  # the second test did not call the API again
    result.assert_outcomes(failed=1, errors=1)
    first = "test_inner.py::test_shared[[]0[]]: the API's answer (200, text/html*) is not usable*"
    result.stdout.fnmatch_lines(  # pytest lists the ERRORS before the FAILURES
        [
            "test_inner.py::test_shared[[]1[]]: not recorded again in this run: "
            "test_inner.py::test_shared[[]0[]]: recording */new_stream.jsonl failed: the API's "
            "answer (200, text/html*) is not usable*",
            first,
        ]
    )
    assert not (project.path / "cassettes" / "new_stream.jsonl").exists()
