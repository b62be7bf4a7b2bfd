"""The official TypeScript SDK against `harness serve`: it agrees with `harness replay`.

For every library cassette the live API could have sent, `messages.stream(...)
.finalMessage()` run by node and the Python SDK's `get_final_message()` give the text,
tool calls and stop reason that `harness replay` gives; a cut or an `error` event is an
error in both. Left out: cassettes whose stream breaks the protocol (`errors/`, where
replay ends in a protocol error) and the index-gap scenarios (block indexes 0, 1, 3, as
`interleaved.jsonl` keeps them: the live API numbers blocks 0..n-1, and both SDKs'
accumulators fail on a gap).

The npm package is installed into `.node/` (ignored) on first use, as `make node` does;
without node the test is skipped.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from conftest import LIBRARY, ROOT, library_cassettes, typescript_final_messages
from filelock import FileLock

from harness._cassette.codec import Cassette
from harness._events import TextEvent, ToolCallEvent
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._replay.direct import replay_outcome

NODE_PREFIX = ROOT / ".node"
NODE_SDK = NODE_PREFIX / "node_modules" / "@anthropic-ai" / "sdk" / "package.json"
REQUEST: dict[str, Any] = {
    "model": "claude-harness-test",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "replay"}],
}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]


def _has_index_gap(path: str) -> bool:
    starts = [e["index"] for e in Cassette(path).events() if e["type"] == "content_block_start"]
    return starts != list(range(len(starts)))


def _live_could_send(path: str) -> bool:
    """A stream the live API could send: blocks numbered 0..n-1, no protocol breach."""
    from harness._exceptions import StreamProtocolError

    error = replay_outcome(path).error
    return not _has_index_gap(path) and not isinstance(error, StreamProtocolError)


LIBRARY_CASSETTES = [str(path) for path in library_cassettes() if _live_could_send(str(path))]


def _expected(path: str) -> dict[str, Any]:
    """What `harness replay` says: the text, the tool calls, the stop reason, or an error."""
    outcome = replay_outcome(path)
    if outcome.error is not None:
        return {"error": True}
    stop_reason = [
        event["delta"].get("stop_reason")
        for event in Cassette(path).events()
        if event["type"] == "message_delta"
    ][-1]
    return {
        "text": "".join(e.text for e in outcome.events if isinstance(e, TextEvent)),
        "tool_calls": [
            {"id": e.call.id, "name": e.call.name, "input": e.call.input}
            for e in outcome.events
            if isinstance(e, ToolCallEvent)
        ],
        "stop_reason": stop_reason,
    }


def _cut_variants(folder: Path) -> list[Path]:
    """Good streams broken off mid-event: both clients must raise."""
    made = []
    for name, keep in (("text_only", 4), ("parallel_tools", 6)):
        lines = (LIBRARY / f"{name}.jsonl").read_text().splitlines()
        cut = [*lines[: keep + 1], json.dumps({"harness": "cut", "after_bytes": 12}), lines[-1]]
        made.append(folder / f"{name}_cut.jsonl")
        made[-1].write_text("\n".join(cut) + "\n")
    return made


@pytest.fixture(scope="module")
def node_sdk() -> Path:
    """The `@anthropic-ai/sdk` package, installed into `.node/` once (under a lock)."""
    NODE_PREFIX.mkdir(exist_ok=True)
    with FileLock(str(NODE_PREFIX / ".install.lock")):
        if not NODE_SDK.exists():
            npm = shutil.which("npm")
            assert npm is not None, "node is installed but npm is not: cannot get the SDK"
            subprocess.run(
                [npm, "install", "--silent", "--prefix", str(NODE_PREFIX), "@anthropic-ai/sdk"],
                check=True,
                timeout=300,
            )
    return NODE_PREFIX / "node_modules"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """The library and the cut variants served; the names to ask for, with their paths."""
    folder = tmp_path_factory.mktemp("cut")
    cuts = _cut_variants(folder)
    server = CassetteServer([str(LIBRARY), str(folder)], match_on=None)
    names = [str(Path(path).relative_to(LIBRARY)) for path in LIBRARY_CASSETTES]
    names += [path.name for path in cuts]
    with ServerThread(server.app()) as url:
        yield url, names


def _python(url: str, name: str) -> dict[str, Any]:
    headers = {"x-harness-cassette": name}
    with anthropic.Anthropic(base_url=url, api_key="any-key", max_retries=0) as client:
        try:
            with client.messages.stream(**REQUEST, extra_headers=headers) as stream:
                message = stream.get_final_message()
        except Exception as error:
            return {"error": type(error).__name__, "message": str(error)}
    return {
        "text": "".join(block.text for block in message.content if block.type == "text"),
        "tool_calls": [
            {"id": block.id, "name": block.name, "input": block.input}
            for block in message.content
            if block.type == "tool_use"
        ],
        "stop_reason": message.stop_reason,
    }


def _summary(answer: dict[str, Any]) -> dict[str, Any]:
    return {"error": True} if "error" in answer else answer


def test_typescript_and_python_clients_agree_with_harness_replay(
    node_sdk: Path, served: tuple[str, list[str]]
) -> None:
    url, names = served
    typescript = typescript_final_messages(url, names, node_sdk)
    assert sorted(typescript) == sorted(names)
    for name, path in zip(names, LIBRARY_CASSETTES, strict=False):
        expected = _expected(path)
        assert _summary(typescript[name]) == expected, name
        assert _summary(_python(url, name)) == expected, name


def test_a_cut_or_an_error_event_is_an_error_in_both_clients(
    node_sdk: Path, served: tuple[str, list[str]]
) -> None:
    url, names = served
    failing = ["errors/overloaded_error.jsonl", "text_only_cut.jsonl", "parallel_tools_cut.jsonl"]
    assert set(failing) <= set(names)
    typescript = typescript_final_messages(url, failing, node_sdk)
    for name in failing:
        python = _python(url, name)
        assert "error" in typescript[name], (name, typescript[name])
        assert "error" in python, (name, python)
    assert "Overloaded" in typescript["errors/overloaded_error.jsonl"]["message"]
    assert "peer closed connection" in _python(url, "text_only_cut.jsonl")["message"]
