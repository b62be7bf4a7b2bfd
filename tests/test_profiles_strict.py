"""`harness.strict(client, profile=...)` and `StrictTransport(profile=)`: each profile's
cassettes through the guarded openai SDK client give the canonical answer direct replay
reads (a profile's deviation handed on in OpenAI's form), or raise its code."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import not_installed

openai = pytest.importorskip("openai", reason=not_installed("openai"))

from test_profiles import CASES, cassette_of  # noqa: E402
from test_strict_openai import ASK, _client, _frame, _lines, _server  # noqa: E402

from harness import Cassette, InputError, StreamProtocolError, StrictTransport  # noqa: E402
from harness._events import TextEvent, ToolCallEvent  # noqa: E402
from harness._providers.openai_chat.profiles import Deviation, Profile  # noqa: E402
from harness._replay.direct import collect, replay  # noqa: E402


def _chunks(path: Any) -> list[bytes]:
    return [_frame(line, "chat") for line in _lines(path)]


def _canonical(path: Any, name: str) -> tuple[str, list[tuple[str, str, Any]]]:
    """The text and calls direct replay reads under the profile."""
    events = collect(replay(Cassette(path), sdk_objects=False, profile=name)).events
    text = "".join(event.text for event in events if isinstance(event, TextEvent))
    calls = [
        (event.call.id, event.call.name, event.call.input)
        for event in events
        if isinstance(event, ToolCallEvent)
    ]
    return text, calls


@pytest.mark.parametrize(("found", "deviation"), CASES)
def test_the_guarded_sdk_gets_the_canonical_answer(found: Profile, deviation: Deviation) -> None:
    path = cassette_of(found.name, deviation.name)
    client = _client(_server(_chunks(path)), profile=found.name)
    if deviation.profiled != "done":
        with (
            pytest.raises(Exception) as caught,  # the SDK's own error, or ours
            client.chat.completions.stream(**ASK) as stream,
        ):
            stream.get_final_completion()
        chain = [caught.value, caught.value.__cause__, caught.value.__context__]
        if deviation.profiled.startswith("api_error:"):
            assert any(isinstance(error, openai.APIError) for error in chain)
        else:
            found_codes = [getattr(error, "code", None) for error in chain]
            assert deviation.profiled in found_codes
        return
    with client.chat.completions.stream(**ASK) as stream:
        completion = stream.get_final_completion()
    message = completion.choices[0].message
    text, calls = _canonical(path, found.name)
    assert (message.content or "") == text
    got = [
        (call.id, call.function.name, json.loads(call.function.arguments))
        for call in message.tool_calls or []
    ]
    assert got == calls
    assert completion.choices[0].finish_reason == ("tool_calls" if calls else "stop")


@pytest.mark.parametrize(("found", "deviation"), CASES)
def test_without_the_profile_the_guard_refuses_what_the_default_refuses(
    found: Profile, deviation: Deviation
) -> None:
    if deviation.default == "done" or deviation.default.startswith("api_error:"):
        pytest.skip("the default reads it: no refusal to see")
    path = cassette_of(found.name, deviation.name)
    with (
        pytest.raises(StreamProtocolError) as caught,
        _client(_server(_chunks(path))).chat.completions.stream(**ASK) as stream,
    ):
        stream.get_final_completion()
    assert caught.value.code == deviation.default


def test_openrouters_annotations_crash_the_sdk_helper_unless_the_profile_indexes_them() -> None:
    """`delta.annotations` without `index` on two chunks: the SDK's accumulator raises
    (the default guard hands them on as they are); under `openrouter` each is numbered
    and the repeat dropped, so the helper gathers the two citations once each."""
    chunks = _chunks(cassette_of("openrouter", "annotations_without_index"))
    with (
        pytest.raises(RuntimeError, match="`index` key"),
        _client(_server(chunks)).chat.completions.stream(**ASK) as stream,
    ):
        stream.get_final_completion()
    client = _client(_server(chunks), profile="openrouter")
    with client.chat.completions.stream(**ASK) as stream:
        message = stream.get_final_completion().choices[0].message
    assert [found.url_citation.url for found in message.annotations or []] == [
        "https://en.wikipedia.org/wiki/Paris",
        "https://en.wikipedia.org/wiki/Seine",
    ]


def test_mistrals_parts_are_handed_on_as_text_and_reasoning() -> None:
    client = _client(_server(_chunks(cassette_of("mistral", "content_parts"))), profile="mistral")
    deltas = [
        chunk.choices[0].delta
        for chunk in client.chat.completions.create(**ASK, stream=True)
        if chunk.choices
    ]
    assert all(delta.content is None or type(delta.content) is str for delta in deltas)
    assert "".join(delta.content or "" for delta in deltas) == "Paris is the capital of France."
    thinking = [(delta.model_extra or {}).get("reasoning_content") for delta in deltas]
    assert "".join(filter(None, thinking)) == "The user asks for a capital."


def test_groqs_chunks_are_handed_on_with_the_first_ones_id() -> None:
    path = cassette_of("groq", "varying_chunk_ids")
    client = _client(_server(_chunks(path)), profile="groq")
    idents = {chunk.id for chunk in client.chat.completions.create(**ASK, stream=True)}
    assert idents == {_lines(path)[0]["id"]}


def test_an_unknown_profile_is_refused_at_the_api() -> None:
    with pytest.raises(InputError, match="known: openai, azure"):
        _client(_server([]), profile="nope")
    with pytest.raises(ValueError, match="known: openai"):
        StrictTransport(_server([]), profile="nope")


def test_strict_transport_takes_a_profile() -> None:
    path = cassette_of("gemini", "missing_index")
    transport = StrictTransport(_server(_chunks(path)), profile="gemini")
    client = openai.OpenAI(
        api_key="test-key",
        base_url="https://api.example.test/v1",
        max_retries=0,
        http_client=__import__("httpx2").Client(transport=transport),
    )
    with client.chat.completions.stream(**ASK) as stream:
        calls = stream.get_final_completion().choices[0].message.tool_calls
    assert [call.id for call in calls] == ["call_01Paris", "call_02Rome"]


PLUGIN_TEST = """
import pytest

@pytest.mark.cassette("stop_with_tool_calls", match_on=None, strict=True)
def test_calls(harness_client):
    with harness_client.chat.completions.stream(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "Weather?"}]
    ) as stream:
        message = stream.get_final_completion().choices[0].message
    assert [call.id for call in message.tool_calls] == ["call_01Weather"]
"""


@pytest.fixture
def plugin_project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\naddopts = --strict-markers -p no:cacheprovider\n")
    folder = pytester.path / "cassettes"
    folder.mkdir()
    source = cassette_of("vllm", "stop_with_tool_calls")
    (folder / "stop_with_tool_calls.jsonl").write_bytes(source.read_bytes())
    pytester.makepyfile(test_inner=PLUGIN_TEST)
    return pytester


@pytest.mark.slow
def test_the_plugin_strict_clients_take_a_profile(plugin_project: pytest.Pytester) -> None:
    plugin_project.runpytest().assert_outcomes(failed=1)  # the default refuses `stop`
    plugin_project.runpytest("--harness-profile", "vllm").assert_outcomes(passed=1)
    plugin_project.makeini(
        "[pytest]\naddopts = --strict-markers -p no:cacheprovider\nharness_profile = vllm\n"
    )
    plugin_project.runpytest().assert_outcomes(passed=1)


@pytest.mark.slow
def test_the_plugin_refuses_an_unknown_profile(plugin_project: pytest.Pytester) -> None:
    result = plugin_project.runpytest("--harness-profile", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "known: openai, azure" in "\n".join(result.errlines)
