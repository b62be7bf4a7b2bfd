"""`harness conform --provider gemini`: its default cases (the Gemini library, the
policy's variant, the fault rows), the reference adapter on standard input, and
google-genai behind `--serve` (docs/conform.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import GEMINI_LIBRARY, ROOT, library_cassettes

from harness._testing.conform import collect_cases
from harness_cli.main import cli

TESTS = Path(__file__).parent
REFERENCE = [sys.executable, str(TESTS / "conform_openai_adapter.py")]
SERVED = [sys.executable, str(TESTS / "conform_gemini_serve.py")]


def conform(*args: str) -> Result:
    return CliRunner().invoke(cli, ["conform", *args])


def test_the_default_cases_are_the_library_its_policy_variant_and_the_fault_rows() -> None:
    cases = collect_cases(provider="gemini")
    names = {case.name for case in cases}
    library = {
        p.relative_to(GEMINI_LIBRARY).with_suffix("").as_posix()
        for p in library_cassettes(None, GEMINI_LIBRARY)
    }
    assert library <= names
    assert "errors/unsupported_finish_reason.max_tokens_accepted" in names
    assert "text.cut_mid_event" in names and "parallel_tools.http_429_then_ok" in names
    assert (len(cases), sum(case.wire for case in cases)) == (141, 32)  # docs/conform.md
    text = " ".join((ROOT / "docs" / "conform.md").read_text().split())
    assert "141 cases, 32 of them wire-level" in text


def test_the_reference_adapter_agrees_on_every_case_on_standard_input() -> None:
    result = conform("--provider", "gemini", "--persistent", "--", *REFERENCE)
    assert result.output.splitlines() == [
        "109/109 cases agree (32 wire-level cases skipped: --serve runs them)"
    ]


@pytest.mark.slow
def test_google_genai_behind_serve_agrees_on_all_but_the_chunk_it_refuses_itself() -> None:
    result = conform("--provider", "gemini", "--serve", "--persistent", "--", *SERVED)
    lines = result.output.splitlines()
    assert lines[-1] == "140/141 cases agree"
    assert lines[0].startswith(
        "errors/non_object_tool_input: expected non_object_tool_input, got an error no row "
        "of the table recognises: 'google-genai: GenerateContentResponse'"
    )
