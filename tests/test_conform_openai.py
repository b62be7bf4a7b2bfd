"""`harness conform --provider openai-chat|openai-responses`: the OpenAI cases, their
stdin protocol (a header line, then the `data` objects), the verdicts by each provider's
table, `--serve` and `--persistent`.

The reference behind the protocol is the harness's own adapter
(tests/conform_openai_adapter.py, and tests/conform_openai_serve.py over HTTP); a lenient
one (the same script, `lenient`) fails the cases it should, with the right classes.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import OPENAI_LIBRARY, ROOT

from harness._testing.conform import (
    UNRECOGNISED,
    Case,
    collect_cases,
    judge,
    outcome_of_message,
    read_output,
)
from harness.faults import catalogue
from harness_cli.main import cli

TESTS = Path(__file__).parent
REFERENCE = [sys.executable, str(TESTS / "conform_openai_adapter.py")]
SERVED = [sys.executable, str(TESTS / "conform_openai_serve.py")]
PROVIDERS = ("openai-chat", "openai-responses")
FOLDERS = {"openai-chat": OPENAI_LIBRARY / "chat", "openai-responses": OPENAI_LIBRARY / "responses"}


def conform(*args: str) -> Result:
    return CliRunner().invoke(cli, ["conform", *args])


def cases(provider: str) -> list[Case]:
    return collect_cases(provider=provider)


def named(provider: str, name: str) -> Case:
    return next(case for case in cases(provider) if case.name == name)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_default_cases_are_every_cassette_of_the_providers_library(provider: str) -> None:
    folder = FOLDERS[provider]
    files = sorted(folder.glob("*.jsonl")) + sorted(folder.glob("errors/*.jsonl"))
    found = cases(provider)
    singles = [case for case in found if case.fault is None]
    assert sorted(Path(case.source) for case in singles) == sorted(files)
    assert all(case.provider == provider for case in found)
    assert not any(case.wire for case in singles)
    rows = {fault.name for fault in catalogue(provider)}
    assert rows <= {case.fault for case in found}  # every row applies to some cassette
    errors = [case for case in singles if case.name.startswith("errors/")]
    for case in errors:  # each error cassette is named after the code it replays to
        code = case.name.removeprefix("errors/")
        outcome = case.expected.outcome.removeprefix("api_error:")
        assert code == outcome or code.startswith(f"{outcome}_"), case.name


def test_the_request_and_the_policy_make_cases_of_their_own() -> None:
    forced = named("openai-chat", "errors/stop_with_tool_calls.tool_choice_required")
    assert forced.request == {"tool_choice": "required"}
    assert forced.expected.outcome == "done"
    assert named("openai-chat", "errors/stop_with_tool_calls").expected.outcome == (
        "stop_with_tool_calls"
    )
    resumed = named("openai-responses", "text.resumed")
    assert resumed.request == {"starting_after": 4}
    assert resumed.events[0]["sequence_number"] == 5
    assert resumed.expected.outcome == "done"
    answered = named("openai-chat", "errors/refusal.refusal_is_answer")
    assert answered.policy["refusal_is_answer"] is True
    assert [event["type"] for event in answered.expected.events] == ["text", "text", "done"]


def test_a_chat_cases_input_is_its_header_line_then_its_items_with_done() -> None:
    case = named("openai-chat", "text")
    assert case.header_line == {
        "harness": "case",
        "provider": "openai-chat",
        "request": {"tool_choice": None},
        "policy": {"finish_reasons": ["stop", "tool_calls"], "refusal_is_answer": False},
    }
    assert case.events[-1] == {"harness": "done"}
    assert named("openai-chat", "errors/missing_done").events[-1] != {"harness": "done"}


def _agree(found: list[Case]) -> list[str]:
    """The one line a run on `found` that agrees on every case prints."""
    wired = sum(case.wire for case in found)
    count = len(found) - wired
    skipped = f" ({wired} wire-level cases skipped: --serve runs them)" if wired else ""
    return [f"{count}/{count} cases agree{skipped}"]


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_reference_adapter_agrees_on_every_case(provider: str) -> None:
    result = conform("--provider", provider, "--persistent", "-j", "2", "--", *REFERENCE)
    assert result.output.splitlines() == _agree(cases(provider))
    assert result.exit_code == 0


@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_process_a_case_reads_a_cassettes_cases_as_persistent_does(provider: str) -> None:
    # The default mode, a Python started for each case: on one cassette's cases (its
    # fault variants), not the library's (a Python a case is ~0.3 s of CPU).
    cassette = str(FOLDERS[provider] / "one_tool.jsonl")
    result = conform("--provider", provider, "-j", "2", cassette, "--", *REFERENCE)
    assert result.output.splitlines() == _agree(collect_cases([cassette], provider))
    assert result.exit_code == 0


@pytest.mark.slow  # every case over HTTP, the stalls slept: ~30 s each
@pytest.mark.parametrize("provider", PROVIDERS)
def test_serve_hands_the_cases_over_http_to_a_client(provider: str) -> None:
    result = conform("--provider", provider, "--serve", "--persistent", "--", *SERVED)
    count = len(cases(provider))
    assert result.output.splitlines() == [f"{count}/{count} cases agree"]


def _classes(provider: str) -> dict[str, Any]:
    """How the lenient adapter disagrees on the library's own cases (fault variants aside:
    it accepts the broken variants of the rules it lacks, as it accepts the cassettes)."""
    result = conform(
        "--provider",
        provider,
        "--persistent",
        "--format",
        "json",
        "-j",
        "2",
        "--",
        *REFERENCE,
        "lenient",
    )
    assert result.exit_code == 1
    objects = [json.loads(line) for line in result.output.splitlines()]
    rows = {fault.name for fault in catalogue(provider)}
    own = {case.name for case in cases(provider) if case.fault not in rows}
    return {
        found["case"]: found["class"]
        for found in objects[:-1]
        if not found["agree"] and found["case"] in own
    }


@pytest.mark.slow
def test_a_lenient_chat_adapter_fails_the_right_cases_with_the_right_classes() -> None:
    assert _classes("openai-chat") == {
        "errors/missing_done": "accepted silently",
        "errors/missing_finish_reason": "accepted silently",
        "errors/unsupported_finish_reason": "accepted silently",
        "errors/stop_with_tool_calls.tool_choice_required": "failed differently",
    }


@pytest.mark.slow
def test_a_lenient_responses_adapter_fails_the_right_cases_with_the_right_classes() -> None:
    assert _classes("openai-responses") == {
        "errors/missing_response_completed": "accepted silently",
        "errors/response_incomplete": "accepted silently",
        "one_tool.resumed": "failed differently",
        "text.resumed": "failed differently",
    }


@pytest.mark.parametrize(
    ("provider", "message", "code"),
    [
        (
            "openai-chat",
            "OpenAI stream protocol error: stream ended before data: [DONE]",
            "missing_done",
        ),
        ("openai-chat", "stream ended before data: [DONE]", "missing_done"),
        (
            "openai-chat",
            "Anthropic stream protocol error: stream ended before message_stop",
            UNRECOGNISED,
        ),
        (
            "openai-responses",
            "OpenAI stream protocol error: text has sequence_number 7, expected 6",
            "sequence_gap",
        ),
        (
            "anthropic",
            "OpenAI stream protocol error: stream ended before data: [DONE]",
            UNRECOGNISED,
        ),
    ],
)
def test_a_message_maps_to_a_code_by_the_providers_table(
    provider: str, message: str, code: str
) -> None:
    assert outcome_of_message(message, provider) == code


def test_list_prints_the_providers_table_and_its_cases_as_data() -> None:
    result = conform("--provider", "openai-responses", "--list")
    listing = json.loads(result.output)
    assert listing["provider"] == "openai-responses"
    assert listing["protocol_error_prefix"] == "OpenAI stream protocol error: "
    rows = {row["code"]: row for row in listing["error_table"]}
    assert "sequence_gap" in rows and "missing_done" not in rows
    assert re.match(rows["sequence_gap"]["pattern"], "x has sequence_number 3, expected 2")
    resumed = next(case for case in listing["cases"] if case["case"] == "text.resumed")
    assert resumed["request"] == {"starting_after": 4}
    assert resumed["policy"] == {"incomplete_reasons": [], "refusal_is_answer": False}
    assert resumed["expected"]["outcome"] == "done"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--provider", "openai", "--", "true"),
            "harness conform: --provider openai: no such provider",
        ),
        (
            ("--provider", "OpenAI-Chat", "--list"),
            "harness conform: --provider OpenAI-Chat: no such",
        ),
        (
            (
                "--provider",
                "openai-responses",
                str(OPENAI_LIBRARY / "chat" / "text.jsonl"),
                "--list",
            ),
            f"harness conform: {OPENAI_LIBRARY / 'chat' / 'text.jsonl'}: a cassette of openai-chat,"
            " not of openai-responses (harness conform --provider openai-chat judges it)",
        ),
        (
            (str(OPENAI_LIBRARY / "chat" / "text.jsonl"), "--", "true"),
            f"harness conform: {OPENAI_LIBRARY / 'chat' / 'text.jsonl'}: a cassette of openai-chat,"
            " not of anthropic",
        ),
    ],
)
def test_a_bad_provider_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    result = conform(*args)
    assert result.output.startswith(message)
    assert len(result.output.splitlines()) == 1
    assert result.exit_code == 2


@pytest.mark.slow
def test_the_chat_case_shown_whole_in_the_docs_is_the_cases_own_input_and_output() -> None:
    """docs/conform.md shows one OpenAI case's stdin and an agreeing stdout: no drift."""
    text = (ROOT / "docs" / "conform.md").read_text()
    shown = text.split(
        "One OpenAI case whole, `errors/stop_with_tool_calls.tool_choice_required`", 1
    )[1]
    blocks = re.findall(r"\n\n((?:    .*\n)+)", shown)[:2]
    stdin, stdout = ([line[4:] for line in block.splitlines()] for block in blocks)
    case = named("openai-chat", "errors/stop_with_tool_calls.tool_choice_required")
    assert [json.loads(line) for line in stdin] == [case.header_line, *case.events]
    assert judge(case, read_output("\n".join(stdout).encode(), provider="openai-chat")).agree


