"""`curl -sN` against `harness serve`: the bytes OpenAI clients get are the cassette's framing.

For Chat Completions and Responses, streamed: the body is each event as the provider's
framing carries it (Chat's `data: <json>` lines ended by `data: [DONE]`, Responses'
`event: <type>` before each `data:`), nothing else; not streamed: the JSON answer the
events fold into. And docs/server.md's curl output is the bytes curl prints: every `$ curl`
command of a console block on the page runs against `harness serve cassettes/` (the page's
port 8080 swapped for the test's), and what curl prints must be the lines shown below it,
blank lines included, up to the next `$ ` line or the block's end. Skipped without `curl`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import OPENAI_LIBRARY, ROOT

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


PAGE = ROOT / "docs" / "server.md"
PAGE_URL = "http://127.0.0.1:8080"


def curl_examples(text: str) -> list[tuple[str, str]]:
    """(command, output shown) for each `$ curl` line of the page's console blocks."""
    examples: list[tuple[str, str]] = []
    block: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("```"):
            if block is not None:
                examples += _in_block(block)
            block = [] if line == "```console" else None
        elif block is not None:
            block.append(line)
    return examples


def _in_block(block: list[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    at = 0
    while at < len(block):
        if not block[at].startswith("$ curl "):
            at += 1
            continue
        command = [block[at][2:]]
        while command[-1].endswith("\\"):
            at += 1
            command.append(block[at])
        at += 1
        shown: list[str] = []
        while at < len(block) and not block[at].startswith("$ "):
            shown.append(block[at])
            at += 1
        found.append(("\n".join(command), "\n".join(shown)))
    return found


EXAMPLES = curl_examples(PAGE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def library() -> Iterator[str]:
    with ServerThread(CassetteServer([str(ROOT / "cassettes")]).app()) as url:
        yield url


def test_the_page_shows_curl_for_both_apis() -> None:
    paths = {command.split()[2].removeprefix(PAGE_URL) for command, _ in EXAMPLES}
    assert paths == {"/v1/messages", "/v1/chat/completions"}


@pytest.mark.parametrize(("command", "shown"), EXAMPLES, ids=[c[:60] for c, _ in EXAMPLES])
def test_curl_prints_what_the_page_shows(library: str, command: str, shown: str) -> None:
    ran = subprocess.run(
        ["bash", "-c", command.replace(PAGE_URL, library)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    # a block's last line ends the text without its newline; curl's output may end in one
    assert ran.stdout in (shown, shown + "\n")
