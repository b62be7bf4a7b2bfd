"""The turn loop: what it commits, what it sends back, and when a run fails or stops."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness import DoneEvent, TextEvent, ToolCall, ToolCallEvent
from harness.agent.loop import AgentFailed, EmptyTurnError, run_agent
from harness.agent.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from harness.agent.scripted import ScriptedModelClient, Step
from harness.agent.session import ReplayModelClient, write_session
from harness.agent.signal import AbortSignal
from harness.agent.tools import ReadTool, ToolDefinition
from harness.builder import StreamBuilder

READ_A = ToolCall("toolu_a", "read", {"path": "a.txt"})
READ_B = ToolCall("toolu_b", "read", {"path": "b.txt"})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    return root


class Crashing:
    """A tool with a bug: it raises something other than ToolError."""

    definition = ToolDefinition("crash", "Always fails.", {"type": "object"})

    async def execute(self, input: Mapping[str, Any], signal: AbortSignal | None) -> str:
        raise KeyError("boom")


def test_a_text_answer_completes_after_one_turn() -> None:
    client = ScriptedModelClient([TextEvent("Hel"), TextEvent("lo."), DoneEvent()])
    result = asyncio.run(run_agent(client, prompt="Hi"))
    assert result.stop_reason == "complete"
    assert result.turns == 1
    assert result.messages == [
        Message.user_text("Hi"),
        Message("assistant", (TextBlock("Hello."),)),
    ]


def test_tool_results_are_sent_back_in_the_next_request(workspace: Path) -> None:
    client = ScriptedModelClient(
        [TextEvent("Reading."), ToolCallEvent(READ_A), ToolCallEvent(READ_B), DoneEvent()],
        [TextEvent("Done."), DoneEvent()],
    )
    result = asyncio.run(run_agent(client, prompt="Read", tools=[ReadTool(workspace)]))
    assert result.stop_reason == "complete"
    assistant = Message(
        "assistant",
        (TextBlock("Reading."), ToolUseBlock.from_call(READ_A), ToolUseBlock.from_call(READ_B)),
    )
    results = Message(
        "user", (ToolResultBlock("toolu_a", "alpha\n"), ToolResultBlock("toolu_b", "beta\n"))
    )
    assert list(client.requests[1].messages) == [Message.user_text("Read"), assistant, results]
    assert result.messages[-1] == Message("assistant", (TextBlock("Done."),))


def test_the_request_carries_system_tools_and_signal(workspace: Path) -> None:
    client = ScriptedModelClient([TextEvent("ok"), DoneEvent()])
    signal = AbortSignal()
    tool = ReadTool(workspace)
    asyncio.run(run_agent(client, prompt="p", system="sys", tools=[tool], signal=signal))
    request = client.requests[0]
    assert (request.system, request.tools, request.signal) == ("sys", (tool.definition,), signal)


def test_a_tool_error_becomes_an_is_error_result_and_the_loop_goes_on(workspace: Path) -> None:
    missing = ToolCall("toolu_m", "read", {"path": "missing.txt"})
    client = ScriptedModelClient(
        [ToolCallEvent(missing), DoneEvent()], [TextEvent("No such file."), DoneEvent()]
    )
    result = asyncio.run(run_agent(client, prompt="p", tools=[ReadTool(workspace)]))
    assert result.stop_reason == "complete"
    assert result.messages[2] == Message(
        "user", (ToolResultBlock("toolu_m", "missing.txt: no such file", is_error=True),)
    )


def test_a_crashing_tool_and_an_unknown_tool_are_both_answered_as_errors() -> None:
    crash = ToolCall("toolu_c", "crash", {})
    unknown = ToolCall("toolu_u", "write", {})
    client = ScriptedModelClient(
        [ToolCallEvent(crash), ToolCallEvent(unknown), DoneEvent()], [TextEvent("ok"), DoneEvent()]
    )
    result = asyncio.run(run_agent(client, prompt="p", tools=[Crashing()]))
    assert result.messages[2].content == (
        ToolResultBlock("toolu_c", "KeyError: 'boom'", is_error=True),
        ToolResultBlock("toolu_u", "unknown tool: write", is_error=True),
    )


def test_a_turn_with_no_text_and_no_call_raises_and_commits_nothing() -> None:
    client = ScriptedModelClient([DoneEvent()])
    with pytest.raises(AgentFailed) as failed:
        asyncio.run(run_agent(client, prompt="p"))
    assert isinstance(failed.value.error, EmptyTurnError)
    assert failed.value.messages == [Message.user_text("p")]
    assert failed.value.turn == 1


def test_a_stream_ending_without_done_is_not_committed() -> None:
    client = ScriptedModelClient([TextEvent("half an answer")])
    with pytest.raises(AgentFailed, match="ended without a done event"):
        asyncio.run(run_agent(client, prompt="p"))


def test_max_turns_stops_the_loop_with_every_call_answered(workspace: Path) -> None:
    turn: list[Step] = [ToolCallEvent(READ_A), DoneEvent()]
    client = ScriptedModelClient(turn, turn, turn)
    result = asyncio.run(run_agent(client, prompt="p", tools=[ReadTool(workspace)], max_turns=2))
    assert (result.stop_reason, result.turns, len(client.requests)) == ("max_turns", 2, 2)
    assert result.messages[-1] == Message("user", (ToolResultBlock("toolu_a", "alpha\n"),))


def test_max_turns_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_turns"):
        asyncio.run(run_agent(ScriptedModelClient(), prompt="p", max_turns=0))


def test_on_message_sees_each_commit_in_order(workspace: Path) -> None:
    client = ScriptedModelClient(
        [ToolCallEvent(READ_A), DoneEvent()], [TextEvent("ok"), DoneEvent()]
    )
    seen: list[Message] = []
    result = asyncio.run(
        run_agent(client, prompt="p", tools=[ReadTool(workspace)], on_message=seen.append)
    )
    assert seen == result.messages
    assert [message.role for message in seen] == ["user", "assistant", "user", "assistant"]


def test_an_api_error_mid_stream_fails_the_run_as_the_sdk_raises_it(tmp_path: Path) -> None:
    from anthropic import APIStatusError

    broken = StreamBuilder().text_delta(0, "partial").error("overloaded_error", "Overloaded")
    session = write_session(tmp_path / "s", [("api error mid-stream", broken)], prompt="p")
    client = ReplayModelClient(sorted(session.glob("turn-*.jsonl")))
    with pytest.raises(AgentFailed) as failed:
        asyncio.run(run_agent(client, prompt="p"))
    assert isinstance(failed.value.error, APIStatusError)
    assert failed.value.messages == [Message.user_text("p")]
