"""`harness proxy --strict`: a broken stream ends, at the event that breaks it, in an SSE
`error` event naming the code, so every SDK raises; good streams pass as they are."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from conftest import LIBRARY, ROOT

from harness._cassette.codec import Cassette
from harness._exceptions import StreamProtocolError
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._replay.direct import replay_outcome
from harness._strict.guard import STRICT_ERROR_TYPE

REQUEST: dict[str, Any] = {
    "model": "claude-harness-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "strict proxy"}],
}
CASSETTES = sorted(path for path in LIBRARY.rglob("*.jsonl") if "sessions" not in path.parts)
NODE_MODULES = ROOT / ".node" / "node_modules"
SCRIPT = Path(__file__).parent / "ts" / "final_message.cjs"


def _name(path: Path) -> str:
    return str(path.relative_to(LIBRARY))


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, RecordingProxy]]:
    """The library served behind a strict recording proxy."""
    serve = CassetteServer([str(LIBRARY)], match_on=None)
    proxy = RecordingProxy("http://placeholder", tmp_path_factory.mktemp("rec"), strict=True)
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = serve_url
        with ServerThread(proxy.app()) as proxy_url:
            yield proxy_url, proxy


def _stream(url: str, name: str) -> tuple[list[str], BaseException | None]:
    """The event types the Python SDK yields through the proxy, then what it raised."""
    seen: list[str] = []
    with anthropic.Anthropic(base_url=url, api_key="sk-any", max_retries=0) as client:
        headers = {"x-harness-cassette": name}
        try:
            for event in client.messages.create(**REQUEST, stream=True, extra_headers=headers):
                seen.append(event.type)
        except Exception as error:
            return seen, error
    return seen, None


@pytest.mark.parametrize("path", CASSETTES, ids=_name)
def test_the_python_sdk_raises_at_the_event_that_breaks_the_stream(
    chain: tuple[str, RecordingProxy], path: Path
) -> None:
    direct = replay_outcome(path).error
    seen, error = _stream(chain[0], _name(path))
    types = [event["type"] for event in Cassette(path).events() if event["type"] != "ping"]
    if direct is None:
        assert error is None and seen == types, "a good stream passes as it is"
        return
    assert isinstance(error, anthropic.APIStatusError)
    assert seen == types[: len(seen)]
    if isinstance(direct, StreamProtocolError):
        details = error.body["error"]  # type: ignore[index]
        assert details["type"] == STRICT_ERROR_TYPE
        assert details["code"] == direct.code
        assert details["message"] == f"{direct.code}: {direct}"
        assert "message_delta" not in seen, "the broken answer was never completed"


def test_the_recording_of_a_broken_answer_replays_to_the_same_error(
    chain: tuple[str, RecordingProxy],
) -> None:
    url, proxy = chain
    before = len(proxy.written)
    _stream(url, "errors/invalid_tool_json.jsonl")
    deadline = time.monotonic() + 30
    while len(proxy.written) == before and time.monotonic() < deadline:
        time.sleep(0.01)
    [recorded] = proxy.written[before:]
    error = replay_outcome(recorded).error
    assert isinstance(error, StreamProtocolError) and error.code == "invalid_tool_json"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_typescript_sdk_raises_its_api_error_naming_the_code(
    chain: tuple[str, RecordingProxy],
) -> None:
    if not (NODE_MODULES / "@anthropic-ai" / "sdk").exists():
        pytest.skip("the TypeScript SDK is not installed in .node/ (make node)")
    names = [
        "two_tools.jsonl",
        "errors/missing_stop_reason.jsonl",
        "errors/invalid_tool_json.jsonl",
    ]
    environment = {**os.environ, "ANTHROPIC_BASE_URL": chain[0], "NODE_PATH": str(NODE_MODULES)}
    environment.pop("ANTHROPIC_API_KEY", None)
    result = subprocess.run(
        ["node", str(SCRIPT), *names],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=True,
    )
    lines = {line.pop("cassette"): line for line in map(json.loads, result.stdout.splitlines())}
    assert lines["two_tools.jsonl"]["stop_reason"] == "tool_use"
    for name in names[1:]:
        code = Path(name).stem
        assert lines[name]["error"] == "APIError"
        assert f'"code":"{code}"' in lines[name]["message"]
