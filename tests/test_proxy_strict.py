"""`harness proxy --strict`: a broken stream ends, at the event that breaks it, in an SSE
`error` event naming the code, so every SDK raises; good streams pass as they are. A
broken non-streaming `Message`, and an answer that cannot be checked (a compressed
stream, a body past the cap), become the API's 502 error with `x-should-retry: false`:
the SDK raises after one request, never retrying."""

from __future__ import annotations

import gzip as gzip_module
import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from aiohttp import web
from conftest import (
    LIBRARY,
    NAN_TOOL_INPUT,
    NODE_MODULES,
    library_cassettes,
    typescript_final_messages,
)
from fake_api import FakeMessagesAPI

from harness._cassette.codec import Cassette
from harness._cassette.sessions import turn_files
from harness._exceptions import StreamProtocolError
from harness._http import proxy as proxy_module
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._providers.anthropic.message import message_from_events
from harness._providers.sse import encode_event
from harness._redact import EXCERPT_LENGTH, MIN_SECRET_LENGTH
from harness._replay.direct import replay_outcome
from harness._strict.guard import STRICT_ERROR_TYPE

REQUEST: dict[str, Any] = {
    "model": "claude-harness-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "strict proxy"}],
}
CASSETTES = [path for path in library_cassettes() if "sessions" not in path.parts]


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
    # The client has its answer before the proxy's cassette is in place, and an earlier
    # test's may still land: wait for this one's among the new recordings.
    deadline, codes = time.monotonic() + 30, []
    while "invalid_tool_json" not in codes and time.monotonic() < deadline:
        time.sleep(0.01)
        errors = [replay_outcome(path).error for path in proxy.written[before:]]
        codes = [error.code for error in errors if isinstance(error, StreamProtocolError)]
    assert "invalid_tool_json" in codes


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
    lines = typescript_final_messages(chain[0], names)
    assert lines["two_tools.jsonl"]["stop_reason"] == "tool_use"
    for name in names[1:]:
        code = Path(name).stem
        assert lines[name]["error"] == "APIError"
        # the SDK words its error from the body its own way (one release quotes the JSON,
        # another the message, then the path and type): the code is there either way
        assert code in lines[name]["message"]
        assert "stream protocol error" in lines[name]["message"]


def _events(name: str) -> list[dict[str, Any]]:
    return list(Cassette(LIBRARY / name).events())


@contextmanager
def _proxied(
    api: FakeMessagesAPI, out: Path, *, strict: bool = True
) -> Iterator[tuple[str, RecordingProxy, list[str]]]:
    """`api` behind a recording proxy (strict by default): its URL, itself, its log."""
    log: list[str] = []
    proxy = RecordingProxy(api.base_url, out, log=log.append, strict=strict)
    with api, ServerThread(proxy.app()) as url:
        yield url, proxy, log


def _retrying(url: str) -> anthropic.Anthropic:
    """The SDK as users have it: it retries a 5xx twice, unless told not to."""
    return anthropic.Anthropic(base_url=url, api_key="x", max_retries=2)


def test_a_good_message_passes_byte_for_byte_and_is_recorded(tmp_path: Path) -> None:
    events = _events("two_tools.jsonl")
    sent = json.dumps(message_from_events(events)).encode()  # what the fake API sends
    with _proxied(FakeMessagesAPI(events), tmp_path) as (url, proxy, _):
        answer = httpx2.post(f"{url}/v1/messages", json=REQUEST, headers=KEY)
        with _retrying(url) as client:
            message = client.messages.create(**REQUEST)
    assert answer.status_code == 200 and answer.content == sent
    assert "x-should-retry" not in answer.headers
    assert message.stop_reason == "tool_use"
    assert len(proxy.written) == 2
    assert replay_outcome(proxy.written[0]).error is None


KEY = {"x-api-key": "x"}
BROKEN_MESSAGES = ["errors/unsupported_stop_reason.jsonl", "errors/non_object_tool_input.jsonl"]


