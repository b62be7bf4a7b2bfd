"""The fault catalogue from a compatible server's good stream (docs/profiles.md,
docs/faults.md): a vLLM-shaped and an Ollama-shaped cassette are good under their
profile, so `harness faults --profile` and `derive_variants(profile=)` derive the
catalogue from them, each row judged under the profile; a row the profile reads as a
good stream (`stop` finishing calls) is left out (tests/test_profile_faults_strict.py:
`harness.strict(profile=)` on the same variants)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LIBRARY

from harness import Cassette, replay_outcome
from harness._cassette.codec import write_cassette
from harness._providers.openai_chat.profiles import PROFILES
from harness._testing.coverage import outcome_code
from harness.faults import DONE, Variant, catalogue, derive_variants, stream_lines
from harness_cli.main import cli

SERVER_STREAMS = Path(__file__).parent / "data" / "server_streams"
#: each server-shaped good stream and the profile it is good under
SHAPED = {"vllm": SERVER_STREAMS / "vllm.jsonl", "ollama": SERVER_STREAMS / "ollama.jsonl"}
#: the rows whose point is what the vLLM and Ollama profiles tolerate: `stop` after calls
TOLERATED = {"stop_despite_tool_calls"}
CHAT = "openai-chat"
#: the profiles that read `stop` after calls as `tool_calls`: those a vLLM stream is good under
STOP_READERS = [name for name, found in PROFILES.items() if found.stop_finishes_calls]


def _variants(path: Path, profile: str | None) -> list[Variant]:
    cassette = Cassette(path)
    return derive_variants(
        stream_lines(cassette), provider=CHAT, profile=profile, header=cassette.header
    )


def _applicable(path: Path) -> dict[str, str]:
    """The rows the catalogue derives from `path` at all, with their own expectations."""
    events = stream_lines(path)
    return {fault.name: fault.expect for fault in catalogue(CHAT) if fault.derive(events)}


@pytest.mark.parametrize("profile", list(SHAPED))
def test_a_server_shaped_stream_is_good_under_its_profile_only(profile: str) -> None:
    path = SHAPED[profile]
    assert outcome_code(replay_outcome(path, profile=profile)) == DONE
    assert outcome_code(replay_outcome(path)) == "stop_with_tool_calls"


@pytest.mark.parametrize("profile", list(SHAPED))
def test_every_row_but_the_tolerated_one_keeps_its_expectation_under_the_profile(
    profile: str,
) -> None:
    path = SHAPED[profile]
    judged = {variant.fault.name: variant.expected_code for variant in _variants(path, profile)}
    expected = {name: code for name, code in _applicable(path).items() if name not in TOLERATED}
    assert judged == expected
    assert set(_applicable(path)) >= TOLERATED  # derived, then left out: not merely absent
    assert len(judged) >= 20


@pytest.mark.parametrize("profile", list(SHAPED))
def test_each_judged_variant_replays_to_its_expectation_under_the_profile(
    profile: str, tmp_path: Path
) -> None:
    for variant in _variants(SHAPED[profile], profile):
        if variant.fault.wire:
            continue  # directives a client acts on (tests/test_openai_faults.py serves them)
        path = tmp_path / f"{variant.fault.name}.jsonl"
        write_cassette(path, variant.events, header={"cassette": 1, "provider": CHAT})
        got = outcome_code(replay_outcome(path, profile=profile))
        assert got == variant.expected_code, variant.fault.name


def test_a_profile_leaves_out_the_tolerated_row_of_an_openai_shaped_stream_too() -> None:
    """OpenAI's own stream under `vllm`: `stop` after its calls is what vLLM sends."""
    good = LIBRARY / "openai" / "chat" / "parallel_tools.jsonl"
    default = {variant.fault.name: variant.expected_code for variant in _variants(good, None)}
    under = {variant.fault.name: variant.expected_code for variant in _variants(good, "vllm")}
    assert default["stop_despite_tool_calls"] == "stop_with_tool_calls"
    assert under == {name: code for name, code in default.items() if name not in TOLERATED}


def test_a_stream_without_call_indexes_gets_no_row_that_breaks_a_call_by_index() -> None:
    """Gemini's pieces carry no `index`: the rows that break a call found by its index do
    not apply, and the rest keep the catalogue's expectation (docs/faults.md)."""
    good = Path(__file__).parent / "data" / "profiles" / "gemini" / "missing_index.jsonl"
    judged = {variant.fault.name: variant.expected_code for variant in _variants(good, "gemini")}
    expectations = {fault.name: fault.expect for fault in catalogue(CHAT)}
    assert {name: expectations[name] for name in judged} == judged
    assert "drop_tool_finish" in judged and "cut_connection_in_tool" in judged
    assert "drop_finish_reason" not in judged  # the answer made calls, without indexes
    assert "truncate_tool_json" not in judged and "stop_despite_tool_calls" not in judged


# -- harness faults --profile ------------------------------------------------------------------


def _faults(*args: str) -> Any:
    return CliRunner().invoke(cli, ["faults", *args])


@pytest.mark.parametrize("profile", list(SHAPED))
def test_cli_writes_the_variants_judged_under_the_profile(profile: str, tmp_path: Path) -> None:
    result = _faults(str(SHAPED[profile]), "--profile", profile, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    printed = dict(reversed(line.split()) for line in result.output.splitlines())
    expected = {name: code for name, code in _applicable(SHAPED[profile]).items()}
    for name in TOLERATED:
        del expected[name]
    stem = SHAPED[profile].stem
    assert printed == {
        str(tmp_path / f"{stem}.{name}{'' if name == 'http_429_then_ok' else '.jsonl'}"): code
        for name, code in expected.items()
    }
    header = Cassette(tmp_path / f"{stem}.drop_done.jsonl").header
    assert header is not None
    assert (header["expect"], header["profile"]) == ("missing_done", profile)
    assert not list(tmp_path.glob("*stop_despite_tool_calls*"))


def test_cli_refuses_a_server_shaped_stream_without_its_profile_naming_those_it_fits(
    tmp_path: Path,
) -> None:
    result = _faults(str(SHAPED["vllm"]), "--out", str(tmp_path))
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"{SHAPED['vllm']}: does not complete (it ends in stop_with_tool_calls); faults need "
        f"a good stream (it does under --profile {', '.join(STOP_READERS)}: docs/profiles.md)"
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--profile", "nope"],
            "--profile: no profile 'nope' for openai-chat (known: openai, azure, vllm,",
        ),
        (["--profile", "vllm", "--list"], "--profile reads GOOD's stream"),
        (
            ["--profile", "vllm", "ANTHROPIC"],
            "--profile: profile 'vllm': profiles are for openai-chat streams, not anthropic",
        ),
        (
            ["--profile", "azure", "VLLM"],
            "does not complete under profile azure (it ends in stop_with_tool_calls)",
        ),
    ],
    ids=["unknown", "with-list", "anthropic-cassette", "another-servers-profile"],
)
def test_cli_bad_profile_use_is_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    shown = {"ANTHROPIC": str(LIBRARY / "two_tools.jsonl"), "VLLM": str(SHAPED["vllm"])}
    given = [shown.get(arg, arg) for arg in args]
    if "--list" not in given and not any(arg.endswith(".jsonl") for arg in given):
        given.insert(0, str(SHAPED["vllm"]))
    result = _faults(*given, "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert len(result.output.splitlines()) == 1 and message in result.output
    assert "Traceback" not in result.output
