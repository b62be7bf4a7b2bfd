"""Cooperative cancellation: each of the six checkpoints, and what is never committed."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import SESSIONS

from harness import DoneEvent, StreamProtocolError, TextEvent, ToolCall, ToolCallEvent
from harness.agent.loop import NOT_EXECUTED, AgentFailed, AgentResult, Checkpoint, run_agent
from harness.agent.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from harness.agent.scripted import ScriptedModelClient, Step
from harness.agent.session import ReplayModelClient, load_session, replay_session, write_session
from harness.agent.signal import AbortController, AbortSignal
from harness.agent.tools import ToolDefinition
from harness.builder import StreamBuilder

FIRST = ToolCall("toolu_1", "note", {"n": 1})
SECOND = ToolCall("toolu_2", "note", {"n": 2})
TWO_CALLS: list[Step] = [
    TextEvent("Two notes."),
    ToolCallEvent(FIRST),
    ToolCallEvent(SECOND),
    DoneEvent(),
]


class Note:
    """A tool that records each input it runs with, and may run an action while it works."""

    definition = ToolDefinition("note", "Record a note.", {"type": "object"})

    def __init__(self, during: Any = None) -> None:
        self.ran: list[Mapping[str, Any]] = []
        self.during = during

    async def execute(self, input: Mapping[str, Any], signal: AbortSignal | None) -> str:
        self.ran.append(input)
        if self.during is not None:
            self.during()
        await asyncio.sleep(0)
        return f"noted {input['n']}"


def answered(result: AgentResult) -> None:
    """Every committed tool_use has its tool_result in the very next message."""
    for position, message in enumerate(result.messages):
        uses = [block.id for block in message.content if isinstance(block, ToolUseBlock)]
        if uses:
            reply = result.messages[position + 1].content
            ids = [block.tool_use_id for block in reply if isinstance(block, ToolResultBlock)]
            assert ids == uses


def not_executed(call: ToolCall) -> ToolResultBlock:
    return ToolResultBlock(call.id, NOT_EXECUTED, is_error=True)


def test_checkpoint_1_abort_before_the_first_turn_sends_no_request() -> None:
    controller = AbortController()
    controller.abort()
    client = ScriptedModelClient([TextEvent("never"), DoneEvent()])
    result = asyncio.run(run_agent(client, prompt="p", signal=controller.signal))
    assert (result.stop_reason, result.checkpoint) == ("aborted", Checkpoint.BEFORE_TURN)
    assert client.requests == []
    assert result.messages == [Message.user_text("p")]


def test_checkpoint_1_abort_after_the_tool_results_commit_starts_no_new_turn() -> None:
    controller = AbortController()

    def abort_on_results(message: Message) -> None:
        if any(isinstance(block, ToolResultBlock) for block in message.content):
            controller.abort()

    client = ScriptedModelClient([ToolCallEvent(FIRST), DoneEvent()], [TextEvent("x"), DoneEvent()])
    result = asyncio.run(
        run_agent(
            client,
            prompt="p",
            tools=[Note()],
            signal=controller.signal,
            on_message=abort_on_results,
        )
    )
    assert (result.checkpoint, len(client.requests)) == (Checkpoint.BEFORE_TURN, 1)
    answered(result)


def test_checkpoint_2_abort_mid_stream_stops_pulling_and_commits_nothing() -> None:
    controller = AbortController()
    turn: list[Step] = [TextEvent("The answer"), controller.abort, TextEvent(" is"), DoneEvent()]
    client = ScriptedModelClient(turn)
    result = asyncio.run(run_agent(client, prompt="p", signal=controller.signal))
    assert (result.stop_reason, result.checkpoint) == ("aborted", Checkpoint.AFTER_EVENT)
    assert result.messages == [Message.user_text("p")]
    assert client.progress == [3]  # the event after the abort arrived; nothing more was pulled


def test_checkpoint_2_abort_directive_in_a_session_keeps_the_earlier_turns() -> None:
    example = SESSIONS / "aborted-answer"
    result, client = asyncio.run(replay_session(load_session(example), example / "files"))
    assert (result.stop_reason, result.checkpoint, result.turns) == (
        "aborted",
        Checkpoint.AFTER_EVENT,
        2,
    )
    assert [message.role for message in result.messages] == ["user", "assistant", "user"]
    assert list(client.requests[1].messages) == result.messages
    answered(result)


def test_abort_after_a_non_cooperative_stream_completes_prevents_the_assistant_commit() -> None:
    controller = AbortController()
    # The stream ignores the signal: it delivers done, then the abort lands before it returns.
    client = ScriptedModelClient([TextEvent("half"), DoneEvent(), controller.abort])
    result = asyncio.run(run_agent(client, prompt="p", signal=controller.signal))
    assert (result.stop_reason, result.checkpoint) == ("aborted", Checkpoint.BEFORE_COMMIT)
    assert result.messages == [Message.user_text("p")]


def test_a_stream_failing_after_the_abort_counts_as_aborted_not_failed() -> None:
    controller = AbortController()
    # A client that drops its connection on abort, and then breaks off mid-message.
    error = StreamProtocolError("missing_message_stop")
    client = ScriptedModelClient([TextEvent("half"), controller.abort, error])
    result = asyncio.run(run_agent(client, prompt="p", signal=controller.signal))
    assert (result.stop_reason, result.checkpoint) == ("aborted", Checkpoint.BEFORE_COMMIT)
    assert result.messages == [Message.user_text("p")]


def test_checkpoint_4_abort_at_the_assistant_commit_answers_every_call_as_not_executed() -> None:
    controller = AbortController()

    def abort_on_assistant(message: Message) -> None:
        if message.role == "assistant":
            controller.abort()

    tool = Note()
    result = asyncio.run(
        run_agent(
            ScriptedModelClient(TWO_CALLS),
            prompt="p",
            tools=[tool],
            signal=controller.signal,
            on_message=abort_on_assistant,
        )
    )
    assert (result.stop_reason, result.checkpoint) == ("aborted", Checkpoint.BEFORE_TOOL)
    assert tool.ran == []
    assert result.messages[-1] == Message("user", (not_executed(FIRST), not_executed(SECOND)))


def test_abort_before_the_second_of_two_tool_calls_answers_it_as_not_executed() -> None:
    controller = AbortController()
    tool = Note(during=controller.abort)  # the user stops while the first call runs
    result = asyncio.run(
        run_agent(
            ScriptedModelClient(TWO_CALLS), prompt="p", tools=[tool], signal=controller.signal
        )
    )
    assert (result.stop_reason, result.checkpoint) == ("aborted", Checkpoint.AFTER_TOOL)
    assert tool.ran == [{"n": 1}]
    assert result.messages[-1] == Message(
        "user", (ToolResultBlock("toolu_1", "noted 1"), not_executed(SECOND))
    )


def test_checkpoint_5_abort_during_approval_runs_nothing() -> None:
    controller = AbortController()

    async def approve(call: ToolCall) -> bool:
        controller.abort()
        return True

    tool = Note()
    result = asyncio.run(
        run_agent(
            ScriptedModelClient(TWO_CALLS),
            prompt="p",
            tools=[tool],
            signal=controller.signal,
            approve=approve,
        )
    )
    assert (result.stop_reason, result.checkpoint) == ("aborted", Checkpoint.AFTER_APPROVAL)
    assert tool.ran == []
    assert result.messages[-1].content == (not_executed(FIRST), not_executed(SECOND))


def test_a_denied_call_is_answered_and_the_loop_goes_on() -> None:
    async def approve(call: ToolCall) -> bool:
        return call.id != FIRST.id

    tool = Note()
    client = ScriptedModelClient(TWO_CALLS, [TextEvent("Only the second."), DoneEvent()])
    result = asyncio.run(run_agent(client, prompt="p", tools=[tool], approve=approve))
    assert result.stop_reason == "complete"
    assert tool.ran == [{"n": 2}]
    results = client.requests[1].messages[-1].content
    assert results == (
        ToolResultBlock("toolu_1", "denied: the call was not approved", is_error=True),
        ToolResultBlock("toolu_2", "noted 2"),
    )
    assert result.messages[-1] == Message("assistant", (TextBlock("Only the second."),))


def test_checkpoint_6_abort_during_the_last_tool_keeps_its_result_and_stops() -> None:
    controller = AbortController()
    client = ScriptedModelClient([ToolCallEvent(FIRST), DoneEvent()], [TextEvent("x"), DoneEvent()])
    result = asyncio.run(
        run_agent(
            client, prompt="p", tools=[Note(during=controller.abort)], signal=controller.signal
        )
    )
    assert (result.checkpoint, len(client.requests)) == (Checkpoint.AFTER_TOOL, 1)
    assert result.messages[-1] == Message("user", (ToolResultBlock("toolu_1", "noted 1"),))


def test_a_protocol_error_in_turn_2_keeps_turn_1(tmp_path: Path) -> None:
    turn_1 = StreamBuilder().tool(0, "read", {"path": "a.txt"}, id="toolu_first").stop("tool_use")
    turn_2 = StreamBuilder().text(0, "Partial answer").json_delta(0, '{"x"').stop("end_turn")
    folder = write_session(
        tmp_path / "s", [("reads a file", turn_1), ("orphan json delta", turn_2)], prompt="p"
    )
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "a.txt").write_text("alpha")
    with pytest.raises(AgentFailed) as failed:
        asyncio.run(replay_session(load_session(folder), tmp_path / "files"))
    error = failed.value.error
    assert isinstance(error, StreamProtocolError) and error.code == "orphan_json_delta"
    assert failed.value.turn == 2
    assert failed.value.messages == [
        Message.user_text("p"),
        Message("assistant", (ToolUseBlock("toolu_first", "read", {"path": "a.txt"}),)),
        Message("user", (ToolResultBlock("toolu_first", "alpha"),)),
    ]


def test_a_hanging_stream_is_not_preempted_by_the_signal(tmp_path: Path) -> None:
    turn = StreamBuilder().text_delta(0, "Thinking").directive("hang").text_delta(0, "...")
    folder = write_session(tmp_path / "s", [("hangs after one delta", turn.stop())], prompt="p")
    controller = AbortController()
    client = ReplayModelClient(load_session(folder).turns, controller)

    async def abort_then_wait() -> None:
        run = asyncio.ensure_future(run_agent(client, prompt="p", signal=controller.signal))
        await asyncio.sleep(0.05)
        controller.abort()
        # The loop is parked in the stream's await: only cancelling the task ends it.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(run, timeout=0.2)
        assert run.cancelled()

    asyncio.run(abort_then_wait())
    assert controller.signal.aborted
