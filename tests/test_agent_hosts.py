"""The agent loop wherever a model is reached: the seven ways (Anthropic's Messages API
direct, on Bedrock and on Vertex; Bedrock's ConverseStream; OpenAI's Chat Completions and
Responses; Gemini), each answered by the example sessions' turns as its dialect records
them (`cassettes/sessions/`, `tests/data/agent_sessions/`), give the result and the tool
calls the direct Messages API gives; the loop does not change. Each way runs its model
client over the SDK's real client, answered in-process (a cassette client) and by
`harness serve` (the client built as that SDK's docs build it). (The tasks are those
that complete: `aborted-answer`'s abort is a directive of session replay.)

`PLACES` is the table of where a model is reached: a further provider or host (its
own dialect, its own model client) is one more entry naming its sessions, the client
served them, the path each turn goes to and the client its docs build.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from conftest import SESSIONS, boto3_runtime, not_installed
from test_agent_providers import (
    TASKS,
    anthropic_result,
    files,
    recorded_requests,
    session_folder,
    summary,
    tool_calls,
)

import harness
from harness import read_cassette, write_cassette
from harness._cassette.sessions import turn_files
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._replay.clients import HOST
from harness.agent import (
    AbortController,
    AgentResult,
    AnthropicModelClient,
    BedrockConverseModelClient,
    GeminiModelClient,
    Message,
    ModelClient,
    OpenAIChatModelClient,
    OpenAIResponsesModelClient,
    ReadTool,
    run_agent,
)
from harness.agent.session import load_session

MODEL = "claude-sonnet-5"
VERTEX = "/v1/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/"


@dataclass(frozen=True, slots=True)
class Place:
    """Where the agent loop reaches a model, and how it is served a task there."""

    #: the provider whose sessions it is served (`test_agent_providers.session_folder`)
    provider: str
    #: the modules its SDK's client needs (the test is skipped without them)
    needs: tuple[str, ...]
    #: a task's turns -> the SDK client answered by them in-process (a cassette client)
    sdk_client: Callable[[Sequence[Path]], Any]
    #: the SDK client -> the agent loop's model client over it
    model_client: Callable[[Any], ModelClient]
    #: each turn's request path (a regular expression; `model` the model, if it names it)
    path: str
    #: `harness serve`'s address -> the SDK's client as its docs build it, pointed there
    docs_client: Callable[[str], Any]


def _in_process(host: HOST | None = None) -> Callable[[Sequence[Path]], Any]:
    """The async cassette client of the turns' SDK (on `host`)."""

    def served(turns: Sequence[Path]) -> Any:
        return harness.async_cassette_client(turns, host=host, match_on=None, max_retries=0)

    return served


def _boto3_in_process(turns: Sequence[Path]) -> Any:
    """boto3 has no async client: the cassette client is its sync `bedrock-runtime` one."""
    return harness.cassette_client(turns, match_on=None, max_retries=0)


# Each SDK's client as its docs build it, dummy credentials passed explicitly --------------


def _anthropic(url: str) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(api_key="not-a-key", base_url=url, max_retries=0)


def _anthropic_bedrock(url: str) -> Any:
    import anthropic

    return anthropic.AsyncAnthropicBedrock(
        aws_region="us-east-1",
        aws_access_key="AKIDEXAMPLE",
        aws_secret_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        base_url=url,
        max_retries=0,
    )


def _anthropic_vertex(url: str) -> Any:
    import anthropic

    return anthropic.AsyncAnthropicVertex(
        region="us-east5",
        project_id="a-project",
        access_token="a-token",
        base_url=url + "/v1",
        max_retries=0,
    )


def _openai(url: str) -> Any:
    import openai

    return openai.AsyncOpenAI(api_key="not-a-key", base_url=url + "/v1", max_retries=0)


def _genai(url: str) -> Any:
    from google import genai
    from google.genai import types

    return genai.Client(api_key="dummy", http_options=types.HttpOptions(base_url=url))