@pytest.mark.parametrize("name", BROKEN_MESSAGES)
@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
def test_a_broken_message_is_a_502_naming_the_code_and_the_sdk_does_not_retry(
    tmp_path: Path, name: str, gzip: bool
) -> None:
    events = _events(name)
    direct = replay_outcome(LIBRARY / name).error
    assert isinstance(direct, StreamProtocolError)
    api = FakeMessagesAPI(events, gzip=gzip)
    with (
        _proxied(api, tmp_path) as (url, proxy, log),
        _retrying(url) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        client.messages.create(**REQUEST)
    error = raised.value
    assert len(api.received) == 1, "x-should-retry: false: the SDK did not retry"
    assert isinstance(error, anthropic.InternalServerError) and error.status_code == 502
    assert error.response.headers["x-should-retry"] == "false"
    details = error.body["error"]  # type: ignore[index]
    assert details == {
        "type": STRICT_ERROR_TYPE,
        "code": direct.code,
        "message": f"{direct.code}: {direct}",
    }
    assert len(log) == 1 and direct.code in log[0], log  # one line for the one answer
    assert log[0].startswith(f"POST /v1/messages -> 502 (--strict: {direct.code}: ")
    # The recording keeps upstream's Message, so it replays to the same error.
    [recorded] = proxy.written
    replayed = replay_outcome(recorded).error
    assert isinstance(replayed, StreamProtocolError) and replayed.code == direct.code


def test_without_strict_a_broken_message_passes_as_it_is(tmp_path: Path) -> None:
    api = FakeMessagesAPI(_events("errors/unsupported_stop_reason.jsonl"))
    with _proxied(api, tmp_path, strict=False) as (url, _, _), _retrying(url) as client:
        assert client.messages.create(**REQUEST).stop_reason == "max_tokens"


def test_a_good_compressed_message_passes_as_upstream_sent_it(tmp_path: Path) -> None:
    events = _events("two_tools.jsonl")
    with (
        _proxied(FakeMessagesAPI(events, gzip=True), tmp_path) as (url, proxy, _),
        httpx2.stream("POST", f"{url}/v1/messages", json=REQUEST, headers=KEY) as answer,
    ):
        raw = b"".join(answer.iter_raw())
    assert answer.status_code == 200 and answer.headers["content-encoding"] == "gzip"
    assert gzip_module.decompress(raw) == json.dumps(message_from_events(events)).encode()
    assert len(proxy.written) == 1


def _refused(api: FakeMessagesAPI, out: Path, stream: bool) -> tuple[str, list[str]]:
    """The message of the 502 the SDK raises through a strict proxy, and the proxy's log;
    one upstream request, nothing recorded."""
    with (
        _proxied(api, out) as (url, proxy, log),
        _retrying(url) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        if stream:
            with client.messages.stream(**REQUEST) as events:
                events.until_done()
        else:
            client.messages.create(**REQUEST)
    assert len(api.received) == 1, "x-should-retry: false: the SDK did not retry"
    assert raised.value.status_code == 502
    assert raised.value.response.headers["x-should-retry"] == "false"
    assert proxy.written == [] and turn_files(out) == []
    details = raised.value.body["error"]  # type: ignore[index]
    return str(details["message"]), log


def test_a_compressed_stream_is_refused_before_any_of_it_is_sent(tmp_path: Path) -> None:
    api = FakeMessagesAPI(_events("two_tools.jsonl"), gzip=True)
    message, log = _refused(api, tmp_path, stream=True)
    assert api.received[0].headers["accept-encoding"] == "identity"
    assert message == (
        "harness proxy --strict: upstream compressed the stream (content-encoding: gzip) "
        "although asked for identity: it cannot be checked"
    )
    [line] = [line for line in log if "compressed" in line]
    assert "not recorded" in line


def test_a_message_past_the_cap_cannot_be_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxy_module, "MAX_BODY_BYTES", 100)
    api = FakeMessagesAPI(_events("two_tools.jsonl"))
    message, _ = _refused(api, tmp_path, stream=False)
    assert message == (
        "harness proxy --strict: the answer is over 100 bytes, the limit: it cannot be checked"
    )


UNREADABLE = {**message_from_events(_events("text_only.jsonl")), "content": ["not a block"]}


async def _awkward(request: web.Request) -> web.StreamResponse:
    """A Messages API answering a `Message` the adapter cannot read, or half a `Message`."""
    if request.headers.get("x-test-answer") == "unreadable":
        return web.json_response(UNREADABLE)
    if request.headers.get("x-test-answer") == "nan":
        return web.Response(body=NAN_TOOL_INPUT, content_type="application/json")
    body = json.dumps(message_from_events(_events("text_only.jsonl"))).encode()
    response = web.StreamResponse(headers={"content-type": "application/json"})
    response.content_length = len(body)
    await response.prepare(request)
    await response.write(body[: len(body) // 2])
    assert request.transport is not None
    request.transport.close()
    return response


@pytest.fixture
def awkward(tmp_path: Path) -> Iterator[tuple[str, RecordingProxy, list[str]]]:
    app = web.Application()
    app.router.add_post("/v1/messages", _awkward)
    log: list[str] = []
    with ServerThread(app) as upstream:
        proxy = RecordingProxy(upstream, tmp_path, log=log.append, strict=True)
        with ServerThread(proxy.app()) as url:
            yield url, proxy, log


def _answer(url: str, answer: str) -> httpx2.Response:
    headers = {**KEY, "x-test-answer": answer}
    return httpx2.post(f"{url}/v1/messages", json=REQUEST, headers=headers)


def test_a_message_read_as_the_sdks_read_it_nan_and_all_is_judged_by_the_rules(
    awkward: tuple[str, RecordingProxy, list[str]],
) -> None:
    url, _, _ = awkward
    answer = _answer(url, "nan")
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "invalid_tool_json"


def test_a_block_that_is_no_object_reads_as_empty_and_the_rest_is_judged(
    awkward: tuple[str, RecordingProxy, list[str]],
) -> None:
    # No rule reads such a block: the Message goes on, for the client to report.
    url, _, _ = awkward
    answer = _answer(url, "unreadable")
    assert answer.status_code == 200
    assert answer.json() == UNREADABLE


def test_a_message_upstream_breaks_off_is_a_502_the_sdk_may_retry(
    awkward: tuple[str, RecordingProxy, list[str]],
) -> None:
    url, proxy, log = awkward
    answer = _answer(url, "cut")
    assert answer.status_code == 502 and "x-should-retry" not in answer.headers
    assert answer.json()["error"]["message"] == "harness proxy: upstream broke off the answer"
    assert proxy.written == [] and len(log) == 1


def test_a_message_is_kept_by_the_recording_from_the_bytes_the_check_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One copy of a non-streaming answer as sent, and the same one as meant: the
    recording holds none of its own (`_Answer.feed`, which gathers one, is never called)."""

    def no_copy(self: object, piece: bytes) -> None:
        raise AssertionError("the recording gathered a copy of its own")

    monkeypatch.setattr(proxy_module._Answer, "feed", no_copy)
    for gzip in (False, True):
        out = tmp_path / str(gzip)
        api = FakeMessagesAPI(_events("two_tools.jsonl"), gzip=gzip)
        with _proxied(api, out) as (url, proxy, log), _retrying(url) as client:
            assert client.messages.create(**REQUEST).stop_reason == "tool_use"
        [recorded] = proxy.written
        assert replay_outcome(recorded).error is None, log


class _RawUpstream:
    """Upstream answering every Messages request with `body`, as a stream."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def messages(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        await response.write(self.body)
        await response.write_eof()
        return response


@contextmanager
def _raw_proxied(body: bytes, out: Path) -> Iterator[tuple[str, list[str]]]:
    app = web.Application()
    app.router.add_post("/v1/messages", _RawUpstream(body).messages)
    log: list[str] = []
    with ServerThread(app) as upstream:
        proxy = RecordingProxy(upstream, out, log=log.append, strict=True)
        with ServerThread(proxy.app()) as url:
            yield url, log


@pytest.mark.parametrize(
    ("tail", "code"),
    [
        (b"", "missing_message_stop"),  # message_stop with no blank line after it
        (b"\n", "missing_message_stop"),  # one line end: still no blank line
        (b"\xff", None),  # a last line that is not UTF-8: no SDK reads it
    ],
    ids=["no_line_end", "one_line_end", "not_utf8"],
)
def test_an_unterminated_last_line_is_a_strict_refusal_not_a_500(
    tmp_path: Path, tail: bytes, code: str | None
) -> None:
    events = _events("text_only.jsonl")
    body = b"".join(encode_event(event) for event in events)[:-2] + tail
    with _raw_proxied(body, tmp_path) as (url, log):
        seen, error = _stream_from(url)
    assert "message_delta" not in seen and error is not None
    assert not any("500" in line or "internal" in line for line in log), log
    if code is None:
        assert any("--strict: after event" in line and "not UTF-8" in line for line in log), log
        assert isinstance(error, anthropic.APIConnectionError | httpx2.HTTPError), repr(error)
    else:
        assert isinstance(error, anthropic.APIStatusError), repr(error)
        assert error.body["error"]["code"] == code  # type: ignore[index]
        [line] = log  # one line for the answer: its refusal and its recording
        assert f"-> 200 (--strict: {code}: the answer ends in an error event" in line
        assert "never reaches the code: the body ends before the blank line" in line


def _stream_from(url: str) -> tuple[list[str], BaseException | None]:
    seen: list[str] = []
    with anthropic.Anthropic(base_url=url, api_key="sk-any", max_retries=0) as client:
        try:
            for event in client.messages.create(**REQUEST, stream=True):
                seen.append(event.type)
        except Exception as error:
            return seen, error
    return seen, None


# -- what the error event quotes of the answer ---------------------------------------------------

STRICT_KEY = "sk-ant-strict-proxy-key-0123456789"


def _echoing_key() -> list[dict[str, Any]]:
    """A stream whose `stop_reason` is the key the client sent, said back."""
    events = _events("errors/unsupported_stop_reason.jsonl")
    return [
        {**event, "delta": {**event["delta"], "stop_reason": STRICT_KEY}}
        if event["type"] == "message_delta"
        else event
        for event in events
    ]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "message"])
def test_the_error_event_quotes_no_credential_the_answer_repeated(
    tmp_path: Path, stream: bool
) -> None:
    """The refusal names the `stop_reason` it refuses: one that is the client's key is
    masked, as in the recording and the log."""
    events = _echoing_key()
    body = b"".join(encode_event(event) for event in events)
    upstream = (
        _raw_proxied(body, tmp_path) if stream else _proxied(FakeMessagesAPI(events), tmp_path)
    )
    with (
        upstream as (url, *_),
        anthropic.Anthropic(base_url=url, api_key=STRICT_KEY, max_retries=0) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        if stream:
            for _ in client.messages.create(**REQUEST, stream=True):
                pass
        else:
            client.messages.create(**REQUEST)
    details = raised.value.body["error"]  # type: ignore[index]
    assert details["code"] == "unsupported_stop_reason"
    assert STRICT_KEY not in details["message"] and "***" in details["message"]


#: A key with capitals: a message that lower-cases what upstream said of it hides it from
#: masking as surely as one that cuts it.
CASED_KEY = "sk-ant-Strict-Proxy-KEY-0123456789"


async def _echoing_coding(request: web.Request) -> web.Response:
    """Upstream naming, as its answer's content coding, the key it was sent
    (`x-test-pad` characters in front of it)."""
    coding = "x" * int(request.headers["x-test-pad"]) + CASED_KEY
    streams = json.loads(await request.read()).get("stream") is True
    kind = "text/event-stream" if streams else "application/json"
    return web.Response(body=b"{}", headers={"content-type": kind, "content-encoding": coding})


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "message"])
@pytest.mark.parametrize("pad", [0, 20, 40], ids=["key", "across_the_old_cut", "long"])
def test_no_part_of_a_credential_upstream_names_as_its_content_coding_is_told(
    tmp_path: Path, stream: bool, pad: int
) -> None:
    """A coding strict cannot read is named whole, as sent, so that masking finds the
    key in it, or by its length: never cut short, never lower-cased."""
    app = web.Application()
    app.router.add_post("/v1/messages", _echoing_coding)
    log: list[str] = []
    with (
        ServerThread(app) as upstream,
        ServerThread(RecordingProxy(upstream, tmp_path, log=log.append, strict=True).app()) as url,
        anthropic.Anthropic(base_url=url, api_key=CASED_KEY, max_retries=0) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        client.messages.create(**REQUEST, stream=stream, extra_headers={"x-test-pad": str(pad)})
    message = raised.value.body["error"]["message"]  # type: ignore[index]
    said = [message, *log]
    assert len(log) == 1 and "content-encoding" in message, said
    length = pad + len(CASED_KEY)
    assert ("***" if length <= EXCERPT_LENGTH else f"<{length} characters>") in message, said
    for text in said:
        assert CASED_KEY[:MIN_SECRET_LENGTH].lower() not in text.lower()
