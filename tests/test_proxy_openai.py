"""`harness proxy` records OpenAI's two APIs: client → proxy → `harness serve` (the upstream).

serve answers from the library's OpenAI cassettes (and a cut and an HTTP error made
here), so upstream's bytes are the cassettes' own framing; the proxy must record each
answer as a cassette that replays to the original's outcome, numbered as a session, the
header naming the provider and keeping the request without credentials, whether the
client is the real `openai` SDK (at `/v1`, as OpenAI's base URL ends) or raw HTTP at a
path without `/v1` (a compatible server's base URL given with `--upstream .../v1`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from aiohttp import web
from click.testing import CliRunner
from conftest import OPENAI_LIBRARY, read_then_close

from harness._cassette.codec import Cassette, expand_paths
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._replay.direct import collect, replay_outcome
from harness._replay.readers import client_events
from harness_cli.main import cli

KEY = "sk-proxy-openai-secret-0123456789"
CASSETTES = [Path(path) for path in expand_paths([str(OPENAI_LIBRARY)]) if "/sessions/" not in path]
IDS = [path.relative_to(OPENAI_LIBRARY).as_posix() for path in CASSETTES]
#: The cassettes of the inner loop; the whole library is `slow` (a second or more in all).
QUICK = {
    "chat/errors/missing_done.jsonl",
    "responses/one_tool.jsonl",
    "responses/errors/orphan_delta.jsonl",
}
PARAMS = [
    pytest.param(path, id=name, marks=() if name in QUICK else pytest.mark.slow)
    for path, name in zip(CASSETTES, IDS, strict=True)
]
CHAT: dict[str, Any] = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}]}
RESPONSES: dict[str, Any] = {"model": "gpt-4.1-mini", "input": "hi"}
PATHS = {"openai-chat": "/chat/completions", "openai-responses": "/responses"}
RATE_LIMITED = {
    "harness": "http_error",
    "status": 429,
    "headers": {"retry-after-ms": "1", "x-should-retry": "false"},
    "body": {
        "error": {
            "message": "Rate limit reached",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    },
}


def _request(provider: str) -> dict[str, Any]:
    return CHAT if provider == "openai-chat" else RESPONSES


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cut mid-stream of each API, and a 429 of each, as serve answers them."""
    folder = tmp_path_factory.mktemp("faults")
    for api in ("chat", "responses"):
        header = json.loads((OPENAI_LIBRARY / api / "text.jsonl").read_text().splitlines()[0])
        lines = (OPENAI_LIBRARY / api / "text.jsonl").read_text().splitlines()
        cut = [*lines[:4], json.dumps({"harness": "cut", "after_bytes": 9}), *lines[4:]]
        (folder / f"{api}_cut.jsonl").write_text("\n".join(cut) + "\n")
        error = [json.dumps(header), json.dumps(RATE_LIMITED)]
        (folder / f"{api}_429.jsonl").write_text("\n".join(error) + "\n")
    return folder


@pytest.fixture(scope="module")
def chain(
    tmp_path_factory: pytest.TempPathFactory, faults: Path
) -> Iterator[tuple[str, RecordingProxy]]:
    serve = CassetteServer([str(OPENAI_LIBRARY), str(faults)], match_on=None)
    proxy = RecordingProxy("http://placeholder", tmp_path_factory.mktemp("recorded"))
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = serve_url
        with ServerThread(proxy.app()) as proxy_url:
            yield proxy_url, proxy


def _recorded(proxy: RecordingProxy, before: int) -> Cassette:
    """The one recording made since `before` (it may land just after the client returns)."""
    deadline = time.monotonic() + 30
    while len(proxy.written) == before and time.monotonic() < deadline:
        time.sleep(0.01)
    [recorded] = proxy.written[before:]
    return Cassette(recorded)


def _client(url: str, name: str) -> openai.OpenAI:
    headers = {"x-harness-cassette": name}
    return openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0, default_headers=headers)


def _raw(url: str, path: str, name: str, body: dict[str, Any]) -> bytes:
    headers = {"x-harness-cassette": name, "authorization": f"Bearer {KEY}"}
    with httpx2.stream("POST", url + path, json=body, headers=headers) as answer:
        return b"".join(answer.iter_bytes())


