"""Write the OpenAI agent sessions: Anthropic's example tasks, recorded for Chat and Responses.

    python tests/data/agent_sessions/generate_sessions.py            # rewrite the sessions in place
    python tests/data/agent_sessions/generate_sessions.py OUT_DIR    # write them elsewhere

Each task of `TASKS` is a session of `cassettes/sessions/` (same `session.json`, same
texts, same tool calls, run on the same `<session>/files/`), written again as an
`openai-chat/<task>/` and an `openai-responses/<task>/` session folder. Each turn's
header holds the request that turn answers (`request`), in its API's shape, written out
here from the script and the tools' results, not by the model clients: it is what
`tests/test_agent_providers.py` holds `OpenAIChatModelClient` and
`OpenAIResponsesModelClient` to. Ids are each API's own (`call_...`), not Anthropic's.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import make_header, write_cassette
from harness._cassette.sessions import SESSION_FILE, turn_path
from harness.agent.tools import TOOL_FACTORIES, ToolError

HERE = Path(__file__).resolve().parent
SESSIONS = HERE.parent.parent.parent / "cassettes" / "sessions"
MODEL = "gpt-4.1-mini"
CHAT = "openai-chat"
RESPONSES = "openai-responses"
#: Chat's `data: [DONE]`, as a cassette holds it
DONE: dict[str, Any] = {"harness": "done"}

Lines = list[dict[str, Any]]


@dataclass(frozen=True)
class Call:
    ident: str  # without the `call_` prefix
    name: str
    input: dict[str, Any]

    @property
    def call_id(self) -> str:
        return f"call_{self.ident}"

    @property
    def arguments(self) -> str:
        return json.dumps(self.input)


@dataclass(frozen=True)
class Turn:
    """One assistant turn: its text in the pieces it streams in, then its calls."""

    name: str  # the turn's id stem: `chatcmpl-<name>`, `resp_<name>`
    text: tuple[str, ...] = ()
    calls: tuple[Call, ...] = ()
    description: str = ""


def read(ident: str, path: str) -> Call:
    return Call(ident, "read", {"path": path})


#: task (a session of cassettes/sessions/) -> its turns, as that session's generate.py has them
TASKS: dict[str, tuple[Turn, ...]] = {
    "read-notes": (
        Turn(
            "01ReadNotesTurn1",
            ("I'll read", " the release notes."),
            (read("01ReadNotesMd", "notes.md"),),
            "text, then one read call",
        ),
        Turn(
            "01ReadNotesTurn2",
            ("Release 0.2 adds", " session replay and", " fixes the ping handling."),
            description="the final answer",
        ),
    ),
    "compare-configs": (
        Turn(
            "01CompareTurn1",
            ("Reading both configs at once.",),
            (read("01CompareDev", "config/dev.toml"), read("01CompareProd", "config/prod.toml")),
            "two read calls in one turn",
        ),
        Turn(
            "01CompareTurn2",
            calls=(read("01CompareStaging", "config/staging.toml"),),
            description="a read of a missing file",
        ),
        Turn(
            "01CompareTurn3",
            ("dev uses 2 workers and debug logging; prod uses 16 workers.", " No staging config."),
            description="the answer after a tool error",
        ),
    ),
}


def results(task: str, turn: Turn) -> list[tuple[Call, str]]:
    """Each call's result, the real tool run on the task's files (an error's text as is)."""
    root = SESSIONS / task / "files"
    found = []
    for call in turn.calls:
        tool = TOOL_FACTORIES[call.name](root)
        try:
            content = asyncio.run(tool.execute(call.input, None))
        except ToolError as error:
            content = str(error)
        found.append((call, content))
    return found


# Chat Completions ------------------------------------------------------------------------


def chat_request(config: dict[str, Any], task: str, done: tuple[Turn, ...]) -> dict[str, Any]:
    """The `chat.completions.create` body that asks for the turn after `done`."""
    messages: Lines = [
        {"role": "system", "content": config["system"]},
        {"role": "user", "content": config["prompt"]},
    ]
    for turn in done:
        answer: dict[str, Any] = {"role": "assistant", "content": "".join(turn.text) or None}
        if turn.calls:
            answer["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in turn.calls
            ]
        messages.append(answer)
        for call, content in results(task, turn):
            messages.append({"role": "tool", "tool_call_id": call.call_id, "content": content})
    tools = [{"type": "function", "function": tool_definition(name)} for name in config["tools"]]
    return {"model": MODEL, "messages": messages, "tools": tools}


def chat_turn(turn: Turn) -> Lines:
    """The chunks of one answer: the role, the text pieces, each call's pieces, the finish."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{turn.name}",
            "object": "chat.completion.chunk",
            "created": 1767225600,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    lines = [chunk({"role": "assistant", "content": ""})]
    lines.extend(chunk({"content": piece}) for piece in turn.text)
    for index, call in enumerate(turn.calls):
        opening = {"arguments": "", "name": call.name}
        pieces = [{"index": index, "id": call.call_id, "type": "function", "function": opening}]
        half = len(call.arguments) // 2
        for part in (call.arguments[:half], call.arguments[half:]):
            pieces.append({"index": index, "function": {"arguments": part}})
        lines.extend(chunk({"tool_calls": [piece]}) for piece in pieces)
    lines.append(chunk({}, "tool_calls" if turn.calls else "stop"))
    return [*lines, DONE]


# Responses ------------------------------------------------------------------------------


def responses_request(config: dict[str, Any], task: str, done: tuple[Turn, ...]) -> dict[str, Any]:
    """The `responses.create` body that asks for the turn after `done`."""
    items: Lines = [{"role": "user", "content": config["prompt"]}]
    for turn in done:
        if turn.text:
            items.append({"role": "assistant", "content": "".join(turn.text)})
        items.extend(
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            }
            for call in turn.calls
        )
        items.extend(
            {"type": "function_call_output", "call_id": call.call_id, "output": content}
            for call, content in results(task, turn)
        )
    tools = [
        {"type": "function", **tool_definition(name), "strict": False} for name in config["tools"]
    ]
    return {"model": MODEL, "instructions": config["system"], "input": items, "tools": tools}


def responses_turn(turn: Turn) -> Lines:
    """The events of one answer: created, a message item (its text), a function_call item
    per call, completed; each numbered in turn."""
    lines: Lines = []
    response_id = f"resp_{turn.name}"

    def add(kind: str, **fields: Any) -> None:
        lines.append({"type": kind, "sequence_number": len(lines), **fields})

    def response(status: str) -> dict[str, Any]:
        return {"id": response_id, "object": "response", "model": MODEL, "status": status}

    add("response.created", response={**response("in_progress"), "output": []})
    add("response.in_progress", response={**response("in_progress"), "output": []})
    index = 0
    if turn.text:
        ident = f"msg_{turn.name}"
        item = {"type": "message", "id": ident, "role": "assistant", "status": "in_progress"}
        at = {"item_id": ident, "output_index": index, "content_index": 0}
        text = "".join(turn.text)
        empty = {"type": "output_text", "text": "", "annotations": []}
        add("response.output_item.added", output_index=index, item={**item, "content": []})
        add("response.content_part.added", **at, part=empty)
        for piece in turn.text:
            add("response.output_text.delta", **at, delta=piece)
        add("response.output_text.done", **at, text=text)
        add("response.content_part.done", **at, part={**empty, "text": text})
        full = {**item, "status": "completed", "content": [{**empty, "text": text}]}
        add("response.output_item.done", output_index=index, item=full)
        index += 1
    for call in turn.calls:
        ident = f"fc_{call.ident}"
        item = {
            "type": "function_call",
            "id": ident,
            "call_id": call.call_id,
            "name": call.name,
            "arguments": "",
            "status": "in_progress",
        }
        at = {"item_id": ident, "output_index": index}
        add("response.output_item.added", output_index=index, item=item)
        half = len(call.arguments) // 2
        for part in (call.arguments[:half], call.arguments[half:]):
            add("response.function_call_arguments.delta", **at, delta=part)
        add("response.function_call_arguments.done", **at, arguments=call.arguments)
        done = {**item, "arguments": call.arguments, "status": "completed"}
        add("response.output_item.done", output_index=index, item=done)
        index += 1
    add("response.completed", response=response("completed"))
    return lines


# ----------------------------------------------------------------------------------------


def tool_definition(name: str) -> dict[str, Any]:
    """A tool's `name`, `description` and JSON Schema `parameters`."""
    definition = TOOL_FACTORIES[name](SESSIONS).definition
    return {
        "name": definition.name,
        "description": definition.description,
        "parameters": definition.input_schema,
    }


WRITERS = {CHAT: (chat_request, chat_turn), RESPONSES: (responses_request, responses_turn)}


def write(out: Path) -> None:
    for task, turns in TASKS.items():
        config = json.loads((SESSIONS / task / SESSION_FILE).read_text(encoding="utf-8"))
        for name, (request, answer) in WRITERS.items():
            folder = out / name / task
            folder.mkdir(parents=True, exist_ok=True)
            text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
            (folder / SESSION_FILE).write_text(text, encoding="utf-8")
            for number, turn in enumerate(turns, start=1):
                description = f"{task} turn {number} ({name}): {turn.description}"
                body = request(config, task, turns[: number - 1])
                header = make_header(description, request=body, provider=name)
                assert header["request"] == body, "a recorded request is kept as written"
                write_cassette(turn_path(folder, number), answer(turn), header=header)


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
