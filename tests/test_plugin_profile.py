"""The plugin's profile (`--harness-profile`, the ini option `harness_profile`) reaches
every fixture a cassette reaches: a vLLM- or Ollama-shaped good stream is good under it
for `harness_replay`, `fault_variant` derives the catalogue from it and judges each row
under it (the row the profile reads as good does not apply), the strict clients guard
the variants under it, and the report's strict verdict reads under it too."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_profile_faults import SHAPED, STOP_READERS, TOLERATED, _applicable

from harness.faults import catalogue

INI = "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nfilterwarnings = error\n"

APP = """
import json


def weather_calls(client):
    stream = client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": "Weather in Paris and Rome?"}],
        stream=True,
    )
    calls = {}
    for chunk in stream:
        for choice in chunk.choices:
            for piece in choice.delta.tool_calls or []:
                call = calls.setdefault(piece.index, {"name": "", "arguments": ""})
                if piece.function is not None:
                    call["name"] = piece.function.name or call["name"]
                    call["arguments"] += piece.function.arguments or ""
    return [(call["name"], json.loads(call["arguments"] or "{}")) for call in calls.values()]
"""

TESTS = """
import pytest
from app import weather_calls


@pytest.mark.cassette("{name}")
def test_replay(harness_replay):
    assert harness_replay.error is None
    assert [event.call.input for event in harness_replay.events if event.type == "tool_call"] == [
        {{"city": "Paris"}},
        {{"city": "Rome"}},
    ]


@pytest.mark.cassette("{name}")
def test_adapter(fault_variant):
    fault_variant.assert_caught()


@pytest.mark.cassette("{name}", match_on=None, strict={strict})
def test_code(fault_variant, harness_client):
    with fault_variant.expect_failure():
        weather_calls(harness_client)
"""


def _project(pytester: pytest.Pytester, name: str, *, strict: bool, ini: str = "") -> None:
    pytester.makeini(INI + ini)
    (pytester.path / "cassettes").mkdir()
    shutil.copy(SHAPED[name], pytester.path / "cassettes" / f"{name}.jsonl")
    pytester.makepyfile(app=APP, test_inner=TESTS.format(name=name, strict=strict))


def _rows(path: Path) -> set[str]:
    """The rows a fault_variant test runs and passes: every one the stream gives, but the
    one the profile reads as good."""
    return set(_applicable(path)) - TOLERATED


def _passed(result: pytest.RunResult, test: str) -> list[str]:
    """The rows of one test function that passed, from `-rA`'s lines."""
    prefix = f"PASSED test_inner.py::{test}["
    return [line[len(prefix) : -1] for line in result.outlines if line.startswith(prefix)]


@pytest.mark.parametrize(
    ("name", "how"),
    [("vllm", ("--harness-profile", "vllm")), ("ollama", ())],
    ids=["vllm-option", "ollama-ini"],
)
@pytest.mark.slow
def test_a_server_shaped_stream_is_good_and_derives_the_catalogue_under_its_profile(
    pytester: pytest.Pytester, name: str, how: tuple[str, ...]
) -> None:
    _project(pytester, name, strict=True, ini="" if how else f"harness_profile = {name}\n")
    result = pytester.runpytest("-rA", *how)
    rows = _rows(SHAPED[name])
    for test in ("test_adapter", "test_code"):
        assert set(_passed(result, test)) == rows, test
    tolerated = (
        f"fault stop_despite_tool_calls does not apply to {name}.jsonl under profile {name}: "
        "the profile reads its variant as a good stream"
    )
    skipped = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert sum(line.endswith(tolerated) for line in skipped) == 2  # each fault_variant test
    assert "PASSED test_inner.py::test_replay" in result.outlines
    result.assert_outcomes(passed=1 + 2 * len(rows), skipped=len(skipped))


@pytest.mark.slow
def test_without_its_profile_every_row_says_which_profile_the_stream_fits(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester, "vllm", strict=True)
    result = pytester.runpytest("-rA", "-k", "test_adapter or test_replay")
    errors = [line for line in result.outlines if line.startswith("ERROR test_inner.py::")]
    assert len(errors) == len(catalogue("openai-chat"))  # every row, at its setup
    result.assert_outcomes(errors=len(errors), failed=1)
    result.stdout.fnmatch_lines(
        [
            "*the fault catalogue derives variants from a good stream, but *vllm.jsonl ends in "
            "an error: OpenAI stream protocol error: finish_reason stop arrived with 2 tool "
            f"call(s) (it replays to done under profile {', '.join(STOP_READERS)}: "
            "--harness-profile NAME, docs/profiles.md)",
        ]
    )
    assert "FAILED test_inner.py::test_replay" in result.stdout.str()


@pytest.mark.slow
def test_a_row_accepted_silently_reports_what_strict_would_raise_under_the_profile(
    pytester: pytest.Pytester,
) -> None:
    """The naive code accepts a chunk after the finish; under the profile the strict
    verdict names that, not the `stop` the profile reads."""
    _project(pytester, "vllm", strict=False)
    result = pytester.runpytest(
        "--harness-profile", "vllm", "-k", "test_code and chunk_after_finish"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*weather_calls returned * on chunk_after_finish: the broken stream was accepted "
            "silently (the harness's adapter fails it with chunk_after_finish; harness.strict "
            "would have raised StreamProtocolError: *",
        ]
    )
    assert "stop arrived with" not in result.stdout.str()
