"""Compatible servers as named profiles (docs/profiles.md): every profile's every
deviation has a cassette, replaying to what the profile's data says under it and to the
default's code without it; the default loosens nothing; bad names are one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import LIBRARY, ROOT

from harness import Cassette, StreamProtocolError, replay_outcome
from harness._events import TextEvent, ToolCallEvent
from harness._providers import provider
from harness._providers.openai_chat.adapter import DONE, ChatAdapter
from harness._providers.openai_chat.profiles import (
    DEVIATIONS,
    OPENAI,
    PROFILES,
    Deviation,
    Profile,
    profile,
)
from harness._replay.direct import collect, replay
from harness._testing.coverage import outcome_code
from harness_cli.main import cli

PROFILES_FOLDER = Path(__file__).parent / "data" / "profiles"
CASES = [
    pytest.param(found, DEVIATIONS[name], id=f"{found.name}/{name}")
    for found in PROFILES.values()
    for name in found.deviations
]


def cassette_of(found_name: str, deviation_name: str) -> Path:
    return PROFILES_FOLDER / found_name / f"{deviation_name}.jsonl"


def code_under(path: Path, name: str | None) -> str:
    return outcome_code(collect(replay(Cassette(path), sdk_objects=False, profile=name)))


@pytest.mark.parametrize(("found", "deviation"), CASES)
def test_each_deviation_replays_as_its_data_says(found: Profile, deviation: Deviation) -> None:
    """Under its profile: `profiled`; under the default: `default` (a new deviation
    without a cassette fails here)."""
    path = cassette_of(found.name, deviation.name)
    assert path.is_file(), f"no cassette for {found.name}/{deviation.name}"
    assert code_under(path, found.name) == deviation.profiled
    assert code_under(path, None) == deviation.default
    assert outcome_code(replay_outcome(path)) == deviation.default


def test_every_profile_cassette_is_a_profile_deviation() -> None:
    """No stray cassette: each file names a profile and one of its deviations."""
    for path in PROFILES_FOLDER.rglob("*.jsonl"):
        assert path.stem in PROFILES[path.parent.name].deviations, path


def test_the_default_loosens_nothing() -> None:
    assert PROFILES["openai"] is OPENAI
    assert not OPENAI.stop_finishes_calls and not OPENAI.unindexed_pieces
    assert not OPENAI.content_parts and not OPENAI.varying_chunk_ids
    assert not OPENAI.indexed_annotations
    assert OPENAI.deviations == ()


def test_profiles_read_a_deviation_only_when_they_say_so() -> None:
    """A deviation a profile does not list keeps the default's code under it."""
    for found in PROFILES.values():
        for name, deviation in DEVIATIONS.items():
            if name in found.deviations or deviation.default == deviation.profiled:
                continue
            for listed in PROFILES.values():
                if name in listed.deviations:
                    path = cassette_of(listed.name, name)
                    assert code_under(path, found.name) == deviation.default, (found.name, name)
                    break


def test_missing_index_reads_calls_in_order() -> None:
    path = cassette_of("gemini", "missing_index")
    events = collect(replay(Cassette(path), sdk_objects=False, profile="gemini")).events
    calls = [event.call for event in events if isinstance(event, ToolCallEvent)]
    assert [(call.id, call.input) for call in calls] == [
        ("call_01Paris", {"city": "Paris"}),
        ("call_02Rome", {"city": "Rome"}),
    ]


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_an_unindexed_piece_with_two_calls_open_is_refused() -> None:
    """Which call it continues is a guess: the profile still refuses it."""
    adapter = ChatAdapter(profile=profile("gemini"))
    for ident in ("a", "b"):
        opening = {"id": ident, "function": {"name": "f", "arguments": ""}}
        adapter.feed(_chunk({"tool_calls": [opening]}))
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed(_chunk({"tool_calls": [{"function": {"arguments": "{}"}}]}))
    assert caught.value.code == "incomplete_tool_call_start"


def test_mistral_reads_text_parts_and_passes_thinking_and_references_over() -> None:
    adapter = ChatAdapter(profile=profile("mistral"))
    parts = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "Hm."}]},
        {"type": "text", "text": "Paris"},
        {"type": "reference", "reference_ids": [1]},
        {"type": "text", "text": ""},
        {"type": "text", "text": "."},
    ]
    assert adapter.feed(_chunk({"content": parts})) == [TextEvent("Paris"), TextEvent(".")]


