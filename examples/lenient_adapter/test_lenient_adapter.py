"""The harness's fault catalogue run against lenient_adapter (set in pytest.ini).

`fault_variant` parametrises the test over the catalogue, one test id a fault; each
derives a broken variant of the good cassette and runs it through the adapter. The rows
the adapter does not handle fail, each with a short report saying what was expected.
"""

import pytest

from harness import DoneEvent, FaultCase, Outcome, TextEvent, ToolCall, ToolCallEvent


@pytest.mark.cassette("weather")
def test_the_good_stream_gives_text_then_the_tool_call(harness_replay: Outcome) -> None:
    assert harness_replay.error is None
    assert harness_replay.events == [
        TextEvent("Let me check "),
        TextEvent("the weather."),
        ToolCallEvent(
            ToolCall(
                "toolu_01HarnessSynthetic01x1",
                "get_weather",
                {"city": "Lisbon", "unit": "celsius"},
            )
        ),
        DoneEvent(),
    ]


@pytest.mark.cassette("weather")
def test_the_adapter_catches(fault_variant: FaultCase) -> None:
    fault_variant.assert_caught()
