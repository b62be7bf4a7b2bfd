"""Write the agent sessions: Anthropic's example tasks, recorded for each other dialect.

    python tests/data/agent_sessions/generate_sessions.py            # rewrite the sessions in place
    python tests/data/agent_sessions/generate_sessions.py OUT_DIR    # write them elsewhere

Each task of `TASKS` is a session of `cassettes/sessions/` (same `session.json`, same
texts, same tool calls, run on the same `<session>/files/`), written again as an
`openai-chat/<task>/`, `openai-responses/<task>/`, `bedrock-converse/<task>/` and
`gemini/<task>/` session folder. Each turn's header holds the request that turn answers
(`request`), in its API's shape (with the model its path names, `model`, where the path
names it), written out here from the script and the tools' results, not by the model
clients: it is what `tests/test_agent_providers.py` holds `OpenAIChatModelClient`,
`OpenAIResponsesModelClient`, `BedrockConverseModelClient` and `GeminiModelClient` to.
Ids are each API's own (`call_...`, `tooluse_...`), not Anthropic's; Gemini gives its
ids in `read-notes` and none in `compare-configs` (the adapter's `call_0`, `call_1`,
and `call_0` again the next turn), so that both ways a call is answered are recorded.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
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
CONVERSE = "bedrock-converse"
GEMINI = "gemini"
CONVERSE_MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
GEMINI_MODEL = "gemini-2.5-flash"
#: the tasks whose Gemini answers carry the API's call ids (the others' calls have none)
GEMINI_IDS = {"read-notes"}
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


def results(task: str, turn: Turn) -> list[tuple[Call, str, bool]]:
    """Each call's result, the real tool run on the task's files (an error's text as is),
    and whether it failed."""
    root = SESSIONS / task / "files"
    found = []
    for call in turn.calls:
        tool = TOOL_FACTORIES[call.name](root)
        try:
            found.append((call, asyncio.run(tool.execute(call.input, None)), False))
        except ToolError as error:
            found.append((call, str(error), True))
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
        for call, content, _ in results(task, turn):
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
            for call, content, _ in results(task, turn)
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


# Bedrock ConverseStream -----------------------------------------------------------------


def converse_request(config: dict[str, Any], task: str, done: tuple[Turn, ...]) -> dict[str, Any]:
    """The ConverseStream request that asks for the turn after `done` (`model` the
    path's `modelId`)."""
    messages: Lines = [{"role": "user", "content": [{"text": config["prompt"]}]}]
    for turn in done:
        content: Lines = [{"text": "".join(turn.text)}] if turn.text else []
        content.extend(
            {"toolUse": {"toolUseId": converse_id(call), "name": call.name, "input": call.input}}
            for call in turn.calls
        )
        messages.append({"role": "assistant", "content": content})
        answers: Lines = []
        for call, text, failed in results(task, turn):
            result = {"toolUseId": converse_id(call), "content": [{"text": text}]}
            if failed:
                result["status"] = "error"
            answers.append({"toolResult": result})
        messages.append({"role": "user", "content": answers})
    tools = [
        {
            "toolSpec": {
                "name": definition["name"],
                "description": definition["description"],
                "inputSchema": {"json": definition["parameters"]},
            }
        }
        for definition in map(tool_definition, config["tools"])
    ]
    return {
        "model": CONVERSE_MODEL,
        "messages": messages,
        "system": [{"text": config["system"]}],
        "toolConfig": {"tools": tools},
    }


def converse_id(call: Call) -> str:
    return f"tooluse_{call.ident}"


def converse_turn(turn: Turn) -> Lines:
    """The events of one answer: the start, the text block's deltas (no start: Bedrock
    sends none for text), a start, two input pieces and a stop a call, the stop, usage."""
    lines: Lines = [{"messageStart": {"role": "assistant"}}]
    index = 0
    if turn.text:
        for piece in turn.text:
            lines.append(
                {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": piece}}}
            )
        lines.append({"contentBlockStop": {"contentBlockIndex": index}})
        index += 1
    for call in turn.calls:
        use = {"toolUseId": converse_id(call), "name": call.name}
        lines.append({"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": use}}})
        half = len(call.arguments) // 2
        for part in (call.arguments[:half], call.arguments[half:]):
            delta = {"toolUse": {"input": part}}
            lines.append({"contentBlockDelta": {"contentBlockIndex": index, "delta": delta}})
        lines.append({"contentBlockStop": {"contentBlockIndex": index}})
        index += 1
    lines.append({"messageStop": {"stopReason": "tool_use" if turn.calls else "end_turn"}})
    usage = {"inputTokens": 120, "outputTokens": 24, "totalTokens": 144}
    lines.append({"metadata": {"usage": usage, "metrics": {"latencyMs": 400}}})
    return lines


# Gemini ---------------------------------------------------------------------------------


def gemini_request(config: dict[str, Any], task: str, done: tuple[Turn, ...]) -> dict[str, Any]:
    """The `streamGenerateContent` body that asks for the turn after `done` (`model` the
    path's), as google-genai sends it: a call's `id` only where the API gave one."""
    contents: Lines = [{"role": "user", "parts": [{"text": config["prompt"]}]}]
    for turn in done:
        parts: Lines = [{"text": "".join(turn.text)}] if turn.text else []
        for call in turn.calls:
            function_call = {"name": call.name, "args": call.input}
            parts.append({"functionCall": {**function_call, **gemini_id(task, call)}})
        contents.append({"role": "model", "parts": parts})
        answers: Lines = []
        for call, content, failed in results(task, turn):
            response = {"name": call.name, "response": {"error" if failed else "output": content}}
            answers.append({"functionResponse": {**response, **gemini_id(task, call)}})
        contents.append({"role": "user", "parts": answers})
    declarations = [
        {
            "name": definition["name"],
            "description": definition["description"],
            "parameters_json_schema": definition["parameters"],
        }
        for definition in map(tool_definition, config["tools"])
    ]
    return {
        "model": GEMINI_MODEL,
        "contents": contents,
        "systemInstruction": {"parts": [{"text": config["system"]}]},
        "tools": [{"functionDeclarations": declarations}],
        "generationConfig": {},  # google-genai sends it whenever it is given a config
    }


def gemini_id(task: str, call: Call) -> dict[str, str]:
    """`{"id": ...}` where the API gave the call one, else nothing (its id `call_N`)."""
    return {"id": call.ident.lower()} if task in GEMINI_IDS else {}


def gemini_turn(task: str, turn: Turn) -> Lines:
    """The chunks of one answer: a text piece each, the calls in one chunk, then the
    finish (`STOP`, even with calls, and an empty text part), usage on each."""

    def chunk(parts: Lines, **fields: Any) -> dict[str, Any]:
        candidate = {"content": {"parts": parts, "role": "model"}, **fields, "index": 0}
        usage = {"promptTokenCount": 120, "candidatesTokenCount": 24, "totalTokenCount": 144}
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": GEMINI_MODEL,
            "responseId": f"{turn.name}Gemini",
        }

    lines = [chunk([{"text": piece}]) for piece in turn.text]
    if turn.calls:
        calls = [
            {"functionCall": {"name": call.name, "args": call.input, **gemini_id(task, call)}}
            for call in turn.calls
        ]
        lines.append(chunk(calls))
    lines.append(chunk([{"text": ""}], finishReason="STOP"))
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


def only_turn(write: Callable[[Turn], Lines]) -> Callable[[str, Turn], Lines]:
    """A turn's writer that needs no task (all but Gemini's, whose ids are the task's)."""
    return lambda task, turn: write(turn)


WRITERS: dict[str, tuple[Callable[..., dict[str, Any]], Callable[[str, Turn], Lines]]] = {
    CHAT: (chat_request, only_turn(chat_turn)),
    RESPONSES: (responses_request, only_turn(responses_turn)),
    CONVERSE: (converse_request, only_turn(converse_turn)),
    GEMINI: (gemini_request, gemini_turn),
}


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
                write_cassette(turn_path(folder, number), answer(task, turn), header=header)


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
