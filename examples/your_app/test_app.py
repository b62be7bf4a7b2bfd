"""The app's own functions, tested with no glue: cassette-backed clients, faults, retries."""

from __future__ import annotations

import asyncio

import pytest
from anthropic import Anthropic, AsyncAnthropic
from app import agent_step, classify, summarize

from harness import CapturedRequest, FaultCase
from harness.snapshot import OutcomeOrValueSnapshot

REPORT = "Q3 report: sales grew 4%, costs were flat, two stores opened."


@pytest.mark.cassette("summary")
def test_summary(harness_client: Anthropic) -> None:
    assert summarize(harness_client, REPORT) == "The report finds sales up 4% and costs flat."


@pytest.mark.cassette("summary")
def test_summary_request(
    harness_client: Anthropic, harness_requests: list[CapturedRequest]
) -> None:
    summarize(harness_client, REPORT)
    (request,) = harness_requests
    assert request.json["system"] == "Summarize in one paragraph."
    assert request.json["messages"] == [{"role": "user", "content": REPORT}]
    assert request.json["stream"] is True
    assert "x-api-key" not in request.headers


@pytest.mark.cassette("summary")
def test_summary_snapshot(
    harness_client: Anthropic, snapshot_outcome: OutcomeOrValueSnapshot
) -> None:
    assert summarize(harness_client, REPORT) == snapshot_outcome


@pytest.mark.cassette("busy")
def test_summary_survives_two_overloaded_answers(
    harness_client: Anthropic, harness_requests: list[CapturedRequest]
) -> None:
    assert summarize(harness_client, REPORT).startswith("The report finds")
    assert len(harness_requests) == 3  # the SDK's own retries, at the cassettes' retry-after-ms


@pytest.mark.cassette("summary")
def test_summarize_notices_a_broken_stream(
    harness_client: Anthropic, fault_variant: FaultCase
) -> None:
    with fault_variant.expect_failure():
        summarize(harness_client, REPORT)


@pytest.mark.cassette("tools")
def test_agent_step_asks_for_both_tools(harness_async_client: AsyncAnthropic) -> None:
    calls = asyncio.run(agent_step(harness_async_client, "Weather and time in Lisbon?"))
    assert [(call.name, call.input) for call in calls] == [
        ("get_weather", {"city": "Lisbon", "unit": "celsius"}),
        ("get_time", {"timezone": "Europe/Lisbon"}),
    ]


@pytest.mark.cassette("tools")
def test_agent_step_notices_a_broken_stream(
    harness_async_client: AsyncAnthropic, fault_variant: FaultCase
) -> None:
    with fault_variant.expect_failure():
        asyncio.run(agent_step(harness_async_client, "Weather and time in Lisbon?"))


@pytest.mark.cassette("label")
def test_classify_from_a_plain_call(harness_client: Anthropic) -> None:
    assert classify(harness_client, "Loved it, would buy again.") == "positive"


@pytest.mark.cassette("label")
def test_classify_notices_a_failed_call(
    harness_client: Anthropic, fault_variant: FaultCase
) -> None:
    with fault_variant.expect_failure():
        classify(harness_client, "Loved it, would buy again.")