@pytest.mark.parametrize("path", PARAMS)
def test_every_library_cassette_recorded_through_the_proxy_replays_the_same(
    chain: tuple[str, RecordingProxy], path: Path
) -> None:
    """Raw HTTP at the path without `/v1`, read to the end: the recording's events are the
    cassette's, and it replays to the same outcome, broken streams included."""
    url, proxy = chain
    original = Cassette(path)
    before = len(proxy.written)
    name = f"{path.relative_to(OPENAI_LIBRARY).as_posix()}"
    body = {**_request(original.provider), "stream": True}
    _raw(url, "/v1" + PATHS[original.provider], name, body)
    recorded = _recorded(proxy, before)
    assert recorded.provider == original.provider
    assert list(recorded.events()) == list(original.events())
    assert replay_outcome(recorded).to_json_lines() == replay_outcome(original).to_json_lines()
    assert (recorded.header or {})["request"] == _request(original.provider)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize(
    "name", [pytest.param("text", marks=pytest.mark.slow), "one_tool", "parallel_tools"]
)
def test_the_openai_sdk_through_the_proxy_gets_and_records_text_and_tools(
    chain: tuple[str, RecordingProxy], api: str, name: str
) -> None:
    url, proxy = chain
    original = Cassette(OPENAI_LIBRARY / api / f"{name}.jsonl")
    before = len(proxy.written)
    with _client(url, f"{api}/{name}.jsonl") as client:
        got = collect(client_events(client, original.provider, "create"))
    expected = replay_outcome(original).to_json_lines()
    assert got.to_json_lines() == expected
    recorded = _recorded(proxy, before)
    assert replay_outcome(recorded).to_json_lines() == expected
    assert KEY not in Path(recorded.path).read_text()


def test_an_upstream_given_with_v1_takes_a_client_whose_base_url_has_none(
    tmp_path: Path,
) -> None:
    """`--upstream http://host/v1` and a client at the proxy's root (`/chat/completions`):
    the path is added to the upstream URL as sent, and recognised by how it ends."""
    serve = CassetteServer([str(OPENAI_LIBRARY)], match_on=None)
    proxy = RecordingProxy("http://placeholder", tmp_path)
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = f"{serve_url}/v1"
        with ServerThread(proxy.app()) as proxy_url:
            body = _raw(
                proxy_url, "/chat/completions", "chat/one_tool.jsonl", {**CHAT, "stream": True}
            )
            recorded = _recorded(proxy, 0)
    assert body.endswith(b"data: [DONE]\n\n")
    original = Cassette(OPENAI_LIBRARY / "chat/one_tool.jsonl")
    assert list(recorded.events()) == list(original.events())
    assert recorded.path == str(tmp_path / "turn-01.jsonl")


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_a_cut_stream_is_recorded_as_its_whole_events_then_a_cut(
    chain: tuple[str, RecordingProxy], api: str
) -> None:
    url, proxy = chain
    provider = f"openai-{api}"
    before = len(proxy.written)
    with pytest.raises(httpx2.RemoteProtocolError):
        _raw(
            url, "/v1" + PATHS[provider], f"{api}_cut.jsonl", {**_request(provider), "stream": True}
        )
    recorded = _recorded(proxy, before)
    lines = [line.data for line in recorded.lines()]
    assert lines[-1] == {"harness": "cut"}
    whole = list(Cassette(OPENAI_LIBRARY / api / "text.jsonl").events())[:3]
    assert [line for line in lines if "harness" not in line] == whole
    failure = replay_outcome(recorded).to_json_lines()[-1]
    assert failure["type"] == "connection_error"


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_an_http_error_is_recorded_as_its_http_error_line_and_replays_the_same(
    chain: tuple[str, RecordingProxy], faults: Path, api: str
) -> None:
    url, proxy = chain
    before = len(proxy.written)
    with _client(url, f"{api}_429.jsonl") as client, pytest.raises(openai.RateLimitError):
        if api == "chat":
            client.chat.completions.create(**CHAT, stream=True)
        else:
            client.responses.create(**RESPONSES, stream=True)
    recorded = _recorded(proxy, before)
    assert [line.data for line in recorded.lines()][-1] == RATE_LIMITED
    assert recorded.provider == f"openai-{api}"
    original = replay_outcome(faults / f"{api}_429.jsonl").to_json_lines()
    assert replay_outcome(recorded).to_json_lines() == original


def test_non_streaming_answers_are_recorded_as_the_events_they_carry(
    chain: tuple[str, RecordingProxy],
) -> None:
    url, proxy = chain
    for api in ("chat", "responses"):
        before = len(proxy.written)
        with _client(url, f"{api}/parallel_tools.jsonl") as client:
            if api == "chat":
                answer: Any = client.chat.completions.create(**CHAT)
                assert answer.choices[0].finish_reason == "tool_calls"
            else:
                answer = client.responses.create(**RESPONSES)
                assert answer.status == "completed"
        recorded = _recorded(proxy, before)
        assert (recorded.header or {})["synthesized_from"] == "message"
        original = OPENAI_LIBRARY / api / "parallel_tools.jsonl"
        assert replay_outcome(recorded).to_json_lines() == replay_outcome(original).to_json_lines()


