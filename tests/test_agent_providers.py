"""The vendor seam, proven: one scripted task, recorded for Anthropic and for each other
dialect (OpenAI's Chat Completions and Responses, Bedrock's ConverseStream, Gemini),
gives the same agent result and the same tool calls; the loop does not change.

The tasks are the example sessions of `cassettes/sessions/`, written again for each
dialect by `tests/data/agent_sessions/generate_sessions.py`, each turn's header holding
the request it answers in that API's shape. They run three ways: session replay
(`harness agent`, `replay_session`), each dialect's model client over a stand-in SDK
that serves the turns' lines, and the OpenAI clients over the real `openai` SDK, its
HTTP answered in-process with the SSE bytes of the turns (every client over its real
SDK, in-process and against `harness serve`: `tests/test_agent_hosts.py`).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT, SESSIONS

from harness import read_cassette, write_cassette
from harness._cassette.sessions import turn_files
from harness.agent import (
    AbortController,
    AgentResult,
    BedrockConverseModelClient,
    GeminiModelClient,
    Message,
    OpenAIChatModelClient,
    OpenAIResponsesModelClient,
    ReadTool,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    run_agent,
)
from harness.agent.dialect import DialectModelClient
from harness.agent.messages import messages_to_api
from harness.agent.session import load_session, replay_session
from harness_cli.main import cli

OPENAI_SESSIONS = ROOT / "tests" / "data" / "agent_sessions"
TASKS = sorted(path.name for path in (OPENAI_SESSIONS / "openai-chat").iterdir())
CLIENTS: dict[str, type[DialectModelClient[Any]]] = {
    "openai-chat": OpenAIChatModelClient,
    "openai-responses": OpenAIResponsesModelClient,
    "bedrock-converse": BedrockConverseModelClient,
    "gemini": GeminiModelClient,
}
PROVIDERS = sorted(CLIENTS)
OPENAI = ["openai-chat", "openai-responses"]


def session_folder(provider: str, task: str) -> Path:
    return SESSIONS / task if provider == "anthropic" else OPENAI_SESSIONS / provider / task


def files(task: str) -> Path:
    return SESSIONS / task / "files"


def without_ids(messages: list[Message]) -> list[Any]:
    """The conversation with each call's id replaced by its number, and each result's by
    its call's: ids are each API's own (Gemini's may come again in a later turn)."""
    ids: dict[str, str] = {}
    calls = 0

    found: list[Any] = []
    for message in messages:
        blocks: list[Any] = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                calls += 1
                ids[block.id] = f"call-{calls}"
                blocks.append(ToolUseBlock(ids[block.id], block.name, block.input))
            elif isinstance(block, ToolResultBlock):
                blocks.append(
                    ToolResultBlock(ids[block.tool_use_id], block.content, block.is_error)
                )
            else:
                blocks.append(block)
        found.append((message.role, blocks))
    return found


def summary(result: AgentResult) -> tuple[Any, ...]:
    return (result.stop_reason, result.turns, result.checkpoint, without_ids(result.messages))


def anthropic_result(task: str) -> AgentResult:
    result, _ = asyncio.run(replay_session(load_session(SESSIONS / task), files(task)))
    return result


def recorded_requests(provider: str, task: str) -> list[dict[str, Any]]:
    requests = []
    for path in turn_files(session_folder(provider, task)):
        header = read_cassette(path).header
        assert header is not None and header["provider"] == provider
        requests.append(header["request"])
    return requests


def event_lines(path: Path) -> list[dict[str, Any]]:
    """A turn's `data` objects as the SDK hands them out (`[DONE]` is consumed by it)."""
    return [line.data for line in read_cassette(path).lines() if line.kind == "event"]


def tool_calls(result: AgentResult) -> list[tuple[str, dict[str, Any]]]:
    return [
        (block.name, block.input)
        for message in result.messages
        for block in message.content
        if isinstance(block, ToolUseBlock)
    ]


@pytest.mark.slow
def test_the_sessions_are_exactly_what_their_script_writes(tmp_path: Path) -> None:
    generate = OPENAI_SESSIONS / "generate_sessions.py"
    subprocess.run([sys.executable, str(generate), str(tmp_path)], check=True)

    def tree(root: Path) -> dict[str, bytes]:
        return {
            str(path.relative_to(root)): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and path.suffix in (".json", ".jsonl")
        }

    written = tree(tmp_path)
    assert written == tree(OPENAI_SESSIONS)
    assert len([name for name in written if name.endswith(".jsonl")]) == len(PROVIDERS) * 5


@pytest.mark.parametrize("task", TASKS)
def test_every_provider_gives_the_same_result_through_session_replay(task: str) -> None:
    expected = anthropic_result(task)
    assert expected.stop_reason == "complete"
    assert tool_calls(expected), "a task that proves the seam makes tool calls"
    for provider in PROVIDERS:
        session = load_session(session_folder(provider, task))
        result, client = asyncio.run(replay_session(session, files(task)))
        assert summary(result) == summary(expected), provider
        assert tool_calls(result) == tool_calls(expected)
        assert len(client.requests) == result.turns


@pytest.mark.parametrize("task", TASKS)
def test_harness_agent_prints_the_same_conversation_for_every_provider(task: str) -> None:
    reports = {}
    for provider in ["anthropic", *PROVIDERS]:
        args = [session_folder(provider, task), "--root", files(task), "--format", "json"]
        result = CliRunner().invoke(cli, ["agent", *map(str, args)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        reports[provider] = (report, _numbered(report.pop("messages")))
    for provider in PROVIDERS:
        assert reports[provider] == reports["anthropic"], provider


def _numbered(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON conversation with each call's id its number, each result's its call's."""
    ids: dict[str, str] = {}
    calls = 0
    for message in messages:
        for block in message["content"]:
            if block["type"] == "tool_use":
                calls += 1
                ids[block["id"]] = f"call-{calls}"
                block["id"] = ids[block["id"]]
            elif block["type"] == "tool_result":
                block["tool_use_id"] = ids[block["tool_use_id"]]
    return messages


class FakeStream:
    """What an async SDK's streamed call returns: the turn's objects, then `close()`
    (openai's) or `aclose()` (google-genai's async generator)."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.closed = False

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[dict[str, Any]]:
        for item in self.items:
            await asyncio.sleep(0)
            yield item

    async def close(self) -> None:
        self.closed = True

    aclose = close


class FakeEventStream:
    """What boto3's `converse_stream()["stream"]` is: the turn's events, iterated in
    whatever thread asks, then `close()`."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        self.closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.items)

    def close(self) -> None:
        self.closed = True


class FakeSDK:
    """A stand-in for each SDK's client: `AsyncOpenAI`'s `chat.completions.create` and
    `responses.create`, boto3's `converse_stream`, google-genai's
    `aio.models.generate_content_stream`. Each records its request as a cassette keeps
    it (the model its path names as `model`, google-genai's `config` back in its body)
    and answers with the session's turns in order."""

    def __init__(self, turns: list[Path]) -> None:
        self.turns = turns
        self.calls: list[dict[str, Any]] = []
        self.streams: list[FakeStream | FakeEventStream] = []
        self.chat = self.completions = self.responses = self
        self.aio = self.models = self

    def _answer(self, request: dict[str, Any], stream: type[FakeStream | FakeEventStream]) -> Any:
        self.calls.append(request)
        self.streams.append(stream(event_lines(self.turns[len(self.calls) - 1])))
        return self.streams[-1]

    async def create(self, *, stream: bool, **params: Any) -> FakeStream:
        assert stream is True
        found: FakeStream = self._answer(params, FakeStream)
        return found

    def converse_stream(self, *, modelId: str, **params: Any) -> dict[str, Any]:
        return {"stream": self._answer({"model": modelId, **params}, FakeEventStream)}

    async def generate_content_stream(
        self, *, model: str, contents: Any, config: dict[str, Any] | None = None
    ) -> FakeStream:
        request = {"model": model, "contents": contents}
        if config:  # google-genai sends a `generationConfig` whenever given a config
            request["generationConfig"] = {}
        for key, value in (config or {}).items():
            if key in ("systemInstruction", "tools"):
                request[key] = value
            else:
                request["generationConfig"][key] = value
        found: FakeStream = self._answer(request, FakeStream)
        return found


def run_task(client: Any, task: str, **options: Any) -> AgentResult:
    session = load_session(SESSIONS / task)
    return asyncio.run(
        run_agent(
            client,
            prompt=session.prompt,
            tools=[ReadTool(files(task))],
            system=session.system,
            max_turns=session.max_turns,
            **options,
        )
    )


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("task", TASKS)
def test_the_model_client_sends_each_turns_recorded_request(provider: str, task: str) -> None:
    sdk = FakeSDK(turn_files(session_folder(provider, task)))
    result = run_task(CLIENTS[provider](sdk), task)
    assert summary(result) == summary(anthropic_result(task))
    assert sdk.calls == recorded_requests(provider, task)
    assert all(stream.closed for stream in sdk.streams)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_abort_mid_answer_closes_the_sdk_stream_and_commits_nothing(provider: str) -> None:
    sdk = FakeSDK(turn_files(session_folder(provider, "read-notes")))
    controller = AbortController()
    client = CLIENTS[provider](sdk)
    committed: list[Message] = []

    def on_message(message: Message) -> None:
        committed.append(message)
        if len(committed) == 3:  # the first turn's results: abort during the second turn
            asyncio.get_running_loop().call_soon(controller.abort, "stop")

    result = run_task(client, "read-notes", signal=controller.signal, on_message=on_message)
    assert result.stop_reason == "aborted"
    assert result.turns == 2
    assert [message.role for message in result.messages] == ["user", "assistant", "user"]
    assert all(stream.closed for stream in sdk.streams)


def test_the_conversation_maps_to_each_apis_shape() -> None:
    messages = [
        Message.user_text("Read a.txt."),
        Message("assistant", (ToolUseBlock("call_1", "read", {"path": "a.txt"}),)),
        Message(
            "user",
            (ToolResultBlock("call_1", "a.txt: no such file", is_error=True), TextBlock("Go.")),
        ),
    ]
    from harness.agent.client import ModelRequest

    request = ModelRequest("Be brief.", tuple(messages), (ReadTool(".").definition,))
    chat = OpenAIChatModelClient(object(), model="m", max_tokens=64)  # type: ignore[arg-type]
    params = chat.request_params(request)
    assert params["max_completion_tokens"] == 64
    assert params["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Read a.txt."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt: no such file"},
        {"role": "user", "content": "Go."},
    ]
    assert params["tools"][0]["function"]["parameters"] == ReadTool(".").definition.input_schema
    responses = OpenAIResponsesModelClient(object(), model="m")  # type: ignore[arg-type]
    params = responses.request_params(request)
    assert "max_output_tokens" not in params
    assert params["instructions"] == "Be brief."
    assert params["input"] == [
        {"role": "user", "content": "Read a.txt."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read",
            "arguments": '{"path": "a.txt"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "a.txt: no such file"},
        {"role": "user", "content": "Go."},
    ]
    assert params["tools"][0]["name"] == "read"
    converse = BedrockConverseModelClient(object(), model="m", max_tokens=64).request_params(
        request
    )
    assert converse["system"] == [{"text": "Be brief."}]
    assert converse["inferenceConfig"] == {"maxTokens": 64}
    assert converse["messages"] == [
        {"role": "user", "content": [{"text": "Read a.txt."}]},
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "call_1", "name": "read", "input": {"path": "a.txt"}}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "call_1",
                        "content": [{"text": "a.txt: no such file"}],
                        "status": "error",
                    }
                },
                {"text": "Go."},
            ],
        },
    ]
    spec = converse["toolConfig"]["tools"][0]["toolSpec"]
    assert spec["inputSchema"] == {"json": ReadTool(".").definition.input_schema}
    gemini = GeminiModelClient(object(), model="m").request_params(request)  # type: ignore[arg-type]
    assert gemini["generationConfig"] == {}  # as google-genai sends it given a config
    assert gemini["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    call = {"name": "read", "args": {"path": "a.txt"}}
    answer = {"name": "read", "response": {"error": "a.txt: no such file"}}
    assert gemini["contents"] == [
        {"role": "user", "parts": [{"text": "Read a.txt."}]},
        {"role": "model", "parts": [{"functionCall": {**call, "id": "call_1"}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {**answer, "id": "call_1"}}, {"text": "Go."}],
        },
    ]
    declaration = gemini["tools"][0]["functionDeclarations"][0]
    assert declaration["parameters_json_schema"] == ReadTool(".").definition.input_schema
    # an id the adapter made (`call_0` at position 0, the API gave none) is not sent back
    made = [
        messages[0],
        Message("assistant", (ToolUseBlock("call_0", "read", {"path": "a.txt"}),)),
        Message("user", (ToolResultBlock("call_0", "# A"),)),
    ]
    sent = GeminiModelClient(object(), max_tokens=8).request_params(  # type: ignore[arg-type]
        ModelRequest("", tuple(made), ())
    )
    assert sent["model"] == "gemini-2.5-flash"
    assert sent["generationConfig"] == {"maxOutputTokens": 8}
    assert sent["contents"][1:] == [
        {"role": "model", "parts": [{"functionCall": call}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "read", "response": {"output": "# A"}}}],
        },
    ]
    assert "systemInstruction" not in sent and "tools" not in sent
    bare = GeminiModelClient(object()).request_params(ModelRequest("", tuple(made), ()))  # type: ignore[arg-type]
    assert "generationConfig" not in bare
    assert messages_to_api(messages)[0] == {
        "role": "user",
        "content": [{"type": "text", "text": "Read a.txt."}],
    }


