"""The pytest plugin with OpenAI cassettes: the client fixtures give the cassette's SDK
(`openai.OpenAI`, `AsyncOpenAI`), `fault_variant` runs the cassette's provider's
catalogue against the user's own code (the same report wording as Anthropic's),
`strict` guards the OpenAI client, and a record mode records an OpenAI cassette through
the client fixtures alone (tests/test_plugin_record_openai.py records them)."""

from __future__ import annotations

import shutil

import pytest
from conftest import LIBRARY

from harness.faults import catalogue

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

APP = """
def chat_answer(client):
    stream = client.chat.completions.create(
        model="gpt-4.1-mini",
        messages=[{"role": "user", "content": "Capital of France?"}],
        stream=True,
    )
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


async def achat_answer(client):
    stream = await client.chat.completions.create(
        model="gpt-4.1-mini",
        messages=[{"role": "user", "content": "Capital of France?"}],
        stream=True,
    )
    pieces = [chunk.choices[0].delta.content async for chunk in stream if chunk.choices]
    return "".join(piece or "" for piece in pieces)


def responses_answer(client):
    with client.responses.stream(model="gpt-4.1-mini", input="Capital of France?") as stream:
        return "".join(
            event.delta for event in stream if event.type == "response.output_text.delta"
        )
"""

ANSWER = "Paris is the capital of France."

#: The Chat rows a function that joins the content pieces accepts silently (text.jsonl).
CHAT_ACCEPTED = [
    "drop_done",
    "chunk_after_done",
    "orphan_arguments_delta",
    "drop_finish_reason",
    "finish_length",
    "tool_calls_without_tool_calls",
    "cut_connection",
    "chunk_after_finish",
    "second_choice",
    "changed_completion_id",
    "refusal",
]
CHAT_CAUGHT = [
    "server_error_mid_stream",
    "content_parts",
    "http_500",
    "http_429_then_ok",
    "cut_mid_event",
    "stall",
]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    folder = pytester.path / "cassettes"
    folder.mkdir()
    for dialect in ("chat", "responses"):
        for name in ("text", "one_tool"):
            shutil.copy(
                LIBRARY / "openai" / dialect / f"{name}.jsonl", folder / f"{dialect}_{name}.jsonl"
            )
    pytester.makepyfile(app=APP)
    return pytester


def _summary(result: pytest.RunResult) -> list[str]:
    at = result.outlines.index(
        next(line for line in result.outlines if "stream-harness fault rows" in line)
    )
    return [line for line in result.outlines[at + 1 :] if line.startswith(("test_", "  "))]


@pytest.mark.slow
def test_the_clients_are_the_cassettes_sdk_and_answer_from_it(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner=f"""
        import asyncio
        import pytest
        from openai import AsyncOpenAI, OpenAI
        from app import achat_answer, chat_answer, responses_answer

        @pytest.mark.cassette("chat_text", match_on=None)
        def test_chat(harness_client, harness_requests):
            assert isinstance(harness_client, OpenAI)
            assert chat_answer(harness_client) == {ANSWER!r}
            (sent,) = harness_requests
            assert sent.path == "/v1/chat/completions"
            assert sent.json["stream"] is True
            assert sent.json["model"] == "gpt-4.1-mini"
            assert "authorization" not in sent.headers

        @pytest.mark.cassette("chat_text", match_on=None)
        def test_async_chat(harness_async_client):
            assert isinstance(harness_async_client, AsyncOpenAI)
            assert asyncio.run(achat_answer(harness_async_client)) == {ANSWER!r}

        @pytest.mark.cassette("responses_text", match_on=None)
        def test_responses(harness_client, harness_requests):
            assert responses_answer(harness_client) == {ANSWER!r}
            assert harness_requests[0].path == "/v1/responses"

        @pytest.mark.cassette("chat_text", match_on=None)
        def test_second_request(harness_client):
            chat_answer(harness_client)
            chat_answer(harness_client)

        @pytest.mark.cassette("responses_text")
        def test_replay(harness_replay):
            assert harness_replay.error is None
            assert [event.type for event in harness_replay.events][-1] == "done"
        """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=4, failed=1)
    assert (
        "test_inner.py::test_second_request: request 2, but the cassettes hold 1 response"
        in result.outlines
    )


