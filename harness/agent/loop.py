"""`run_agent`: the turn loop, with cooperative cancellation observed at six checkpoints.

One turn, and where the abort signal is looked at (as in docs/agent.md):

    turn starts
      (1) BEFORE_TURN     aborted? -> return aborted
    async for event in client.stream(request):
      (2) AFTER_EVENT     aborted? -> return aborted (the event is not absorbed)
    stream ended
      (3) BEFORE_COMMIT   aborted? -> return aborted (a stream that finished anyway,
                          or failed once the signal was set, is not committed)
    commit the assistant message (no text and no call -> EmptyTurnError)
    for call in calls:
      (4) BEFORE_TOOL     aborted? -> this call and the rest: "aborted before execution"
          approval callback (may deny: a denied result, the loop goes on)
      (5) AFTER_APPROVAL  aborted? -> this call and the rest: "aborted before execution"
          tool.execute(input, signal)
      (6) AFTER_TOOL      aborted? -> the rest: "aborted before execution"
    commit the tool results; next turn

Cancellation is cooperative: the loop never preempts an await. A client that ignores
the signal holds the loop until its next event or its end; checkpoints (2) and (3) then
make sure nothing received after the abort is committed. The rule at each checkpoint
is "commit less, never more": a partial assistant turn (aborted or broken by a protocol
error) is never committed, and every committed `tool_use` gets its `tool_result`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from harness._events import DoneEvent, TextEvent, ToolCall, ToolCallEvent
from harness._exceptions import AgentFailed, EmptyTurnError, ToolError
from harness.agent.client import ModelClient, ModelRequest
from harness.agent.messages import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock
from harness.agent.signal import AbortSignal
from harness.agent.tools import Tool

__all__ = [
    "DENIED",
    "NOT_EXECUTED",
    "AgentFailed",
    "AgentResult",
    "Approve",
    "Checkpoint",
    "EmptyTurnError",
    "run_agent",
]

NOT_EXECUTED = "aborted before execution"
DENIED = "denied: the call was not approved"

StopReason = Literal["complete", "aborted", "max_turns"]

#: Approval callback: True runs the call, False answers it with a denied result.
Approve = Callable[[ToolCall], Awaitable[bool]]


class Checkpoint(StrEnum):
    """Where the loop observed an abort; numbered as in the module docstring."""

    BEFORE_TURN = "before_turn"
    AFTER_EVENT = "after_event"
    BEFORE_COMMIT = "before_commit"
    BEFORE_TOOL = "before_tool"
    AFTER_APPROVAL = "after_approval"
    AFTER_TOOL = "after_tool"


@dataclass(slots=True)
class AgentResult:
    """The committed conversation and why the loop stopped (`checkpoint` when aborted)."""

    messages: list[Message]
    stop_reason: StopReason
    turns: int
    checkpoint: Checkpoint | None = None


@dataclass(slots=True)
class _Turn:
    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    done: bool = False


def _aborted(signal: AbortSignal | None) -> bool:
    return signal is not None and signal.aborted


async def run_agent(
    client: ModelClient,
    *,
    prompt: str,
    tools: Sequence[Tool] = (),
    system: str = "",
    max_turns: int = 10,
    signal: AbortSignal | None = None,
    approve: Approve | None = None,
    on_message: Callable[[Message], object] | None = None,
) -> AgentResult:
    """Run the conversation from `prompt` until the model answers without a call.

    `on_message` sees each message as it is committed (to show or persist the transcript).
    Raises `AgentFailed` when a turn's stream fails (a `StreamProtocolError`, an API
    error, an `EmptyTurnError`); the partial turn is never committed.
    """
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    messages: list[Message] = []

    def commit(message: Message) -> None:
        messages.append(message)
        if on_message is not None:
            on_message(message)

    commit(Message.user_text(prompt))
    definitions = tuple(tool.definition for tool in tools)
    by_name = {tool.definition.name: tool for tool in tools}
    turns = 0
    while True:
        if _aborted(signal):
            return AgentResult(messages, "aborted", turns, Checkpoint.BEFORE_TURN)
        if turns == max_turns:
            return AgentResult(messages, "max_turns", turns)
        turns += 1
        request = ModelRequest(system, tuple(messages), definitions, signal)
        try:
            turn = await _stream_turn(client, request)
        except Exception as error:
            if _aborted(signal):  # a stream broken by the abort itself: still an abort
                return AgentResult(messages, "aborted", turns, Checkpoint.BEFORE_COMMIT)
            raise AgentFailed(error, messages, turns) from error
        if isinstance(turn, Checkpoint):
            return AgentResult(messages, "aborted", turns, turn)
        text = "".join(turn.text)
        content: list[ContentBlock] = [TextBlock(text)] if text else []
        content.extend(ToolUseBlock.from_call(call) for call in turn.calls)
        commit(Message("assistant", tuple(content)))
        if not turn.calls:
            return AgentResult(messages, "complete", turns)
        results, stopped_at = await _run_calls(turn.calls, by_name, signal, approve)
        commit(Message("user", tuple(results)))
        if stopped_at is not None:
            return AgentResult(messages, "aborted", turns, stopped_at)


async def _stream_turn(client: ModelClient, request: ModelRequest) -> _Turn | Checkpoint:
    """Collect one turn's events; a checkpoint when the abort was seen, else the whole turn."""
    signal = request.signal
    turn = _Turn()
    stream = client.stream(request)
    try:
        async for event in stream:
            if _aborted(signal):
                return Checkpoint.AFTER_EVENT
            if isinstance(event, TextEvent):
                turn.text.append(event.text)
            elif isinstance(event, ToolCallEvent):
                turn.calls.append(event.call)
            elif isinstance(event, DoneEvent):
                turn.done = True
    finally:
        # Close at once (not at garbage collection) so the client releases its stream.
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    if _aborted(signal):
        return Checkpoint.BEFORE_COMMIT
    if not turn.done:
        raise EmptyTurnError("the model stream ended without a done event")
    if not turn.text and not turn.calls:
        raise EmptyTurnError("the assistant turn had no text and no tool call")
    return turn


