"""`--harness-variants-dir`: where `fault_variant` keeps the broken variants a report's trace
command replays, by default pytest's cache folder, so the command works runs later."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import LIBRARY

from harness import Cassette

TESTS = """
import pytest


def summarize(client):
    with client.messages.stream(
        model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": "Sum up"}]
    ) as stream:
        return "".join(stream.text_stream)


@pytest.mark.cassette("text_only")
def test_summarize(harness_client, fault_variant):
    with fault_variant.expect_failure():
        summarize(harness_client)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "cassettes").mkdir()
    shutil.copy(LIBRARY / "text_only.jsonl", pytester.path / "cassettes")
    pytester.makepyfile(test_inner=TESTS)
    return pytester


def _traced(result: pytest.RunResult) -> Path:
    """The variant the report's `trace: harness replay --trace PATH` points to (said in the
    failure and again in the short summary, which pytest cuts to the terminal's width but
    under CI)."""
    (path,) = set(re.findall(r"trace: harness replay --trace (\S+?)\)", result.stdout.str()))
    return Path(path)


def _run(project: pytest.Pytester, ini: str, *args: str) -> pytest.RunResult:
    project.makeini(f"[pytest]\naddopts = --strict-markers\nfilterwarnings = error\n{ini}")
    result = project.runpytest("-k", "cut_connection and not in_tool", *args)
    result.assert_outcomes(failed=1, deselected=20)
    return result


@pytest.mark.slow
def test_the_variants_live_in_pytests_cache_and_stay_there_between_runs(
    project: pytest.Pytester,
) -> None:
    first = _traced(_run(project, ""))
    cache = project.path / ".pytest_cache" / "d" / "stream-harness-variants"
    assert first == cache / "test_inner.py__test_summarize.cut_connection" / "cut_connection.jsonl"
    for _ in range(5):  # pytest keeps 3 tmp_path folders; the cache keeps the variant
        assert _traced(_run(project, "")) == first
    assert Cassette(first).header["fault"] == "cut_connection"  # type: ignore[index]


@pytest.mark.slow
def test_the_option_chooses_the_folder(project: pytest.Pytester) -> None:
    traced = _traced(_run(project, "", "--harness-variants-dir", "kept"))
    assert traced.parent.parent == project.path / "kept"
    assert traced.exists()


@pytest.mark.slow
def test_without_the_cache_provider_the_variants_go_to_tmp_path(
    project: pytest.Pytester,
) -> None:
    traced = _traced(_run(project, "", "-p", "no:cacheprovider"))
    assert "stream-harness-variants" not in str(traced)
    assert traced.name == "cut_connection.jsonl" and traced.exists()