@pytest.mark.slow
def test_fault_variant_runs_the_chat_catalogue_against_the_users_code(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_inner="""
        import pytest
        from app import chat_answer

        @pytest.mark.cassette("chat_text", match_on=None)
        def test_chat(harness_client, fault_variant):
            with fault_variant.expect_failure():
                chat_answer(harness_client)
        """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=len(CHAT_CAUGHT), failed=len(CHAT_ACCEPTED), skipped=10)
    assert _summary(result) == [
        "test_inner.py::test_chat",
        f"  caught ({len(CHAT_CAUGHT)}): {', '.join(CHAT_CAUGHT)}",
        f"  accepted silently ({len(CHAT_ACCEPTED)}): {', '.join(CHAT_ACCEPTED)}",
        "  does not apply (10)",
    ]
    drop_done = next(line for line in result.outlines if "on drop_done:" in line)
    assert drop_done.startswith(
        f"E       AssertionError: chat_answer returned {ANSWER!r} on drop_done: the broken "
        "stream was accepted silently (the harness's adapter fails it with missing_done; "
        "harness.strict would have raised StreamProtocolError: OpenAI stream protocol error:"
    )
    assert "trace: harness replay --trace " in drop_done


@pytest.mark.slow
def test_strict_clients_catch_every_chat_row(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner="""
        import pytest
        from app import chat_answer

        @pytest.mark.cassette("chat_text", match_on=None, strict=True)
        def test_chat(harness_client, fault_variant):
            with fault_variant.expect_failure():
                chat_answer(harness_client)
        """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=len(CHAT_CAUGHT) + len(CHAT_ACCEPTED), skipped=10)
    off = project.runpytest("--harness-strict", "off", "-k", "drop_done")
    off.assert_outcomes(failed=1, deselected=26)


@pytest.mark.slow
def test_fault_variant_runs_the_responses_catalogue(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner="""
        import pytest
        from app import responses_answer

        @pytest.mark.cassette("responses_text", match_on=None)
        def test_lenient(harness_client, fault_variant):
            with fault_variant.expect_failure():
                responses_answer(harness_client)

        @pytest.mark.cassette("responses_text", match_on=None, strict=True)
        def test_strict(harness_client, fault_variant):
            with fault_variant.expect_failure():
                responses_answer(harness_client)
        """
    )
    result = project.runpytest("-k", "drop_response_completed or response_failed or drop_done")
    # a Responses cassette runs the Responses rows: Chat's drop_done is none of them
    result.assert_outcomes(passed=2, failed=2, deselected=46)
    failed = [line for line in result.outlines if line.startswith("E       AssertionError")]
    assert [line.split(" on ")[1].split(":")[0] for line in failed] == [
        "drop_response_completed",
        "response_failed",
    ]
    assert all("responses_answer returned" in line for line in failed)


