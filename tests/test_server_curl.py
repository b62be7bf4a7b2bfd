"""`curl -sN` against `harness serve`: the bytes OpenAI clients get are the cassette's framing.

For Chat Completions and Responses, streamed: the body is each event as the provider's
framing carries it (Chat's `data: <json>` lines ended by `data: [DONE]`, Responses'
`event: <type>` before each `data:`), nothing else; not streamed: the JSON answer the
events fold into. Skipped without `curl`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import OPENAI_LIBRARY

from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers import provider

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")

REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": []}),
    "responses": ("/v1/responses", {"model": "gpt-4.1-mini", "input": "hi"}),
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with ServerThread(CassetteServer([str(OPENAI_LIBRARY)], match_on=None).app()) as served:
        yield served


def _curl(url: str, api: str, name: str, stream: bool) -> bytes:
    path, body = REQUESTS[api]
    command = ["curl", "-sN", "--max-time", "30", "-X", "POST", url + path]
    command += ["-H", "content-type: application/json", "-H", "authorization: Bearer sk-test"]
    command += ["-H", f"x-harness-cassette: {api}/{name}.jsonl"]
    command += ["-d", json.dumps({**body, "stream": stream})]
    return subprocess.run(command, capture_output=True, check=True, timeout=60).stdout


def _framed(cassette: Cassette) -> bytes:
    framing = provider(cassette.provider).framing
    body = b"".join(cassette.sse(line) for line in cassette.lines() if line.kind == "event")
    done = any(line.data.get("harness") == "done" for line in cassette.lines())
    return body + (framing.done or b"" if done else b"")


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("name", ["text", "one_tool", "parallel_tools"])
def test_a_streamed_answer_is_the_cassettes_framing_byte_for_byte(
    url: str, api: str, name: str
) -> None:
    cassette = Cassette(OPENAI_LIBRARY / api / f"{name}.jsonl")
    got = _curl(url, api, name, stream=True)
    assert got == _framed(cassette)
    if api == "chat":
        assert got.endswith(b"data: [DONE]\n\n")
    else:
        assert got.startswith(b"event: response.created\ndata: ")


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_non_streamed_answer_is_the_json_the_events_fold_into(url: str, api: str) -> None:
    cassette = Cassette(OPENAI_LIBRARY / api / "one_tool.jsonl")
    got = json.loads(_curl(url, api, "one_tool", stream=False))
    assert got == provider(cassette.provider).framing.answer(cassette.events())