# The real SDK, in-process ----------------------------------------------------------------


def sse_body(provider: str, path: Path) -> bytes:
    """A turn as the API sends it: Chat `data: <json>` frames and `data: [DONE]`;
    Responses `event: <type>` + `data: <json>` frames."""
    frames = []
    for line in read_cassette(path).lines():
        if line.kind != "event":
            assert line.data == {"harness": "done"}, line.data
            frames.append("data: [DONE]\n\n")
            continue
        data = json.dumps(line.data)
        if provider == "openai-chat":
            frames.append(f"data: {data}\n\n")
        else:
            frames.append(f"event: {line.data['type']}\ndata: {data}\n\n")
    return "".join(frames).encode()


@pytest.mark.parametrize("provider", OPENAI)
@pytest.mark.parametrize("task", TASKS)
def test_the_model_client_works_over_the_real_openai_sdk(provider: str, task: str) -> None:
    openai = pytest.importorskip("openai")
    httpx2 = pytest.importorskip("httpx2")
    turns = turn_files(session_folder(provider, task))
    bodies: list[dict[str, Any]] = []
    paths: list[str] = []

    def answer(request: Any) -> Any:
        bodies.append(json.loads(request.content))
        paths.append(request.url.path)
        body = sse_body(provider, turns[len(bodies) - 1])
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async def run() -> AgentResult:
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
        sdk = openai.AsyncOpenAI(
            api_key="not-a-key", base_url="http://openai.test/v1", http_client=http, max_retries=0
        )
        async with http:
            session = load_session(SESSIONS / task)
            return await run_agent(
                CLIENTS[provider](sdk),
                prompt=session.prompt,
                tools=[ReadTool(files(task))],
                system=session.system,
                max_turns=session.max_turns,
            )

    result = asyncio.run(run())
    assert summary(result) == summary(anthropic_result(task))
    endpoint = "/v1/chat/completions" if provider == "openai-chat" else "/v1/responses"
    assert paths == [endpoint] * len(turns)
    assert all(body.pop("stream") is True for body in bodies)
    assert bodies == recorded_requests(provider, task)


