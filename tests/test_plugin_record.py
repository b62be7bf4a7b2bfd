"""`--harness-record none|missing|all`: replay-only by default, live recording only with a key.

Recording is exercised offline against the fake Messages API on 127.0.0.1 (a dummy key
and `ANTHROPIC_BASE_URL`), never the real one.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_api import FakeMessagesAPI

from harness import Cassette
from harness.builder import StreamBuilder

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"
REQUEST = {
    "model": "claude-harness-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Say hi"}],
}

INNER_TESTS = f"""
import pytest
from harness import TextEvent

REQUEST = {REQUEST!r}

@pytest.mark.cassette("kept", request=REQUEST)
def test_kept(harness_replay):
    assert harness_replay.events[0] == TextEvent("old")

@pytest.mark.cassette("new", request=REQUEST)
def test_new(harness_replay):
    assert harness_replay.events[0] == TextEvent("recorded")
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """`cassettes/kept.jsonl` exists and says "old"; `cassettes/new.jsonl` does not exist."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    pytester.makeini(INI)
    (pytester.path / "cassettes").mkdir()
    StreamBuilder().text(0, "old").stop().write(pytester.path / "cassettes/kept.jsonl", "old")
    pytester.makepyfile(test_inner=INNER_TESTS)
    return pytester


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    """A fake API serving a "recorded" stream, a dummy key and the base URL pointing at it."""
    with FakeMessagesAPI(StreamBuilder().text(0, "recorded").stop().events()) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-plugin-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        yield api


@pytest.mark.slow
def test_default_none_replays_and_a_missing_cassette_fails(project: pytest.Pytester) -> None:
    result = project.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*cassette not found: */cassettes/new.jsonl (record it with *"])


@pytest.mark.slow
def test_missing_without_key_skips_only_the_absent_cassette(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness-record=missing", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED*record mode missing: recording */new.jsonl live needs ANTHROPIC_API_KEY, *"]
    )
    assert not (project.path / "cassettes/new.jsonl").exists()


@pytest.mark.slow
def test_all_without_key_skips_even_existing_cassettes(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness-record=all", "-rs")
    result.assert_outcomes(skipped=2)
    assert Cassette(project.path / "cassettes/kept.jsonl").description == "old"


@pytest.mark.slow
def test_missing_records_the_absent_cassette_and_keeps_the_other(
    project: pytest.Pytester, live: FakeMessagesAPI
) -> None:
    project.runpytest("--harness-record=missing").assert_outcomes(passed=2)
    recorded = Cassette(project.path / "cassettes/new.jsonl")
    assert recorded.header is not None
    assert recorded.header["source"] == "recorded"
    assert recorded.header["request"] == REQUEST
    assert Cassette(project.path / "cassettes/kept.jsonl").description == "old"
    assert [request.json()["messages"] for request in live.received] == [REQUEST["messages"]]


@pytest.mark.slow
def test_all_rerecords_every_cassette(project: pytest.Pytester, live: FakeMessagesAPI) -> None:
    (project.path / "test_inner.py").write_text(
        INNER_TESTS.replace('TextEvent("old")', 'TextEvent("recorded")')
    )
    project.runpytest("--harness-record=all").assert_outcomes(passed=2)
    assert len(live.received) == 2
    assert "sk-ant-dummy-plugin-key" not in (project.path / "cassettes/kept.jsonl").read_text()


@pytest.mark.slow
def test_marker_record_beats_fixture_and_command_line_beats_marker(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(
        """
        import pytest

        @pytest.fixture
        def harness_record_mode():
            return "all"
        """
    )
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("kept")
        def test_fixture_mode(harness_replay):
            pass

        @pytest.mark.cassette("kept", record="none")
        def test_marker_mode(harness_replay):
            pass
        """
    )
    project.runpytest().assert_outcomes(passed=1, skipped=1)
    project.runpytest("--harness-record=none").assert_outcomes(passed=2)
    project.runpytest("--harness-record=all").assert_outcomes(skipped=2)


@pytest.mark.slow
def test_recording_without_a_request_says_how_to_give_one(
    project: pytest.Pytester, live: FakeMessagesAPI
) -> None:
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("new")
        def test_new(harness_replay):
            pass
        """
    )
    result = project.runpytest("--harness-record=missing")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*record mode missing needs the request to send: *request=*"])
    assert live.received == []


@pytest.mark.slow
def test_unknown_record_mode_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--harness-record=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--harness-record: invalid choice: 'sometimes'*"])


# -- one recording path: fault_variant records its good cassette once, by any route ------------

FAULT_RECORD_TESTS = f"""
import pytest
from harness import TextEvent, to_model_events

REQUEST = {REQUEST!r}


def strict_summary(client):
    with client.messages.stream(**REQUEST) as stream:
        return "".join(e.text for e in to_model_events(stream) if isinstance(e, TextEvent))


@pytest.mark.cassette("good", request=REQUEST)
def test_adapter(fault_variant):
    fault_variant.assert_caught()