PLACES: dict[str, Place] = {
    "anthropic": Place(
        "anthropic", ("anthropic",), _in_process(), AnthropicModelClient, "/v1/messages", _anthropic
    ),
    "anthropic-bedrock": Place(
        "anthropic",
        ("anthropic", "botocore"),
        _in_process("bedrock"),
        AnthropicModelClient,
        f"/model/(?P<model>{MODEL})/invoke-with-response-stream",
        _anthropic_bedrock,
    ),
    "anthropic-vertex": Place(
        "anthropic",
        ("anthropic", "google.auth"),
        _in_process("vertex"),
        AnthropicModelClient,
        f"{VERTEX}(?P<model>{MODEL}):streamRawPredict",
        _anthropic_vertex,
    ),
    "bedrock-converse": Place(
        "bedrock-converse",
        ("boto3",),
        _boto3_in_process,
        BedrockConverseModelClient,
        "/model/(?P<model>[^/]+)/converse-stream",
        boto3_runtime,
    ),
    "gemini": Place(
        "gemini",
        ("google.genai",),
        _in_process(),
        GeminiModelClient,
        "/v1(?:beta)?/models/(?P<model>[^/:]+):streamGenerateContent",  # v1: google-genai 3
        _genai,
    ),
    "openai-chat": Place(
        "openai-chat",
        ("openai",),
        _in_process(),
        OpenAIChatModelClient,
        "/v1/chat/completions",
        _openai,
    ),
    "openai-responses": Place(
        "openai-responses",
        ("openai",),
        _in_process(),
        OpenAIResponsesModelClient,
        "/v1/responses",
        _openai,
    ),
}


def place(name: str) -> Place:
    """`PLACES[name]`, the test skipped when its SDK is not installed."""
    found = PLACES[name]
    reason = not_installed(*found.needs)
    if reason is not None:
        pytest.skip(reason)
    return found


async def close(sdk: Any) -> None:
    """Close an SDK client: its async face (google-genai's `aio`), else itself, awaited
    if its `close` is a coroutine (boto3's is not)."""
    face = getattr(sdk, "aio", None)
    closing = face.aclose() if face is not None else sdk.close()
    if inspect.isawaitable(closing):
        await closing


def run_task(client: ModelClient, task: str, sdk: Any, **options: Any) -> AgentResult:
    """`task` run by the loop over `client` (`options` are `run_agent`'s); its SDK client
    `sdk` closed in the same loop."""
    session = load_session(SESSIONS / task)

    async def run() -> AgentResult:
        try:
            return await run_agent(
                client,
                prompt=session.prompt,
                tools=[ReadTool(files(task))],
                system=session.system,
                max_turns=session.max_turns,
                **options,
            )
        finally:
            await close(sdk)

    return asyncio.run(run())


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("name", sorted(PLACES))
def test_each_place_gives_the_direct_apis_result_and_tool_calls(name: str, task: str) -> None:
    found = place(name)
    sdk = found.sdk_client(turn_files(session_folder(found.provider, task)))
    result = run_task(found.model_client(sdk), task, sdk)
    expected = anthropic_result(task)
    assert summary(result) == summary(expected)
    assert tool_calls(result) == tool_calls(expected)
    sent = harness.captured_requests(sdk)
    assert len(sent) == result.turns
    assert all(re.fullmatch(found.path, request.path) for request in sent), sent
    if found.provider != "anthropic":  # its sessions' headers hold each turn's request
        assert [as_recorded(found, request) for request in sent] == recorded_requests(
            found.provider, task
        )


