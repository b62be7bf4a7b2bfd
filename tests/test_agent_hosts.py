"""The agent loop where the model is hosted elsewhere: `AnthropicModelClient` over
`AsyncAnthropicBedrock` and `AsyncAnthropicVertex`, each answered by the example sessions'
turns (`cassettes/sessions/`) served on that host, gives the result and the tool calls the
direct API gives, and sends the same conversation; the loop does not change. (The tasks
are those that complete: `aborted-answer`'s abort is a directive of session replay.)

`PLACES` is the table of where a model is reached: a further provider (its own dialect,
its own model client) is one more entry naming its sessions, the client served them and
the path each turn goes to.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import SESSIONS, not_installed
from test_agent_providers import TASKS, anthropic_result, files, summary, tool_calls

import harness
from harness._cassette.sessions import turn_files
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._replay.clients import HOST
from harness.agent import AgentResult, AnthropicModelClient, ModelClient, ReadTool, run_agent
from harness.agent.session import load_session

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason=not_installed("botocore"))

MODEL = "claude-sonnet-4-5-20250929"
VERTEX = "/v1/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/"


@dataclass(frozen=True, slots=True)
class Place:
    """Where the agent loop reaches a model, and how it is served a task there."""

    #: the folder of the tasks' session folders, as this dialect records them
    sessions: Path
    #: a task's turns -> the SDK client answered by them in-process (a cassette client)
    sdk_client: Callable[[Sequence[Path]], Any]
    #: the SDK client -> the agent loop's model client over it
    model_client: Callable[[Any], ModelClient]
    #: each turn's request path (a regular expression)
    path: str


def _anthropic_on(host: HOST) -> Callable[[Sequence[Path]], Any]:
    def served(turns: Sequence[Path]) -> Any:
        return harness.async_cassette_client(turns, host=host, match_on=None, max_retries=0)

    return served


PLACES: dict[str, Place] = {
    "anthropic-bedrock": Place(
        SESSIONS,
        _anthropic_on("bedrock"),
        AnthropicModelClient,
        f"/model/{MODEL}/invoke-with-response-stream",
    ),
    "anthropic-vertex": Place(
        SESSIONS,
        _anthropic_on("vertex"),
        AnthropicModelClient,
        f"{VERTEX}{MODEL}:streamRawPredict",
    ),
}


def run_task(client: ModelClient, task: str, sdk: Any) -> AgentResult:
    """`task` run by the loop over `client`; its SDK client `sdk` closed in the same loop."""
    session = load_session(SESSIONS / task)

    async def run() -> AgentResult:
        try:
            return await run_agent(
                client,
                prompt=session.prompt,
                tools=[ReadTool(files(task))],
                system=session.system,
                max_turns=session.max_turns,
            )
        finally:
            await sdk.close()

    return asyncio.run(run())


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("place", sorted(PLACES))
def test_each_place_gives_the_direct_apis_result_and_tool_calls(place: str, task: str) -> None:
    found = PLACES[place]
    sdk = found.sdk_client(turn_files(found.sessions / task))
    result = run_task(found.model_client(sdk), task, sdk)
    expected = anthropic_result(task)
    assert summary(result) == summary(expected)
    assert tool_calls(result) == tool_calls(expected)
    sent = harness.captured_requests(sdk)
    assert len(sent) == result.turns
    assert all(re.fullmatch(found.path, request.path) for request in sent), sent


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
    sdk = _anthropic_on(host)(turn_files(SESSIONS / task))
    run_task(AnthropicModelClient(sdk), task, sdk)
    sent = [dict(request.json) for request in harness.captured_requests(sdk)]
    versions = [body.pop("anthropic_version") for body in sent]  # the host's version field
    assert all(isinstance(version, str) and version for version in versions)
    direct = _direct_requests(task)
    assert all("anthropic_version" not in body for body in direct)
    assert sent == direct


# Clients built as the SDK's docs build them, pointed at `harness serve` ------------------


def _docs_client(host: str, url: str) -> Any:
    """`host`'s async client as its docs build it, dummy credentials passed explicitly."""
    if host == "bedrock":
        return anthropic.AsyncAnthropicBedrock(
            aws_region="us-east-1",
            aws_access_key="AKIDEXAMPLE",
            aws_secret_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            base_url=url,
            max_retries=0,
        )
    return anthropic.AsyncAnthropicVertex(
        region="us-east5",
        project_id="a-project",
        access_token="a-token",
        base_url=url + "/v1",
        max_retries=0,
    )


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, CassetteServer]]:
    """`harness serve` of one task's session folder: its turns answered in order."""
    server = CassetteServer([str(SESSIONS / request.param)], match_on=None)
    with ServerThread(server.app()) as url:
        yield url, server


@pytest.mark.parametrize("served", TASKS, indirect=True)
@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_the_hosted_clients_run_the_loop_against_harness_serve(
    host: str, served: tuple[str, CassetteServer], request: pytest.FixtureRequest
) -> None:
    url, server = served
    task = request.node.callspec.params["served"]
    sdk = _docs_client(host, url)
    result = run_task(AnthropicModelClient(sdk), task, sdk)
    assert summary(result) == summary(anthropic_result(task))
    paths = [found.path for found in server.replayer.requests]
    path = PLACES[f"anthropic-{host}"].path
    assert len(paths) == result.turns
    assert all(re.fullmatch(path, found) for found in paths), paths