@pytest.mark.cassette("by_code")
def test_code(harness_client, harness_requests, fault_variant):
    with fault_variant.expect_failure():
        strict_summary(harness_client)
    assert harness_requests[0].json["messages"] == REQUEST["messages"]
"""


def _text_rows() -> tuple[int, int]:
    """(rows that apply to the fake API's text stream, rows that do not)."""
    from harness.faults import CATALOGUE

    events = StreamBuilder().text(0, "recorded").stop().events()
    applies = sum(fault.derive(events) is not None for fault in CATALOGUE)
    return applies, len(CATALOGUE) - applies


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["all", "missing"])
def test_fault_variant_records_its_cassette_once_by_either_route(
    project: pytest.Pytester, live: FakeMessagesAPI, mode: str
) -> None:
    """The marker's `request=` and the code's own request through `harness_client` take the
    same lock and run marker: one live call a cassette, and every row derived from it."""
    project.makepyfile(test_inner=FAULT_RECORD_TESTS)
    applies, skipped = _text_rows()
    result = project.runpytest(f"--harness-record={mode}")
    result.assert_outcomes(passed=2 * applies, skipped=2 * skipped)
    assert len(live.received) == 2
    assert sorted(request.json()["stream"] for request in live.received) == [True, True]
    for name in ("good", "by_code"):
        recorded = Cassette(project.path / "cassettes" / f"{name}.jsonl")
        assert recorded.header is not None
        assert recorded.header["request"]["messages"] == REQUEST["messages"]
    project.runpytest(f"--harness-record={mode}").assert_outcomes(
        passed=2 * applies, skipped=2 * skipped
    )
    assert len(live.received) == (4 if mode == "all" else 2)  # `all`: once a run


@pytest.mark.slow
def test_a_row_recording_the_cassette_is_served_its_variant(
    project: pytest.Pytester, live: FakeMessagesAPI
) -> None:
    """The row that records is judged too: its code is served the variant, not the recording."""
    project.makepyfile(
        test_inner="""
        import pytest

        def summary(client):
            with client.messages.stream(
                model="m", max_tokens=8, messages=[{"role": "user", "content": "Go"}]
            ) as stream:
                return "".join(stream.text_stream)

        @pytest.mark.cassette("fresh")
        def test_code(harness_client, fault_variant):
            with fault_variant.expect_failure():
                summary(harness_client)
        """
    )
    result = project.runpytest("--harness-record=missing", "-k", "drop_message_stop")
    result.assert_outcomes(failed=1, deselected=len(_catalogue()) - 1)
    result.stdout.fnmatch_lines(
        ["*summary returned 'recorded' on drop_message_stop: the broken stream was accepted*"]
    )
    assert len(live.received) == 1


def _catalogue() -> list[str]:
    from harness.faults import CATALOGUE

    return [fault.name for fault in CATALOGUE]


@pytest.mark.slow
def test_parallel_workers_record_a_fault_cassette_once(
    project: pytest.Pytester, live: FakeMessagesAPI
) -> None:
    """Under `-n 2` the rows of both routes share one lock and run marker a cassette."""
    project.makepyfile(test_inner=FAULT_RECORD_TESTS)
    applies, skipped = _text_rows()
    result = project.runpytest_subprocess("-n", "2", "--harness-record=all")
    result.assert_outcomes(passed=2 * applies, skipped=2 * skipped)
    assert len(live.received) == 2


@pytest.mark.slow
def test_judging_the_adapter_before_the_code_recorded_says_so(
    project: pytest.Pytester, live: FakeMessagesAPI
) -> None:
    project.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("fresh")
        def test_too_early(harness_client, fault_variant):
            fault_variant.assert_caught()
        """
    )
    result = project.runpytest("--harness-record=missing", "-k", "drop_message_stop")
    result.assert_outcomes(failed=1, deselected=len(_catalogue()) - 1)
    result.stdout.fnmatch_lines(["*fault drop_message_stop: no variant yet: its good cassette*"])
    assert live.received == []


@pytest.mark.slow
def test_a_failed_recording_is_tried_once_a_run_and_reported_by_every_test_needing_it(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(
        test_inner=f"""
        import pytest

        REQUEST = {REQUEST!r}

        @pytest.mark.parametrize("run", range(3))
        @pytest.mark.cassette("new", request=REQUEST)
        def test_new(harness_replay, run):
            pass
        """
    )
    refusal = {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}
    events = StreamBuilder().text(0, "recorded").stop().events()
    # One refusal, then good answers: a second call would record, so none may be made.
    with FakeMessagesAPI(events, errors=[(401, refusal, {})]) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-plugin-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        result = project.runpytest("--harness-record=missing")
        assert len(api.received) == 1
    result.assert_outcomes(errors=3)
    first = "test_inner.py::test_new[[]0[]]: recording */new.jsonl failed: the API refused *"
    result.stdout.fnmatch_lines(
        [
            first,
            "test_inner.py::test_new[[]1[]]: not recorded again in this run: " + first[:-1] + "*",
        ]
    )
    assert not (project.path / "cassettes" / "new.jsonl").exists()
