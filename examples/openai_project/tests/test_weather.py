"""The weather assistant, offline: a recorded two-turn session, then every broken last turn."""

from __future__ import annotations

import pytest
from openai import OpenAI
from weather import ask

from harness import CapturedRequest, FaultCase

QUESTION = "What is the weather in Paris?"


# cassettes/weather/: turn-01 asks for get_weather; turn-02's header holds the request the
# code must send back (the call and its result), compared before it is answered.
@pytest.mark.cassette("weather")
def test_the_answer_comes_after_the_tool_result(
    harness_client: OpenAI, harness_requests: list[CapturedRequest]
) -> None:
    assert ask(harness_client, QUESTION) == "It is 18 degrees and cloudy in Paris."
    assert harness_requests[1].json["messages"][-1]["role"] == "tool"


# Each row of the catalogue breaks the last turn; the strict client must refuse it.
@pytest.mark.cassette("weather", strict=True)
def test_a_broken_answer_never_passes_for_one(
    harness_client: OpenAI, fault_variant: FaultCase
) -> None:
    with fault_variant.expect_failure():
        ask(harness_client, QUESTION)