async def _run_calls(
    calls: Sequence[ToolCall],
    by_name: dict[str, Tool],
    signal: AbortSignal | None,
    approve: Approve | None,
) -> tuple[list[ToolResultBlock], Checkpoint | None]:
    """One result per call, in order; the checkpoint that stopped execution, if any."""
    results: list[ToolResultBlock] = []

    def not_executed(rest: Sequence[ToolCall]) -> list[ToolResultBlock]:
        return [ToolResultBlock(call.id, NOT_EXECUTED, is_error=True) for call in rest]

    for position, call in enumerate(calls):
        if _aborted(signal):
            return results + not_executed(calls[position:]), Checkpoint.BEFORE_TOOL
        if approve is not None:
            allowed = await approve(call)
            if _aborted(signal):
                return results + not_executed(calls[position:]), Checkpoint.AFTER_APPROVAL
            if not allowed:
                results.append(ToolResultBlock(call.id, DENIED, is_error=True))
                continue
        results.append(await _execute(call, by_name.get(call.name), signal))
        if _aborted(signal):
            return results + not_executed(calls[position + 1 :]), Checkpoint.AFTER_TOOL
    return results, None


async def _execute(
    call: ToolCall, tool: Tool | None, signal: AbortSignal | None
) -> ToolResultBlock:
    """Run one call; any failure of the tool becomes an `is_error` result for the model."""
    if tool is None:
        return ToolResultBlock(call.id, f"unknown tool: {call.name}", is_error=True)
    try:
        content = await tool.execute(call.input, signal)
    except ToolError as error:
        return ToolResultBlock(call.id, str(error), is_error=True)
    except Exception as error:
        # A tool's bug must not leave its tool_use unanswered: report it to the model.
        return ToolResultBlock(call.id, f"{type(error).__name__}: {error}", is_error=True)
    return ToolResultBlock(call.id, content)
