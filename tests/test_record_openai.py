"""`harness record --provider openai-chat|openai-responses`, against `harness serve` on 127.0.0.1.

serve answers with a library cassette's own framing (Chat's `data: [DONE]`, Responses'
`event:` lines), and a middleware keeps each request it received, so the tests see what
the recorder sent (the key as `Authorization: Bearer`, the body with `stream: true`) and
that the cassette written holds none of it but the request. No live API: a live
recording is `test_a_live_recording_replays`, which skips without `OPENAI_API_KEY`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from click.testing import CliRunner, Result
from conftest import OPENAI_LIBRARY

from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._interop.importer import import_recording
from harness._replay.direct import replay_outcome
from harness_cli.main import cli

KEY = "sk-proj-DUMMY-offline-openai-key-0123456789"
#: The real key, if the environment has one: the live test's opt-in.
LIVE_KEY = os.environ.get("OPENAI_API_KEY")
APIS = {"openai-chat": "chat", "openai-responses": "responses"}
RATE_LIMITED = {
    "harness": "http_error",
    "status": 429,
    "headers": {"x-should-retry": "false"},
    "body": {"error": {"message": f"Rate limit for key {KEY}", "type": "requests"}},
}


class Served:
    """`harness serve` of one cassette, keeping each request it received."""

    def __init__(self, cassette: Path) -> None:
        self.cassette = cassette
        self.received: list[tuple[str, dict[str, str], Any]] = []

    @web.middleware
    async def keep(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        body = await request.read()
        self.received.append((request.path, dict(request.headers), json.loads(body or b"null")))
        return await handler(request)

    def run(self) -> ServerThread:
        app = CassetteServer([str(self.cassette)], match_on=None).app()
        app.middlewares.append(self.keep)
        return ServerThread(app)


@pytest.fixture(autouse=True)
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _record(provider: str, base_url: str | None, out: Path, *extra: str) -> Result:
    args = ["record", "--provider", provider, "--model", "gpt-4.1-mini", "--out", str(out)]
    base = [] if base_url is None else ["--base-url", base_url]
    return CliRunner().invoke(cli, [*args, "--prompt", "Weather in Paris?", *base, *extra])


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    path = tmp_path / "weather.json"
    path.write_text(json.dumps({"type": "object", "properties": {"city": {"type": "string"}}}))
    return path


@pytest.mark.parametrize("provider", list(APIS))
@pytest.mark.parametrize("name", ["text", "one_tool"])
def test_the_recording_holds_the_served_events_and_replays_the_same(
    tmp_path: Path, provider: str, name: str, schema: Path
) -> None:
    served = Served(OPENAI_LIBRARY / APIS[provider] / f"{name}.jsonl")
    out, vcr = tmp_path / "rec.jsonl", tmp_path / "rec.vcr.yaml"
    with served.run() as url:
        tool = ["--tool", f"get_weather={schema}", "--vcr", str(vcr)]
        result = _record(provider, f"{url}/v1", out, *tool)
    assert result.exit_code == 0, result.output
    original = Cassette(served.cassette)
    recorded = Cassette(out)
    assert list(recorded.events()) == list(original.events())
    assert replay_outcome(recorded).to_json_lines() == replay_outcome(original).to_json_lines()
    header = recorded.header or {}
    assert (header["provider"], header["source"], header["model"]) == (
        provider,
        "recorded",
        "gpt-4.1-mini",
    )
    [(path, headers, body)] = served.received
    assert path == f"/v1/{'chat/completions' if provider == 'openai-chat' else 'responses'}"
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert body == {**header["request"], "stream": True}
    assert "stream" not in header["request"]
    if provider == "openai-chat":
        assert body["messages"] == [{"role": "user", "content": "Weather in Paris?"}]
        assert body["tools"][0]["function"]["name"] == "get_weather"
    else:
        assert body["input"] == [{"role": "user", "content": "Weather in Paris?"}]
        assert body["tools"][0]["name"] == "get_weather"
    for written in (out, vcr):
        assert KEY not in written.read_text()
        assert "Bearer" not in written.read_text()
    imported = import_recording(str(vcr), str(tmp_path / "imported"))
    [(path, _)] = imported.written
    assert list(Cassette(path).events()) == list(original.events())  # the --vcr file reads back
    if name == "text":
        assert "Paris is the capital of France." in result.stderr
    assert result.stdout == f"wrote {out} and {vcr}: {len(list(original.events()))} events\n"


def test_every_chat_event_follows_its_offset_and_done_is_kept(tmp_path: Path) -> None:
    served = Served(OPENAI_LIBRARY / "chat/text.jsonl")
    out = tmp_path / "rec.jsonl"
    with served.run() as url:
        assert _record("openai-chat", f"{url}/v1", out).exit_code == 0
    lines = [line.data for line in Cassette(out).lines()]
    assert lines[-1] == {"harness": "done"}
    events = lines[:-1]
    assert [line.get("harness") for line in events[::2]] == ["at"] * (len(events) // 2)
    assert all("harness" not in line for line in events[1::2])


@pytest.mark.parametrize("provider", list(APIS))
def test_an_http_error_exits_1_in_one_line_writes_nothing_and_masks_the_key(
    tmp_path: Path, provider: str
) -> None:
    cassette = tmp_path / "429.jsonl"
    header = {"cassette": 1, "description": "429", "provider": provider}
    cassette.write_text(json.dumps(header) + "\n" + json.dumps(RATE_LIMITED) + "\n")
    out = tmp_path / "rec.jsonl"
    out.write_text("old\n")
    with Served(cassette).run() as url:
        result = _record(provider, f"{url}/v1", out, "--force", "--vcr", str(tmp_path / "v.yaml"))
    assert result.exit_code == 1
    assert (
        result.stderr == "harness record: the API refused the request: 429 Rate limit for key ***\n"
    )
    assert out.read_text() == "old\n"
    assert not (tmp_path / "v.yaml").exists()


@pytest.mark.parametrize("provider", list(APIS))
def test_a_stream_cut_midway_exits_1_and_writes_nothing(tmp_path: Path, provider: str) -> None:
    lines = (OPENAI_LIBRARY / APIS[provider] / "text.jsonl").read_text().splitlines()
    cassette = tmp_path / "cut.jsonl"
    cut = [*lines[:4], json.dumps({"harness": "cut", "after_bytes": 9}), *lines[4:]]
    cassette.write_text("\n".join(cut) + "\n")
    out = tmp_path / "rec.jsonl"
    with Served(cassette).run() as url:
        result = _record(provider, f"{url}/v1", out)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(
        "harness record: connection failed or dropped after 3 events ("
    )
    assert result.stderr.splitlines()[-1].endswith("); nothing written")
    assert not out.exists()


def test_the_base_url_comes_from_openai_base_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = Served(OPENAI_LIBRARY / "responses/text.jsonl")
    with served.run() as url:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/never")
        result = _record("openai-responses", None, tmp_path / "rec.jsonl", "--system", "Be brief.")
    assert result.exit_code == 0, result.output
    [(_, _, body)] = served.received
    assert body["instructions"] == "Be brief."


def test_a_request_file_is_the_body_and_the_options_override_it(tmp_path: Path) -> None:
    request = {"model": "other", "messages": [{"role": "user", "content": "x"}], "seed": 7}
    (tmp_path / "body.json").write_text(json.dumps({**request, "stream": False}))
    served = Served(OPENAI_LIBRARY / "chat/text.jsonl")
    with served.run() as url:
        args = ["record", "--provider", "openai-chat", "--request", str(tmp_path / "body.json")]
        more = ["--model", "gpt-4.1-mini", "--max-tokens", "9", "--base-url", f"{url}/v1"]
        result = CliRunner().invoke(cli, [*args, *more, "--out", str(tmp_path / "rec.jsonl")])
    assert result.exit_code == 0, result.output
    [(_, _, body)] = served.received
    sent = {**request, "model": "gpt-4.1-mini", "max_completion_tokens": 9, "stream": True}
    assert body == sent


@pytest.mark.parametrize("provider", list(APIS))
def test_without_the_key_one_line_exit_2_and_nothing_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-this-one")
    result = _record(provider, "http://127.0.0.1:9", tmp_path / "rec.jsonl")
    assert result.exit_code == 2
    assert result.stderr == (
        "harness record: OPENAI_API_KEY is not set: recording calls the live API "
        "(and is billed); set it to opt in\n"
    )
    assert not (tmp_path / "rec.jsonl").exists()


def test_chat_system_without_prompt_is_one_line_exit_2(tmp_path: Path) -> None:
    args = ["record", "--provider", "openai-chat", "--model", "m", "--system", "s"]
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "rec.jsonl")])
    assert result.exit_code == 2
    assert result.stderr == (
        "harness record: --system needs --prompt with --provider openai-chat: it is a message\n"
    )


def test_the_help_documents_the_openai_providers() -> None:
    result = CliRunner().invoke(cli, ["record", "--help"])
    text = " ".join(result.output.split())
    for said in (
        "--provider",
        "openai-chat",
        "openai-responses",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        assert said in text


@pytest.mark.slow
def test_recording_never_imports_the_openai_sdk(tmp_path: Path) -> None:
    served = Served(OPENAI_LIBRARY / "chat/text.jsonl")
    code = (
        "import sys; from harness_cli.main import cli\n"
        "try:\n    cli(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('openai' in sys.modules)"
    )
    with served.run() as url:
        args = ["record", "--provider", "openai-chat", "--model", "m", "--prompt", "p"]
        where = ["--base-url", f"{url}/v1", "--out", str(tmp_path / "rec.jsonl")]
        env = {**os.environ, "OPENAI_API_KEY": KEY}
        done = subprocess.run(
            [sys.executable, "-c", code, *args, *where],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    assert done.stdout.splitlines()[-1] == "False", done.stderr
    assert (tmp_path / "rec.jsonl").exists()


@pytest.mark.skipif(not LIVE_KEY, reason="a live, billed recording: needs OPENAI_API_KEY")
@pytest.mark.parametrize("provider", list(APIS))
def test_a_live_recording_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", LIVE_KEY or "")
    out = tmp_path / "live.jsonl"
    args = ["record", "--provider", provider, "--model", "gpt-4.1-mini", "--prompt", "Say hi"]
    result = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert replay_outcome(Cassette(out)).completed


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("--timeout", "no byte arrived for 0.3 s (--timeout) after 2 events; nothing written"),
        ("--max-duration", "the recording took longer than 0.3 s (--max-duration) after 2 events"),
    ],
    ids=["timeout", "max-duration"],
)
@pytest.mark.slow
def test_silence_past_the_timeout_or_a_recording_too_long_writes_nothing(
    tmp_path: Path, option: str, said: str
) -> None:
    """A stall of 3 s after two chunks: `--timeout 0.3` gives up on the silence, and
    `--max-duration 0.3` on the whole (the stall outlasts both)."""
    lines = (OPENAI_LIBRARY / "chat/text.jsonl").read_text().splitlines()
    cassette = tmp_path / "stalled.jsonl"
    stalled = [*lines[:3], json.dumps({"harness": "stall", "ms": 3000}), *lines[3:]]
    cassette.write_text("\n".join(stalled) + "\n")
    out = tmp_path / "rec.jsonl"
    with Served(cassette).run() as url:
        result = _record("openai-chat", f"{url}/v1", out, option, "0.3")
    assert result.exit_code == 1
    assert said in result.stderr.splitlines()[-1]
    assert not out.exists()


HOSTILE = {
    "json": ("application/json", b'{"id": "chatcmpl-1", "object": "chat.completion"}'),
    "not_json": ("text/event-stream", b"data: {nope\n\n"),
    "directive": ("text/event-stream", b'data: {"harness": "cut"}\n\ndata: [DONE]\n\n'),
    "empty": ("text/event-stream", b"data: [DONE]\n\n"),
}


@pytest.mark.parametrize("answer", list(HOSTILE))
def test_a_body_that_is_no_stream_of_events_exits_1_and_writes_nothing(
    tmp_path: Path, answer: str
) -> None:
    async def serve(request: web.Request) -> web.Response:
        content_type, body = HOSTILE[answer]
        return web.Response(body=body, headers={"content-type": content_type})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", serve)
    out = tmp_path / "rec.jsonl"
    with ServerThread(app) as url:
        result = _record("openai-chat", f"{url}/v1", out, "--vcr", str(tmp_path / "v.yaml"))
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("harness record: the response is not a stream of events: ")
    assert line.endswith("; nothing written")
    assert list(tmp_path.iterdir()) == []
