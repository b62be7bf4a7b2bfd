"""The `snapshot_outcome` fixture: syrupy storing an outcome as a readable `.jsonl` file."""

from __future__ import annotations

import json

import pytest

from harness.builder import StreamBuilder

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    folder = pytester.path / "cassettes"
    folder.mkdir()
    StreamBuilder().text(0, "Hi", " you").stop().write(folder / "good.jsonl", "good")
    (
        StreamBuilder()
        .text(0, "Reading")
        .tool_start(1, "read", id="toolu_01")
        .json_delta(1, '{"path": ')
        .block_stop(1)
        .stop("tool_use")
        .write(folder / "broken.jsonl", "tool JSON cut short")
    )
    pytester.makepyfile(
        test_inner="""
        import pytest

        @pytest.mark.cassette("good")
        def test_good(harness_replay, snapshot_outcome):
            assert harness_replay == snapshot_outcome

        @pytest.mark.cassette("broken")
        def test_broken(harness_replay, snapshot_outcome):
            assert harness_replay == snapshot_outcome
        """
    )
    return pytester


def snapshot_lines(project: pytest.Pytester, test: str) -> list[dict[str, object]]:
    text = (project.path / "__snapshots__" / "test_inner" / f"{test}.jsonl").read_text()
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.slow
def test_update_writes_one_readable_jsonl_file_a_test(project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    assert snapshot_lines(project, "test_good") == [
        {"type": "text", "text": "Hi"},
        {"type": "text", "text": " you"},
        {"type": "done"},
    ]
    assert snapshot_lines(project, "test_broken") == [
        {"type": "text", "text": "Reading"},
        {
            "type": "protocol_error",
            "code": "invalid_tool_json",
            "message": "Anthropic stream protocol error: "
            "tool_use block 1 had invalid input_json_delta JSON",
        },
    ]


@pytest.mark.slow
def test_stored_snapshot_passes_and_a_changed_stream_fails(project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    project.runpytest().assert_outcomes(passed=2)
    StreamBuilder().text(0, "Hi", " there").stop().write(
        project.path / "cassettes/good.jsonl", "changed"
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_inner.py::test_good*"])
    result.stdout.fnmatch_lines(
        [
            'E         - {"type": "text", "text": " you"}',
            'E         + {"type": "text", "text": " there"}',
            "E         trace: harness replay --trace */cassettes/good.jsonl",
        ]
    )


@pytest.mark.slow
def test_missing_snapshot_fails_until_updated(project: pytest.Pytester) -> None:
    result = project.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*Snapshot 'test_good' does not exist!*"])


VALUE_TESTS = """
import pytest

@pytest.mark.cassette("good")
def test_summary(harness_replay, snapshot_outcome):
    text = "".join(event.text for event in harness_replay.events if event.type == "text")
    assert text == snapshot_outcome
    assert {"summary": text, "calls": []} == snapshot_outcome

@pytest.mark.cassette("good")
def test_outcome_and_value(harness_replay, snapshot_outcome):
    assert harness_replay == snapshot_outcome
    assert "Hi you" == snapshot_outcome
"""


@pytest.mark.slow
def test_any_json_value_is_stored_as_readable_json_beside_outcomes(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_inner=VALUE_TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    folder = project.path / "__snapshots__" / "test_inner"
    assert (folder / "test_summary.json").read_text() == '"Hi you"\n'
    assert json.loads((folder / "test_summary.1.json").read_text()) == {
        "summary": "Hi you",
        "calls": [],
    }
    assert "\n  " in (folder / "test_summary.1.json").read_text()  # indented, not one blob
    assert (folder / "test_outcome_and_value.json").read_text() == '"Hi you"\n'
    assert snapshot_lines(project, "test_outcome_and_value")[-1] == {"type": "done"}
    project.runpytest().assert_outcomes(passed=2)


@pytest.mark.slow
def test_a_changed_value_fails_with_a_diff_of_the_json(project: pytest.Pytester) -> None:
    project.makepyfile(test_inner=VALUE_TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    StreamBuilder().text(0, "Hi", " there").stop().write(
        project.path / "cassettes/good.jsonl", "changed"
    )
    result = project.runpytest("-k", "test_summary")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(['E         - "Hi you"', 'E         + "Hi there"'])


@pytest.mark.slow
def test_a_value_that_is_not_json_fails_with_one_line_saying_how_to_give_it_one(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_inner="""
        import dataclasses

        def test_set(snapshot_outcome):
            assert {1, 2} == snapshot_outcome

        @dataclasses.dataclass
        class Holder:
            thing: object

        def test_nested(snapshot_outcome):
            assert Holder(object()) == snapshot_outcome
        """
    )
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "snapshot_outcome: set has no JSON form: compare sorted(value) (a list) with "
            "snapshot_outcome",
            "snapshot_outcome: object has no JSON form: make it a dataclass, a pydantic model or "
            "an attrs class, or compare a dict or list made from it with snapshot_outcome",
        ]
    )
    assert "Traceback" not in result.stdout.str() and "snapshot.py" not in result.stdout.str()


@pytest.mark.slow
def test_dataclasses_pydantic_models_and_attrs_classes_are_stored_as_readable_json(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_inner="""
        import dataclasses

        import attrs
        import pydantic


        class Usage(pydantic.BaseModel):
            input_tokens: int
            model: str


        @attrs.define
        class Call:
            name: str
            input: dict


        @dataclasses.dataclass
        class Summary:
            text: str
            calls: list
            usage: Usage


        def test_summary(snapshot_outcome):
            usage = Usage(input_tokens=3, model="m")
            summary = Summary("Hi", [Call("read", {"path": "a.md"})], usage)
            assert summary == snapshot_outcome
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    stored = project.path / "__snapshots__" / "test_inner" / "test_summary.json"
    assert json.loads(stored.read_text()) == {
        "text": "Hi",
        "calls": [{"name": "read", "input": {"path": "a.md"}}],
        "usage": {"input_tokens": 3, "model": "m"},
    }
    assert stored.read_text().startswith('{\n  "text": "Hi",\n')  # indented, in field order
    project.runpytest().assert_outcomes(passed=1)