@pytest.mark.parametrize(
    ("part", "shape"),
    [
        ({"type": "image_url", "image_url": "x"}, "a list with a part of type 'image_url'"),
        ("Paris", "a list with a part of type null"),
    ],
    ids=["unknown-type", "not-an-object"],
)
def test_mistral_refuses_a_part_it_cannot_read(part: object, shape: str) -> None:
    """Passing it over could drop the answer: still `non_string_content`."""
    with pytest.raises(StreamProtocolError) as caught:
        ChatAdapter(profile=profile("mistral")).feed(_chunk({"content": [part]}))
    assert (caught.value.code, caught.value.fields["shape"]) == ("non_string_content", shape)
    with pytest.raises(StreamProtocolError, match="is an object"):
        ChatAdapter(profile=profile("mistral")).feed(_chunk({"content": {"type": "text"}}))


def test_varying_chunk_ids_still_read_one_answer() -> None:
    """Under `groq`, the ids are not compared; everything else is (a second choice)."""
    adapter = ChatAdapter(profile=profile("groq"))
    assert adapter.feed({**_chunk({"content": "a"}), "id": "one"}) == [TextEvent("a")]
    assert adapter.feed({**_chunk({"content": "b"}), "id": "two"}) == [TextEvent("b")]
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed({"id": "stub", "choices": [{"index": 1, "delta": {}}]})
    assert caught.value.code == "multiple_choices"


def test_stop_read_as_tool_calls_still_checks_the_calls() -> None:
    """`stop` is read as `tool_calls`: a call whose arguments do not parse still fails."""
    adapter = ChatAdapter(profile=profile("vllm"))
    opening = {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{"}}
    adapter.feed(_chunk({"tool_calls": [opening]}))
    with pytest.raises(StreamProtocolError) as caught:
        adapter.feed(_chunk({}, "stop"))
    assert caught.value.code == "invalid_tool_json"
    fine = ChatAdapter(profile=profile("vllm"))
    fine.feed(_chunk({"tool_calls": [{**opening, "function": {"name": "f", "arguments": "{}"}}]}))
    assert [type(event) for event in fine.feed(_chunk({}, "stop"))] == [ToolCallEvent]
    assert fine.finish_reason == "tool_calls"
    fine.feed(DONE)
    fine.finish()


def test_an_unknown_profile_is_a_value_error_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: openai, azure"):
        profile("nope")
    with pytest.raises(ValueError, match="not anthropic"):
        provider("anthropic").adapter_options("vllm")
    with pytest.raises(ValueError, match="not openai-responses"):
        provider("openai-responses").adapter_options("vllm")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_replay_profile_on_the_command_line() -> None:
    path = str(cassette_of("vllm", "stop_with_tool_calls"))
    code, out, _ = run("replay", "--profile", "vllm", path)
    assert code == 0 and out.splitlines()[-1] == "done"
    code, out, _ = run("replay", path)
    assert code == 1 and "stop_with_tool_calls" in out


def test_replay_bad_profile_is_one_line_and_exit_2() -> None:
    path = str(cassette_of("vllm", "stop_with_tool_calls"))
    code, _, err = run("replay", "--profile", "nope", path)
    assert code == 2 and "known: openai, azure" in err and "Traceback" not in err
    code, _, err = run("replay", "--profile", "vllm", str(LIBRARY / "text_only.jsonl"))
    assert code == 2 and err.count("\n") == 1 and "not anthropic" in err
    code, _, err = run("replay", "--profile", "vllm", "--via", "sdk", path)
    assert code == 2 and "--profile replays directly" in err


def test_the_docs_table_shows_each_profiles_deviations_with_one_of_their_sources() -> None:
    # docs/profiles.md: a row a profile and deviation, its source one of the deviation's.
    rows = [
        line.split(" | ")
        for line in (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `") and "`: " in line
    ]
    shown = {(row[0].split("`")[1], row[1].split("`")[1]): row[-1].strip(" |<>") for row in rows}
    expected = {
        (name, deviation) for name, found in PROFILES.items() for deviation in found.deviations
    }
    assert set(shown) == expected
    for (name, deviation), source in shown.items():
        assert source in DEVIATIONS[deviation].sources, (name, deviation, source)
