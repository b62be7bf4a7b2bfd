"""Issue 37: a credential the harness holds or forwards is written and printed nowhere,
whatever field or message of the answer repeats it.

`Echo` is an upstream on 127.0.0.1 that repeats the key it was sent (the `Authorization`
or `x-api-key` header) everywhere it can: in extra fields of each event named like
credentials (`api_key`, `session_token`, `authorization`), in a field of no such name, in
the streamed text, in an in-band error, in a 401's body, and in an event its schema
refuses (whose message quotes the event). Each path that writes what it read (record for
the three APIs, the proxy, import, the cassette clients' record mode) is run against it,
and each checks first that the key did come back: a test that cannot fail is a defect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from aiohttp import web
from click.testing import CliRunner
from conftest import LIBRARY, OPENAI_LIBRARY

from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._interop.importer import import_recording
from harness._record.live import RecordingTransport, record
from harness_cli.main import cli

KEY = "sk-proj-ECHOED-secret-0123456789abcdef"
#: Fields named like credentials an echoing upstream adds to each event.
NAMED = ("api_key", "session_token", "authorization")
PATHS = {
    "anthropic": "/v1/messages",
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
}
STREAMS = {
    "anthropic": LIBRARY / "text_only.jsonl",
    "openai-chat": OPENAI_LIBRARY / "chat" / "text.jsonl",
    "openai-responses": OPENAI_LIBRARY / "responses" / "text.jsonl",
}


def _events(provider: str) -> list[dict[str, Any]]:
    return [line.data for line in Cassette(STREAMS[provider]).lines()]


def _echoed(event: dict[str, Any], key: str) -> dict[str, Any]:
    """`event` repeating `key`: under names like credentials, under a plain name, and in
    its text."""
    echoed = {**event, **{name: f"Bearer {key}" for name in NAMED}, "echo": f"you sent {key}"}
    for choice in echoed.get("choices", []):
        if isinstance(choice["delta"].get("content"), str):
            choice["delta"]["content"] += f" {key}"
    if isinstance(echoed.get("delta"), str):  # a Responses text delta
        echoed["delta"] += f" {key}"
    delta = echoed.get("delta")
    if isinstance(delta, dict) and isinstance(delta.get("text"), str):
        echoed["delta"] = {**delta, "text": delta["text"] + f" {key}"}
    return echoed


def _inband_error(provider: str, key: str) -> dict[str, Any]:
    said = f"Incorrect API key provided: {key}"
    if provider == "openai-chat":
        return {"error": {"message": said, "type": "invalid_request_error", "code": None}}
    if provider == "openai-responses":
        return {"type": "error", "sequence_number": 9, "code": "bad", "message": said}
    return {"type": "error", "error": {"type": "authentication_error", "message": said}}


def _frame(provider: str, line: dict[str, Any]) -> bytes:
    if line.get("harness") == "done":
        return b"data: [DONE]\n\n"
    data = json.dumps(line)
    if provider == "openai-chat":
        return f"data: {data}\n\n".encode()
    name = line.get("type", "error")
    return f"event: {name}\ndata: {data}\n\n".encode()


def _body(provider: str, mode: str, key: str) -> bytes:
    events = [line for line in _events(provider) if line.get("harness") in (None, "done")]
    sent = [line if "harness" in line else _echoed(line, key) for line in events]
    if mode == "inband":
        sent = [*sent[:3], _inband_error(provider, key)]
    elif mode == "schema":  # a type no schema takes, quoted whole by its reason
        bad = {"choices": key} if provider == "openai-chat" else {"type": key}
        sent = [*sent[:2], {**sent[2], **bad}]
    return b"".join(_frame(provider, line) for line in sent)


class Echo:
    """An upstream of the three APIs that repeats the key each request carried, the way
    the request's `model` names: `stream`, `inband` (an error after a few events), `401`,
    `schema` (an event no schema takes)."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    async def answer(self, request: web.Request) -> web.StreamResponse:
        key = request.headers.get("x-api-key") or request.headers["authorization"].split()[-1]
        self.keys.append(key)
        provider = next(name for name, path in PATHS.items() if request.path.endswith(path[3:]))
        mode = (await request.json())["model"]
        if mode == "401":
            error = _inband_error(provider, key)
            return web.json_response(error if "error" in error else {"error": error}, status=401)
        body = _body(provider, mode, key)
        return web.Response(body=body, content_type="text/event-stream")

    def run(self) -> ServerThread:
        app = web.Application()
        for path in PATHS.values():
            app.router.add_post(path, self.answer)
            app.router.add_post(path.removeprefix("/v1"), self.answer)
        return ServerThread(app)


def _keyless(path: Path) -> None:
    """The file at `path` holds neither the key nor a field named like a credential."""
    text = path.read_text(encoding="utf-8")
    assert KEY not in text, path
    assert "Bearer" not in text, path
    for name in NAMED:
        assert f'"{name}"' not in text, (path, name)


def test_the_echo_repeats_the_key_it_was_sent() -> None:
    """The upstream the tests below run against does echo (or they could not fail)."""
    with Echo().run() as url:
        for provider, path in PATHS.items():
            headers = {"x-api-key" if provider == "anthropic" else "authorization": f"b {KEY}"}
            answer = httpx2.post(url + path, json={"model": "stream"}, headers=headers)
            assert answer.text.count(KEY) >= 5
            assert '"session_token"' in answer.text


# -- harness record ------------------------------------------------------------------------------