def test_an_openai_sessions_directives_act_on_the_loop(tmp_path: Path) -> None:
    """An abort directive in an OpenAI turn aborts the run there, as in an Anthropic one;
    an `http_error` turn fails it with the API's error, exit 1."""
    source = OPENAI_SESSIONS / "openai-chat" / "read-notes"
    first, second = turn_files(source)
    folder = tmp_path / "aborted"
    folder.mkdir()
    (folder / "session.json").write_bytes((source / "session.json").read_bytes())
    (folder / first.name).write_bytes(first.read_bytes())
    cassette = read_cassette(second)
    lines = [line.data for line in cassette.lines()]
    write_cassette(
        folder / second.name, [*lines[:2], {"harness": "abort"}, *lines[2:]], header=cassette.header
    )
    result, _ = asyncio.run(replay_session(load_session(folder), files("read-notes")))
    assert (result.stop_reason, result.turns, str(result.checkpoint)) == (
        "aborted",
        2,
        "after_event",
    )
    assert not any(
        isinstance(block, TextBlock) and "Release" in block.text
        for message in result.messages
        for block in message.content
    )

    error = {"message": "The server had an error.", "type": "server_error"}
    write_cassette(
        folder / second.name,
        [{"harness": "http_error", "status": 500, "body": {"error": error}}],
        header=cassette.header,
    )
    args = [folder, "--root", files("read-notes"), "--format", "json"]
    ran = CliRunner().invoke(cli, ["agent", *map(str, args)], catch_exceptions=False)
    assert ran.exit_code == 1, ran.output
    report = json.loads(ran.stdout)
    assert report["stop_reason"] == "error"
    assert report["turn"] == 2
    assert report["error"] == {
        "type": "api_error",
        "error_type": "server_error",
        "message": "The server had an error.",
    }


@pytest.mark.slow
def test_replaying_an_openai_session_imports_no_sdk() -> None:
    """`harness agent` hands no SDK object out: an OpenAI session's turns are read as
    dicts, and neither `openai` nor `anthropic` is imported (a fresh interpreter)."""
    folder = session_folder("openai-responses", "compare-configs")
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from harness_cli.main import cli\n"
        f"args = ['agent', {str(folder)!r}, '--root', {str(files('compare-configs'))!r}]\n"
        "result = CliRunner().invoke(cli, args)\n"
        "print(result.exit_code, sorted({'openai', 'anthropic'} & set(sys.modules)))\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert ran.stdout.split("\n")[-2] == "0 []"