@pytest.mark.slow
def test_conform_for_openai_imports_no_sdk() -> None:
    import subprocess

    listing = "['conform', '--provider', 'openai-chat', '--list']"
    code = (
        "import sys\nfrom harness_cli.main import cli\n"
        f"try:\n    cli.main({listing}, standalone_mode=False)\n"
        "finally:\n    print('openai' in sys.modules, 'anthropic' in sys.modules,"
        " file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stderr.strip() == "False False"


def test_the_case_counts_the_docs_give_are_the_providers() -> None:
    """A new OpenAI cassette, variant or fault row changes them (docs/conform.md)."""
    text = " ".join((ROOT / "docs" / "conform.md").read_text().split())
    (chat, responses), (chat_wire, responses_wire) = (
        [len(cases(provider)) for provider in PROVIDERS],
        [sum(case.wire for case in cases(provider)) for provider in PROVIDERS],
    )
    counted = f"{chat} cases for Chat, {responses} for Responses, {chat_wire} and {responses_wire}"
    assert f"{counted} of them wire-level" in text
    for count, wired in ((chat, chat_wire), (responses, responses_wire)):
        stdin = f"{count - wired}/{count - wired} cases agree ({wired} wire-level cases skipped"
        assert f"conform-openai.js {stdin}" in text
        assert f"conform-openai-serve.js {count}/{count} cases agree" in text


@pytest.mark.slow
def test_keep_writes_an_openai_case_with_its_provider_and_request(tmp_path: Path) -> None:
    result = conform(
        "--provider",
        "openai-chat",
        "--persistent",
        "--keep",
        str(tmp_path),
        "--",
        *REFERENCE,
        "lenient",
    )
    name = "errors/stop_with_tool_calls.tool_choice_required"
    kept = tmp_path / f"{name}.jsonl"
    line = next(line for line in result.output.splitlines() if line.startswith(f"{name}:"))
    assert line.endswith(f"; trace: harness replay {kept}")  # --trace reads Anthropic's alone
    header = json.loads(kept.read_text().splitlines()[0])
    assert header["provider"] == "openai-chat"
    assert header["expect"] == "done"
    assert 'request {"tool_choice":"required"}' in header["description"]