def _record_cli(provider: str, url: str, out: Path, mode: str, *extra: str) -> Any:
    request = out.parent / "request.json"
    said: dict[str, Any] = {"input": "hi"}
    if provider != "openai-responses":
        said = {"messages": [{"role": "user", "content": "hi"}]}
    request.write_text(json.dumps({"model": mode, **said}))
    base = url if provider == "anthropic" else f"{url}/v1"
    args = ["record", "--provider", provider, "--request", str(request), "--out", str(out)]
    return CliRunner().invoke(cli, [*args, "--base-url", base, *extra])


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize("provider", list(PATHS))
@pytest.mark.parametrize("mode", ["stream", "inband"])
def test_record_writes_and_prints_no_key_the_server_repeats(
    tmp_path: Path, provider: str, mode: str
) -> None:
    echo = Echo()
    out, vcr = tmp_path / "rec.jsonl", tmp_path / "rec.vcr.yaml"
    with echo.run() as url:
        result = _record_cli(provider, url, out, mode, "--vcr", str(vcr))
    assert echo.keys == [KEY]
    assert result.exit_code == 0, result.output
    assert KEY not in result.output  # stdout and stderr: the text shown as it arrives
    if mode == "stream":
        assert "***" in result.stderr  # the text came, the key masked in it
    _keyless(out)
    assert KEY not in vcr.read_text()
    events = list(Cassette(out).events())
    assert any(event.get("echo") == "you sent ***" for event in events)


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize(
    ("mode", "provider"),
    # The Messages reader refuses an unknown type before any schema: no event quoted.
    [*(("401", name) for name in PATHS), ("schema", "openai-chat"), ("schema", "openai-responses")],
)
def test_a_refused_recording_prints_no_key_and_leaves_the_old_file(
    tmp_path: Path, provider: str, mode: str
) -> None:
    echo = Echo()
    out = tmp_path / "rec.jsonl"
    out.write_text("old\n")
    with echo.run() as url:
        result = _record_cli(provider, url, out, mode, "--force")
    assert echo.keys == [KEY]
    assert result.exit_code == 1, result.output
    assert KEY not in result.output
    # the message quotes it masked, or not at all (a long quote is its length alone)
    assert "***" in result.stderr or " characters>" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    assert out.read_text() == "old\n"


def test_the_anthropic_recorder_masks_a_key_echoed_in_any_field(tmp_path: Path) -> None:
    echo = Echo()
    out = tmp_path / "rec.jsonl"
    shown: list[str] = []
    request = {"model": "stream", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    with echo.run() as url:
        record(request, str(out), api_key=KEY, base_url=url, show=shown.append)
    assert echo.keys == [KEY]
    _keyless(out)
    assert shown and KEY not in "".join(shown)


# -- harness proxy -------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", list(PATHS))
@pytest.mark.parametrize("mode", ["stream", "inband", "401"])
def test_the_proxy_writes_no_key_upstream_repeats(tmp_path: Path, provider: str, mode: str) -> None:
    echo = Echo()
    out = tmp_path / "out"
    header = "x-api-key" if provider == "anthropic" else "authorization"
    body: dict[str, Any] = {"model": mode, "stream": True, "messages": [], "input": "hi"}
    with echo.run() as upstream, ServerThread(RecordingProxy(upstream, out).app()) as url:
        answer = httpx2.post(url + PATHS[provider], json=body, headers={header: f"Bearer {KEY}"})
    assert KEY in answer.text  # the client gets what upstream sent, the key included
    [written] = list(out.glob("turn-*.jsonl"))
    _keyless(written)
    assert "***" in written.read_text()


def test_the_proxy_masks_a_key_given_in_the_query(tmp_path: Path) -> None:
    echo = Echo()
    out = tmp_path / "out"
    body = {"model": "401", "messages": []}
    with echo.run() as upstream, ServerThread(RecordingProxy(upstream, out).app()) as url:
        httpx2.post(
            f"{url}/v1/chat/completions?api-key={KEY}",
            json=body,
            headers={"authorization": f"Bearer {KEY}"},
        )
    [written] = list(out.glob("turn-*.jsonl"))
    _keyless(written)


# -- harness import ------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses"])
@pytest.mark.parametrize("mode", ["stream", "inband", "401"])
def test_import_drops_credential_fields_and_masks_the_recorded_key(
    tmp_path: Path, provider: str, mode: str
) -> None:
    if mode == "401":
        error = _inband_error(provider, KEY)
        status, body = 401, json.dumps(error if "error" in error else {"error": error})
    else:
        status, body = 200, _body(provider, mode, KEY).decode()
    interaction = {
        "request": {
            "method": "POST",
            "uri": f"https://api.openai.com{PATHS[provider]}",
            "body": json.dumps({"model": "gpt-4.1-mini", "stream": True}),
            "headers": {"authorization": [f"Bearer {KEY}"]},
        },
        "response": {
            "status": {"code": status, "message": "x"},
            "headers": {"content-type": ["text/event-stream"]},
            "body": {"string": body},
        },
    }
    source = tmp_path / "rec.yaml"
    source.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}))
    report = import_recording(str(source), str(tmp_path / "out"))
    assert report.skipped == []
    [(path, _)] = report.written
    _keyless(Path(path))
    assert "***" in Path(path).read_text()


# -- the cassette clients' record mode -----------------------------------------------------------


@pytest.mark.parametrize("provider", list(PATHS))
def test_the_recording_transport_writes_no_key_upstream_repeats(
    tmp_path: Path, provider: str
) -> None:
    out = tmp_path / "rec.jsonl"
    transport = RecordingTransport(httpx2.HTTPTransport(), [out])
    header = "x-api-key" if provider == "anthropic" else "authorization"
    with Echo().run() as url, httpx2.Client(transport=transport) as client:
        answer = client.post(
            url + PATHS[provider],
            json={"model": "stream", "stream": True, "messages": []},
            headers={header: f"Bearer {KEY}"},
        )
    assert KEY in answer.text
    assert transport.errors == []
    _keyless(out)