@pytest.mark.slow
def test_the_recordings_are_a_session_serve_answers_turn_by_turn(
    tmp_path: Path, faults: Path
) -> None:
    serve = CassetteServer([str(OPENAI_LIBRARY)], match_on=None)
    proxy = RecordingProxy("http://placeholder", tmp_path / "session")
    names = ["chat/one_tool.jsonl", "responses/text.jsonl", "chat/text.jsonl"]
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = serve_url
        with ServerThread(proxy.app()) as proxy_url:
            for name in names:
                before = len(proxy.written)
                with _client(proxy_url, name) as client:
                    provider = "openai-chat" if name.startswith("chat") else "openai-responses"
                    collect(client_events(client, provider, "stream"))
                _recorded(proxy, before)
    turns = sorted(path.name for path in (tmp_path / "session").iterdir())
    assert turns == ["turn-01.jsonl", "turn-02.jsonl", "turn-03.jsonl"]
    replayed = CassetteServer([str(tmp_path / "session")], match_on=None)
    with (
        ServerThread(replayed.app()) as url,
        openai.OpenAI(base_url=f"{url}/v1", api_key="test", max_retries=0) as client,
    ):
        chat = client.chat.completions.create(**CHAT)
        response = client.responses.create(**RESPONSES)
        second = client.chat.completions.create(**CHAT)
    assert chat.choices[0].finish_reason == "tool_calls"
    assert response.output_text == "Paris is the capital of France."
    assert second.choices[0].message.content == "Paris is the capital of France."


def test_the_resume_get_passes_through_and_is_not_recorded(
    chain: tuple[str, RecordingProxy],
) -> None:
    url, proxy = chain
    with _client(url, "responses/text.jsonl") as client:
        before = len(proxy.written)
        first = list(client.responses.create(**RESPONSES, stream=True))
        _recorded(proxy, before)
        before = len(proxy.written)
        resumed = list(
            client.responses.retrieve(first[0].response.id, stream=True, starting_after=3)
        )
    assert resumed[0].sequence_number == 4
    assert resumed[-1].type == "response.completed"
    # a recording is on disk before its answer ends: none was made for the GET
    assert len(proxy.written) == before


@pytest.mark.slow
def test_proxy_replay_of_the_cli_recording_gives_the_same_outcome(
    chain: tuple[str, RecordingProxy],
) -> None:
    """`harness replay` of a proxied recording prints what it prints for the original."""
    url, proxy = chain
    before = len(proxy.written)
    with _client(url, "responses/one_tool.jsonl") as client:
        collect(client_events(client, "openai-responses", "stream"))
    recorded = _recorded(proxy, before)
    runner = CliRunner()
    got = runner.invoke(cli, ["replay", recorded.path])
    expected = runner.invoke(cli, ["replay", str(OPENAI_LIBRARY / "responses/one_tool.jsonl")])
    assert (got.exit_code, got.output) == (expected.exit_code, expected.output)
    assert "get_weather" in got.output


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("chat/one_tool.jsonl", marks=pytest.mark.slow),
        "chat/errors/stop_with_tool_calls.jsonl",
        "responses/text.jsonl",
    ],
)
def test_under_strict_openai_answers_are_guarded_and_recorded(tmp_path: Path, name: str) -> None:
    """`--strict`: a good stream passes and is recorded; a broken one ends in the guard's
    error event and its recording (what upstream sent up to there) replays to the same code."""
    original = Cassette(OPENAI_LIBRARY / name)
    serve = CassetteServer([str(OPENAI_LIBRARY)], match_on=None)
    proxy = RecordingProxy("http://placeholder", tmp_path, strict=True)
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = serve_url
        with ServerThread(proxy.app()) as proxy_url, _client(proxy_url, name) as client:
            try:
                seen = collect(client_events(client, original.provider, "create")).to_json_lines()
            except openai.APIError as error:  # the guard's error event, raised by the SDK
                seen = [{"raised": str(error)}]
            recorded = _recorded(proxy, 0)
    if "errors/" in name:
        assert "stop_with_tool_calls" in json.dumps(seen[-1])
    else:
        assert seen == replay_outcome(original).to_json_lines()
    expected = replay_outcome(original).to_json_lines()
    assert replay_outcome(recorded).to_json_lines() == expected
    assert recorded.provider == original.provider