@pytest.mark.parametrize("name", sorted(PLACES))
def test_an_abort_while_the_model_is_silent_is_answered_at_once(name: str, tmp_path: Path) -> None:
    """The second turn's answer stalls for a minute after its first events; the abort a
    moment later ends the run at once (the read in flight abandoned, the stream closed),
    nothing of the partial answer committed."""
    found = place(name)
    first, second = turn_files(session_folder(found.provider, "read-notes"))
    cassette = read_cassette(second)
    lines = [line.data for line in cassette.lines()]
    stalled = tmp_path / second.name
    stall = {"harness": "stall", "ms": 60_000}
    write_cassette(stalled, [*lines[:2], stall, *lines[2:]], header=cassette.header)
    sdk = found.sdk_client([first, stalled])
    controller = AbortController()
    committed: list[Message] = []

    def on_message(message: Message) -> None:
        committed.append(message)
        if len(committed) == 3:  # the first turn's results: abort during the second turn
            asyncio.get_running_loop().call_later(0.1, controller.abort, "stop")

    started = time.monotonic()
    result = run_task(
        found.model_client(sdk),
        "read-notes",
        sdk,
        signal=controller.signal,
        on_message=on_message,
    )
    assert time.monotonic() - started < 10
    assert (result.stop_reason, result.turns) == ("aborted", 2)
    assert [message.role for message in result.messages] == ["user", "assistant", "user"]


def as_recorded(found: Place, request: Any) -> dict[str, Any]:
    """A request sent as a cassette's header keeps it: without `stream`, with the model
    its path names (`model`), where its body does not say it."""
    body = dict(request.json)
    body.pop("stream", None)
    match = re.fullmatch(found.path, request.path)
    if match is not None and "model" in match.groupdict():
        body.setdefault("model", unquote(match["model"]))
    return body


def _direct_requests(task: str) -> list[dict[str, Any]]:
    """The bodies `AnthropicModelClient` sends the direct API for `task`."""
    turns = turn_files(SESSIONS / task)
    sdk = harness.async_cassette_client(turns, match_on=None, max_retries=0)
    run_task(AnthropicModelClient(sdk), task, sdk)
    return [dict(request.json) for request in harness.captured_requests(sdk)]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_the_hosted_clients_send_the_direct_apis_conversation(host: HOST, task: str) -> None:
    """Each turn's request is the direct API's (the model and `stream` the host's path
    carries put back), but for the host's `anthropic_version` in the body."""
    sdk = place(f"anthropic-{host}").sdk_client(turn_files(SESSIONS / task))
    run_task(AnthropicModelClient(sdk), task, sdk)
    sent = [dict(request.json) for request in harness.captured_requests(sdk)]
    versions = [body.pop("anthropic_version") for body in sent]  # the host's version field
    assert all(isinstance(version, str) and version for version in versions)
    direct = _direct_requests(task)
    assert all("anthropic_version" not in body for body in direct)
    assert sent == direct


# Clients built as the SDK's docs build them, pointed at `harness serve` ------------------


@contextmanager
def serving(folder: Path) -> Iterator[tuple[str, CassetteServer]]:
    """`harness serve` of one session folder: its turns answered in order."""
    server = CassetteServer([str(folder)], match_on=None)
    with ServerThread(server.app()) as url:
        yield url, server


# google-genai's async face runs on aiohttp when it is installed, over a subclass of its
# session that aiohttp frowns upon (a DeprecationWarning, the SDK's own doing)
@pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession from ClientSession:DeprecationWarning"
)
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("name", sorted(PLACES))
def test_each_place_runs_the_loop_against_harness_serve(name: str, task: str) -> None:
    found = place(name)
    folder = session_folder(found.provider, task)
    with serving(folder) as (url, server):
        sdk = found.docs_client(url)
        result = run_task(found.model_client(sdk), task, sdk)
        requests = list(server.replayer.requests)
    expected = anthropic_result(task)
    assert summary(result) == summary(expected)
    assert tool_calls(result) == tool_calls(expected)
    assert len(requests) == result.turns
    assert all(re.fullmatch(found.path, request.path) for request in requests), requests
    if found.provider != "anthropic":
        sent = [as_recorded(found, request) for request in requests]
        assert sent == recorded_requests(found.provider, task)
