"""The `cassette` marker and the `harness_replay` fixture, run inside pytest with `pytester`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.builder import StreamBuilder

STRICT_INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"


def write_cassettes(folder: Path) -> None:
    """A good text stream, one ending in a protocol error, one in an API error event."""
    folder.mkdir(parents=True, exist_ok=True)
    StreamBuilder().text(0, "Hello", " there").stop().write(folder / "hello.jsonl", "good")
    StreamBuilder().text(0, "Hello").message_delta("end_turn").write(
        folder / "no_stop.jsonl", "message_stop missing"
    )
    StreamBuilder().text(0, "Hel").error().write(folder / "overloaded.jsonl", "API error")
    (folder / "variants").mkdir()
    StreamBuilder().text(0, "v2").stop().write(folder / "variants/hello.v2.jsonl", "dotted name")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(STRICT_INI)
    write_cassettes(pytester.path / "cassettes")
    return pytester


@pytest.mark.slow
def test_marked_cassettes_replay_to_their_events_and_errors(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_inner="""
        import anthropic
        import pytest
        from harness import DoneEvent, StreamProtocolError, TextEvent

        @pytest.mark.cassette("hello")
        def test_by_name(harness_replay):
            assert harness_replay.events == [TextEvent("Hello"), TextEvent(" there"), DoneEvent()]
            assert harness_replay.error is None

        @pytest.mark.cassette("no_stop.jsonl")
        def test_protocol_error_is_the_outcome(harness_replay):
            assert harness_replay.events == [TextEvent("Hello")]
            assert isinstance(harness_replay.error, StreamProtocolError)
            assert harness_replay.error.code == "missing_message_stop"

        @pytest.mark.cassette("overloaded")
        def test_api_error_event_is_the_outcome(harness_replay):
            assert harness_replay.events == [TextEvent("Hel")]
            assert isinstance(harness_replay.error, anthropic.APIStatusError)
            assert harness_replay.error.body["error"]["type"] == "overloaded_error"

        @pytest.mark.cassette("variants/hello.v2")
        def test_dotted_name_in_a_subfolder_gets_jsonl_added(harness_replay):
            assert harness_replay.events == [TextEvent("v2"), DoneEvent()]

        @pytest.mark.cassette("hello")
        class TestOnAClass:
            def test_method_inherits_the_marker(self, harness_replay):
                assert harness_replay.error is None

            @pytest.mark.cassette("no_stop")
            def test_closest_marker_wins(self, harness_replay):
                assert harness_replay.error.code == "missing_message_stop"
        """
    )
    result = project.runpytest("-v")
    result.assert_outcomes(passed=6)


@pytest.mark.slow
def test_absolute_path_is_used_as_given(project: pytest.Pytester, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "far.jsonl"
    elsewhere.parent.mkdir()
    StreamBuilder().text(0, "far away").stop().write(elsewhere, "outside the cassette folder")
    project.makepyfile(
        test_inner=f"""
        import pytest
        from harness import TextEvent

        @pytest.mark.cassette({str(elsewhere)!r})
        def test_absolute(harness_replay):
            assert harness_replay.events[0] == TextEvent("far away")
        """
    )
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.slow
def test_misuse_fails_the_test_with_one_clear_line(project: pytest.Pytester) -> None:
    (project.path / "cassettes" / "garbage.jsonl").write_text('{"type": "message_start"\n')
    project.makepyfile(
        test_inner="""
        import pytest

        def test_no_marker(harness_replay):
            pass

        @pytest.mark.cassette("hello", folder="x")
        def test_unknown_keyword(harness_replay):
            pass

        @pytest.mark.cassette("hello", "other")
        def test_two_names(harness_replay):
            pass

        @pytest.mark.cassette("hello", record="sometimes")
        def test_bad_record_mode(harness_replay):
            pass

        @pytest.mark.cassette("garbage")
        def test_unusable_cassette(harness_replay):
            pass

        @pytest.mark.cassette("hello", fault_turn=0)
        def test_bad_fault_turn(harness_replay):
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=6)
    result.stdout.fnmatch_lines_random(
        [
            "*test_no_marker*the harness_replay fixture needs "
            "@pytest.mark.cassette('name-or-path')",
            "*test_unknown_keyword*unknown keyword(s) folder "
            "(known: dir, record, request, match_on, fault_turn, strict, accept, sdk, host)",
            "*test_two_names*harness_replay and fault_variant take one cassette; several, "
            "or a session folder, answer harness_client's requests",
            "*test_bad_record_mode*record mode 'sometimes' is not one of "
            "none, missing (alias once), all, drift",
            "*/cassettes/garbage.jsonl:1: not valid JSON: *",
            "*test_bad_fault_turn*fault_turn= takes a turn number (1 is the first)",
        ]
    )
    output = result.stdout.str()
    assert "harness/pytest_plugin.py" not in output
    assert "During handling" not in output


@pytest.mark.slow
def test_marker_is_registered_for_strict_markers(project: pytest.Pytester) -> None:
    result = project.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.cassette(*names_or_paths, dir=None, *"])


def test_importing_harness_loads_neither_pytest_nor_the_plugin() -> None:
    code = (
        "import sys, harness; harness.Cassette; harness.to_model_events; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest') "
        "or m == 'harness.pytest_plugin'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