@pytest.mark.slow
def test_assert_caught_judges_the_providers_own_adapter(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("chat_one_tool")
        def test_chat(fault_variant):
            fault_variant.assert_caught()

        @pytest.mark.cassette("responses_one_tool")
        def test_responses(fault_variant):
            fault_variant.assert_caught()
        """
    )
    result = project.runpytest()
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0
    assert outcomes["passed"] > 30  # the tool rows apply to a tool call
    summary = _summary(result)
    assert not any("accepted silently" in line or "crashed" in line for line in summary)


@pytest.mark.slow
def test_a_record_mode_records_an_openai_cassette_by_client_alone(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client records it (here skipped: no `OPENAI_API_KEY`, Anthropic's key does not
    do); `harness_replay`, which would record from the marker's `request=`, refuses."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-a-real-key")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    project.makepyfile(
        test_inner="""
        import pytest
        from app import chat_answer

        @pytest.mark.cassette("chat_text", record="all")
        def test_client(harness_client):
            chat_answer(harness_client)

        @pytest.mark.cassette("chat_text")
        def test_replay(harness_replay):
            pass
        """
    )
    result = project.runpytest("--harness-record", "all", "-rs")
    result.assert_outcomes(skipped=1, errors=1)
    result.stdout.fnmatch_lines(["SKIPPED*chat_text.jsonl live needs OPENAI_API_KEY, which*"])
    # The error section's own lines; the short summary repeats them, whole under CI=true.
    refused = [line for line in result.outlines if line.startswith("test_inner.py::")]
    assert [line.split("::")[1].split(":")[0] for line in refused] == ["test_replay"]
    assert (
        "chat_text.jsonl is a cassette of OpenAI: the plugin records those through "
        "harness_client or harness_async_client alone" in refused[0]
    )
    assert "Traceback" not in result.stdout.str()


@pytest.mark.slow
def test_a_session_folder_keeps_its_turns_and_snapshot_outcome_stores_the_answer(
    project: pytest.Pytester,
) -> None:
    shutil.copytree(
        LIBRARY / "openai" / "chat" / "sessions" / "weather", project.path / "cassettes" / "weather"
    )
    project.makepyfile(
        test_inner="""
        import pytest

        def both_turns(client):
            answers = []
            for _ in range(2):
                stream = client.chat.completions.create(
                    model="gpt-4.1-mini", messages=[], stream=True
                )
                choices = [chunk.choices[0] for chunk in stream if chunk.choices]
                answers.append([choice.finish_reason for choice in choices])
            return answers

        @pytest.mark.cassette("weather/", match_on=None)
        def test_session(harness_client, harness_requests, snapshot_outcome):
            assert both_turns(harness_client) == snapshot_outcome
            assert len(harness_requests) == 2

        @pytest.mark.cassette("weather/", match_on=None, fault_turn=1)
        def test_first_turn_broken(harness_client, fault_variant):
            with fault_variant.expect_failure():
                both_turns(harness_client)
        """
    )
    written = project.runpytest("--snapshot-update", "-k", "test_session")
    written.assert_outcomes(passed=1, deselected=27)
    result = project.runpytest("-k", "test_session or drop_done or tool_calls_without")
    # the first turn's finish_reason is read, so a tool_calls finish without a call is not
    # noticed; its [DONE] is not looked at either
    result.assert_outcomes(passed=1, failed=2, deselected=25)
    assert {
        line.split(" on ")[1].split(":")[0]
        for line in result.outlines
        if " on " in line and line.startswith("E       AssertionError")
    } == {"drop_done", "tool_calls_without_tool_calls"}


@pytest.mark.slow
def test_rows_chosen_before_a_conftest_names_the_folder_fail_in_one_line(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(
        """
        import pytest

        @pytest.fixture
        def harness_cassette_dir(request):
            return request.config.rootpath / "cassettes"
        """
    )
    (project.path / "elsewhere").mkdir()  # no cassettes/ beside the test module
    (project.path / "elsewhere" / "test_inner.py").write_text(
        "import pytest\n\n\n"
        '@pytest.mark.cassette("chat_text")\n'
        "def test_chat(fault_variant):\n"
        "    fault_variant.assert_caught()\n"
    )
    result = project.runpytest("elsewhere", "-k", "drop_message_stop")
    result.assert_outcomes(errors=1, deselected=20)
    assert any(
        line.startswith("elsewhere/test_inner.py::test_chat[drop_message_stop]: ")
        and line.endswith(
            "chat_text.jsonl is a cassette of openai-chat, which has no fault drop_message_stop: "
            "the rows were chosen when the test was collected, before the harness_cassette_dir "
            "fixture was known; name the cassette's folder with the marker's dir= or "
            "--harness-cassette-dir"
        )
        for line in result.outlines
    )


@pytest.mark.slow
def test_accept_checks_the_cassettes_own_catalogue_once(project: pytest.Pytester) -> None:
    """An Anthropic row on an OpenAI cassette is a mistake: one item fails, naming the
    command that lists the cassette's rows, instead of every row failing alike."""
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("chat_text", accept={"stop_reason_max_tokens": "cut is fine"})
        def test_chat(fault_variant):
            fault_variant.assert_caught()
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    assert (
        "test_inner.py::test_chat: @pytest.mark.cassette accept= takes {fault_name: 'why'}: "
        "stop_reason_max_tokens: no such row in the openai-chat catalogue, the cassette's "
        "(harness faults --list --provider openai-chat names them)"
    ) in result.outlines


@pytest.mark.slow
def test_accept_is_checked_once_when_only_the_fixture_finds_the_cassette(
    project: pytest.Pytester,
) -> None:
    """A conftest's cassette folder is unknown while tests are collected (each name is
    checked against every catalogue then): a Chat row on an Anthropic cassette found by
    the fixture is told by the first row run, the other rows skipped saying where."""
    elsewhere = project.path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(LIBRARY / "text_only.jsonl", elsewhere)
    project.makeconftest(
        """
        import pytest

        @pytest.fixture(scope="module")
        def harness_cassette_dir(request):
            return request.path.parent / "elsewhere"
        """
    )
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("text_only", accept={"finish_length": "cut is fine"})
        def test_text(fault_variant):
            fault_variant.assert_caught()
        """
    )
    result = project.runpytest("-rs")
    rows = result.parseoutcomes()
    assert (rows["errors"], rows["skipped"]) == (1, 20), rows
    told = [line for line in result.outlines if "no such row in the anthropic" in line]
    assert told == [
        "test_inner.py::test_text: @pytest.mark.cassette accept= takes {fault_name: 'why'}: "
        "finish_length: no such row in the anthropic catalogue, the cassette's "
        "(harness faults --list --provider anthropic names them)"
    ]
    assert (
        "SKIPPED [20] test_inner.py:3: accept= names a row anthropic cassettes lack: told on "
        "test_inner.py::test_text[drop_message_start]"
    ) in result.outlines


CRASHES_ON_REPEATED_IDS = """
def weather_call(client):
    stream = client.chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "Weather?"}], stream=True
    )
    named = set()
    for chunk in stream:
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                if call.id is not None and call.index in named:
                    raise KeyError(f"call {call.index} named twice")
                if call.id is not None:
                    named.add(call.index)
    return named
