"""A first test of OpenAI streaming code, offline: docs/openai.md walks through it.

`summarise_weather` stands for your own code: it streams a Chat Completions answer and
returns the tool calls it asked for. The test answers it from a cassette with a real
`openai.OpenAI`, then runs it against every broken variant of the same stream, guarded
by `harness.strict`, which must refuse each one before the code sees it complete.

    pytest examples/python/test_openai_first.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness
from harness import StreamProtocolError, cassette_client

CASSETTE = Path(__file__).resolve().parents[2] / "cassettes/openai/chat/one_tool.jsonl"


def summarise_weather(client: Any) -> list[tuple[str, dict[str, Any]]]:
    """Your code: the calls a streamed answer asks for, as (name, arguments)."""
    with client.chat.completions.stream(
        model="gpt-4.1-mini",
        messages=[{"role": "user", "content": "What's the weather in Paris?"}],
    ) as stream:
        completion = stream.get_final_completion()
    calls = completion.choices[0].message.tool_calls or []
    return [(call.function.name, json.loads(call.function.arguments)) for call in calls]


def test_the_recorded_answer_asks_for_the_weather() -> None:
    client = cassette_client(CASSETTE, sdk="openai")
    assert summarise_weather(client) == [("get_weather", {"city": "Paris"})]


def _variants() -> list[harness.faults.Variant]:
    events = harness.faults.stream_lines(CASSETTE)
    return harness.faults.derive_variants(events, provider="openai-chat")


@pytest.mark.parametrize("variant", _variants(), ids=lambda v: v.fault.name)
def test_a_broken_stream_never_reaches_the_code_as_an_answer(
    variant: harness.faults.Variant, tmp_path: Path
) -> None:
    header = harness.make_header(description=variant.fault.description, provider="openai-chat")
    cassettes = []
    for number, lines in enumerate(variant.responses):
        path = tmp_path / f"{number}.jsonl"
        harness.write_cassette(path, lines, header=header)
        cassettes.append(path)
    client = harness.strict(cassette_client(cassettes, sdk="openai", max_retries=1, timeout=0.5))
    if variant.expected_code == "done":  # a row the SDK's retries recover from
        assert summarise_weather(client) == [("get_weather", {"city": "Paris"})]
        return
    with pytest.raises(Exception) as caught:  # the SDK's own error, or the guard's
        summarise_weather(client)
    chain = [caught.value, caught.value.__cause__, caught.value.__context__]
    protocol = [error for error in chain if isinstance(error, StreamProtocolError)]
    if variant.expected_code.startswith(("api_error:", "connection_error:")):
        assert not protocol  # the API's own error or a dropped connection, raised as such
    else:
        assert protocol and protocol[0].code == variant.expected_code