class _Gated:
    """A Chat Completions upstream sending its first chunk, then the rest once `gate` is
    set: what reaches the client before upstream has finished, and a client leaving."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.cassette = Cassette(OPENAI_LIBRARY / "chat/text.jsonl")
        self.chunks = [line for line in self.cassette.lines() if line.kind == "event"]

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.answer)
        return app

    async def answer(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for number, line in enumerate(self.chunks):
            if number == 1:
                await asyncio.to_thread(self.gate.wait, 30)
            with contextlib.suppress(ConnectionError):
                await response.write(self.cassette.sse(line))
                await asyncio.sleep(0.01)  # pieces apart: the proxy writes each on its own
        with contextlib.suppress(ConnectionError):
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        return response


@pytest.mark.parametrize("leaves", [False, True], ids=["stays", "leaves"])
def test_the_first_chunk_arrives_before_upstream_ends_and_a_client_leaving_writes_nothing(
    tmp_path: Path, leaves: bool
) -> None:
    upstream = _Gated()
    logged: list[str] = []
    proxy = RecordingProxy("http://placeholder", tmp_path, log=logged.append)
    with ServerThread(upstream.app()) as upstream_url:
        proxy.upstream = upstream_url
        with ServerThread(proxy.app()) as url, httpx2.Client(timeout=30) as client:
            body = {**CHAT, "stream": True}
            with client.stream("POST", f"{url}/v1/chat/completions", json=body) as answer:
                pieces = answer.iter_bytes()
                assert next(pieces).startswith(b"data: {")  # upstream still holds the rest
                if not leaves:
                    upstream.gate.set()
                    assert b"".join(pieces).endswith(b"data: [DONE]\n\n")
            upstream.gate.set()
            deadline = time.monotonic() + 30
            while not any("->" in line for line in logged) and time.monotonic() < deadline:
                time.sleep(0.01)
    if leaves:
        assert list(tmp_path.iterdir()) == []
        assert any(
            "the client left before the answer ended: not recorded" in line for line in logged
        ), logged
    else:
        [written] = tmp_path.iterdir()
        assert list(Cassette(written).events()) == [line.data for line in upstream.chunks]


def _closed_after_the_last_event(
    tmp_path: Path, cassette: Path, times: int, *, strict: bool = False
) -> tuple[RecordingProxy, list[str]]:
    """`times` answers through the proxy to `cassette`, each read over a bare socket until
    its last event and closed there (as the openai SDK does), then one read to its end,
    by which time every earlier answer's handler has ended: the proxy and its log."""
    logged: list[str] = []
    serve = CassetteServer([str(cassette)], match_on=None)
    proxy = RecordingProxy("http://placeholder", tmp_path, strict=strict, log=logged.append)
    named = {"x-harness-cassette": cassette.stem}
    with ServerThread(serve.app()) as serve_url:
        proxy.upstream = serve_url
        with ServerThread(proxy.app()) as url:
            for _ in range(times):
                got = read_then_close(url, "/v1/chat/completions", {**CHAT, "stream": True}, named)
                assert got.startswith(b"HTTP/1.1 200")
            assert _raw(url, "/v1/chat/completions", cassette.stem, {**CHAT, "stream": True})
            deadline = time.monotonic() + 30
            while len(proxy.written) < times + 1 and time.monotonic() < deadline:
                time.sleep(0.01)
    return proxy, logged


def test_a_client_closing_after_the_last_event_is_logged_as_answered_never_as_a_500(
    tmp_path: Path,
) -> None:
    """The openai SDK closes at `[DONE]`, before the chunked body's end: the proxy logs
    the answer it recorded, once, and no 500 nobody received."""
    proxy, logged = _closed_after_the_last_event(
        tmp_path, OPENAI_LIBRARY / "chat" / "text.jsonl", 20
    )
    assert len(proxy.written) == 21
    assert all(" -> 200, " in line and ": wrote " in line for line in logged), logged
    assert len(logged) == 21


def test_a_strict_refusal_is_logged_once_and_never_as_a_500(tmp_path: Path) -> None:
    """`--strict`: the client gets a 200 with the guard's error event and hangs up after
    it; the proxy logs that answer once, its refusal on its line, never a 500."""
    broken = OPENAI_LIBRARY / "chat" / "errors" / "stop_with_tool_calls.jsonl"
    proxy, logged = _closed_after_the_last_event(tmp_path, broken, 10, strict=True)
    assert len(proxy.written) == 11
    assert len(logged) == 11, logged
    assert all("-> 200 (--strict: stop_with_tool_calls" in line for line in logged), logged
    assert not any("500" in line for line in logged), logged