"""


@pytest.mark.slow
def test_a_good_row_that_crashes_the_code_is_reported_as_a_crash(
    project: pytest.Pytester,
) -> None:
    """Chat's `repeat_call_identity` completes under the adapter: code raising on it
    crashed; the SDK's retry has nothing to do with it (that is `http_429_then_ok`'s)."""
    project.makepyfile(tool_app=CRASHES_ON_REPEATED_IDS)
    project.makepyfile(
        test_inner="""
        import pytest
        from tool_app import weather_call

        @pytest.mark.cassette("chat_one_tool", match_on=None)
        def test_calls(harness_client, fault_variant):
            with fault_variant.expect_failure():
                weather_call(harness_client)

        @pytest.mark.cassette(
            "chat_one_tool", match_on=None, accept={"repeat_call_identity": "ids are unique"}
        )
        def test_accepted(harness_client, fault_variant):
            with fault_variant.expect_failure():
                weather_call(harness_client)
        """
    )
    result = project.runpytest("-k", "repeat_call_identity or http_429_then_ok")
    result.assert_outcomes(passed=3, failed=1, deselected=2 * (len(catalogue("openai-chat")) - 2))
    [crash] = [line for line in result.outlines if line.startswith("E       AssertionError")]
    assert crash == (
        "E       AssertionError: weather_call crashed with KeyError: 'call 0 named twice' on "
        "repeat_call_identity, a stream the harness's adapter completes (every later piece "
        "of a call repeats its id and name (tolerated: still done))"
    )
    assert "retry" not in result.stdout.str()
    assert _summary(result) == [
        "test_inner.py::test_calls",
        "  caught (1): http_429_then_ok",
        "  crashed (1): repeat_call_identity",
        "test_inner.py::test_accepted",
        "  caught (1): http_429_then_ok",
        "  accepted on purpose (1): repeat_call_identity (ids are unique)",
    ]


@pytest.mark.slow
def test_a_missing_openai_extra_is_one_line(project: pytest.Pytester) -> None:
    """The `openai` SDK not importable (simulated: None in `sys.modules`): the test using
    an OpenAI client errs in one line naming the extra, with no traceback."""
    project.makeconftest("import sys\n\nsys.modules['openai'] = None\n")
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("chat_text")
        def test_chat(harness_client):
            pass

        @pytest.mark.cassette("chat_text")
        def test_replay(harness_replay):
            assert harness_replay.error is None
        """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    errors = result.outlines[
        result.outlines.index(next(line for line in result.outlines if "ERRORS" in line)) :
    ]
    assert "ERROR at setup of test_chat" in errors[1]
    assert errors[2] == (
        "test_inner.py::test_chat: openai: the SDK is not installed; "
        'pip install "stream-harness[openai]"'
    )
    assert errors[3].startswith("=====")  # the one line is all
    assert "Traceback" not in result.stdout.str()
