"""`harness proxy` in front of a scripted upstream: what the client sees, what is recorded."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import anthropic
import httpx2
import pytest
from aiohttp import web
from conftest import LIBRARY, raises_connection_error

from harness._cassette.codec import Cassette
from harness._cassette.sessions import turn_files
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._providers.sse import encode_event

KEY = "sk-ant-proxy-test-key-0123456789"
EVENTS = [line for line in Cassette(LIBRARY / "parallel_tools.jsonl").events()]
MESSAGE_REQUEST: dict[str, Any] = {
    "model": "claude-harness-test",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "list the files"}],
}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class Upstream:
    """A scripted Messages API: the `x-test-answer` header picks the answer."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.received: list[dict[str, str]] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self.messages)
        app.router.add_get("/v1/models", self.models)
        return app

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [], "has_more": False})

    async def messages(self, request: web.Request) -> web.StreamResponse:
        self.received.append(dict(request.headers))
        answer = request.headers.get("x-test-answer", "stream")
        if answer == "overloaded":
            headers = {"retry-after-ms": "1", "x-should-retry": "true", "request-id": "req_1"}
            return web.json_response(OVERLOADED, status=529, headers=headers)
        if answer == "unavailable":
            return web.Response(status=503, text="<html>busy</html>", content_type="text/html")
        if answer in ("echo-url", "echo-body"):  # a 400 quoting the request as received
            said = request.rel_url.raw_path_qs if answer == "echo-url" else await request.text()
            error = {"type": "error", "error": {"type": "invalid_request_error", "message": said}}
            return web.json_response(error, status=400)
        if answer == "big-headers":  # a header over the 8190 bytes aiohttp's client reads
            return web.json_response(OVERLOADED, status=529, headers={"x-big": "b" * 9000})
        if answer == "gzip":
            body = gzip.compress(b"".join(encode_event(event) for event in EVENTS))
            headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
            return web.Response(body=body, headers=headers)
        if answer == "json":
            from harness._providers.anthropic.message import message_from_events

            return web.json_response(message_from_events(EVENTS))
        response = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await response.prepare(request)
        for number, event in enumerate(EVENTS):
            if answer == "gated" and number == 1:
                await _wait(self.gate)
            if answer == "cut" and number == 4:
                await response.write(encode_event(event)[:10])
                assert request.transport is not None
                request.transport.close()
                return response
            await response.write(encode_event(event))
        await response.write_eof()
        return response


async def _wait(gate: threading.Event) -> None:
    import asyncio

    await asyncio.to_thread(gate.wait, 30)


@pytest.fixture
def upstream() -> Iterator[tuple[Upstream, str]]:
    scripted = Upstream()
    with ServerThread(scripted.app()) as url:
        yield scripted, url


@pytest.fixture
def proxied(upstream: tuple[Upstream, str], tmp_path: Path) -> Iterator[tuple[str, Path]]:
    out = tmp_path / "recorded"
    with ServerThread(RecordingProxy(upstream[1], out).app()) as url:
        yield url, out


def _client(url: str, answer: str = "stream") -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=url, api_key=KEY, max_retries=0, default_headers={"x-test-answer": answer}
    )


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_stream_is_recorded_with_an_arrival_offset_before_each_event(
    proxied: tuple[str, Path],
) -> None:
    url, out = proxied
    with _client(url) as client, client.messages.stream(**MESSAGE_REQUEST) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    [written] = sorted(out.iterdir())
    header, *lines = _lines(written)
    assert header["source"] == "recorded"
    assert header["request"] == MESSAGE_REQUEST
    assert lines[0::2] == [{"harness": "at", "ms": line["ms"]} for line in lines[0::2]]
    assert lines[1::2] == EVENTS


def test_the_api_key_reaches_upstream_and_is_written_nowhere(
    upstream: tuple[Upstream, str], proxied: tuple[str, Path]
) -> None:
    url, out = proxied
    with _client(url) as client, client.messages.stream(**MESSAGE_REQUEST) as stream:
        stream.until_done()
    received = upstream[0].received[0]
    assert KEY in (received.get("X-Api-Key", "") + received.get("Authorization", ""))
    for written in out.iterdir():
        assert KEY not in written.read_text()


def test_the_first_event_reaches_the_client_before_upstream_has_finished(
    upstream: tuple[Upstream, str], proxied: tuple[str, Path]
) -> None:
    """Upstream holds every event after the first until the client has read the first."""
    url, _ = proxied
    gate = upstream[0].gate
    with httpx2.Client(timeout=30) as client:
        body = {**MESSAGE_REQUEST, "stream": True}
        headers = {"x-api-key": KEY, "x-test-answer": "gated"}
        with client.stream("POST", f"{url}/v1/messages", json=body, headers=headers) as response:
            pieces = response.iter_bytes()
            first = next(pieces)
            assert first.startswith(b"event: message_start")
            gate.set()
            rest = b"".join(pieces)
    assert rest.endswith(encode_event(EVENTS[-1]))


def test_an_http_error_is_recorded_as_an_http_error_line(proxied: tuple[str, Path]) -> None:
    url, out = proxied
    with _client(url, "overloaded") as client, pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(**MESSAGE_REQUEST)
    assert raised.value.status_code == 529
    [written] = sorted(out.iterdir())
    _, *lines = _lines(written)
    assert lines[-1] == {
        "harness": "http_error",
        "status": 529,
        "headers": {"retry-after-ms": "1", "x-should-retry": "true"},
        "body": OVERLOADED,
    }


def test_a_non_streaming_answer_is_recorded_as_the_events_of_its_message(
    proxied: tuple[str, Path],
) -> None:
    url, out = proxied
    with _client(url, "json") as client:
        message = client.messages.create(**MESSAGE_REQUEST)
    assert [block.type for block in message.content] == ["text", "tool_use", "tool_use"]
    [written] = sorted(out.iterdir())
    header, *lines = _lines(written)
    assert header["synthesized_from"] == "message"
    from harness._providers.anthropic.message import message_from_events

    events = [line for line in lines if "type" in line]
    assert message_from_events(events) == message.model_dump(exclude_none=True) | {
        key: value for key, value in message_from_events(events).items() if value is None
    }


def test_an_upstream_drop_reaches_the_client_and_the_cassette_ends_in_a_cut(
    proxied: tuple[str, Path],
) -> None:
    url, out = proxied
    with (
        raises_connection_error("RemoteProtocolError"),
        _client(url, "cut").messages.stream(**MESSAGE_REQUEST) as stream,
    ):
        stream.until_done()
    [written] = sorted(out.iterdir())
    _, *lines = _lines(written)
    assert [line for line in lines if "type" in line] == EVENTS[:4]
    assert lines[-1] == {"harness": "cut"}


def test_a_compressed_stream_reaches_the_client_as_sent_and_is_recorded_decoded(
    proxied: tuple[str, Path],
) -> None:
    url, out = proxied
    with _client(url, "gzip") as client, client.messages.stream(**MESSAGE_REQUEST) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    [written] = sorted(out.iterdir())
    assert [line for line in _lines(written)[1:] if "type" in line] == EVENTS


def test_an_error_that_is_not_the_apis_json_passes_through_unrecorded(
    proxied: tuple[str, Path],
) -> None:
    url, out = proxied
    with (
        _client(url, "unavailable") as client,
        pytest.raises(anthropic.InternalServerError) as raised,
    ):
        client.messages.create(**MESSAGE_REQUEST)
    assert raised.value.status_code == 503
    assert not out.exists() or list(out.iterdir()) == []


def test_other_endpoints_pass_through_and_are_not_recorded(proxied: tuple[str, Path]) -> None:
    url, out = proxied
    with _client(url) as client:
        page = client.models.list()
    assert page.data == []
    assert not out.exists() or not list(out.iterdir())


def test_cassettes_are_named_in_arrival_order_after_those_already_there(
    upstream: tuple[Upstream, str], tmp_path: Path
) -> None:
    out = tmp_path / "session"
    out.mkdir()
    (out / "turn-0007.jsonl").write_text("")
    with ServerThread(RecordingProxy(upstream[1], out).app()) as url:
        for _ in range(3):
            with _client(url) as client, client.messages.stream(**MESSAGE_REQUEST) as stream:
                stream.until_done()
    names = [path.name for path in turn_files(out)]
    # numbered after the turn already there (a four-digit one, as the proxy of 0.1 wrote)
    assert names == ["turn-0007.jsonl", "turn-08.jsonl", "turn-09.jsonl", "turn-10.jsonl"]


def test_an_unreachable_upstream_is_the_apis_502_error(tmp_path: Path) -> None:
    unreachable = RecordingProxy("http://127.0.0.1:9", tmp_path).app()
    with (
        ServerThread(unreachable) as url,
        _client(url) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        client.messages.create(**MESSAGE_REQUEST)
    assert raised.value.status_code == 502
    body = raised.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"]["type"] == "api_error"
    assert "upstream http://127.0.0.1:9 unreachable" in body["error"]["message"]


# -- credentials upstream repeats in forms the request did not send them in ----------------------

#: Query credentials as httpx sends them (`+` as %2B, `=` as %3D, `/` kept).
QUERY_CREDENTIALS = {
    "X-Amz-Security-Token": "IQoJb3JpZ2luX2VjEXAMPLE+SESSION/TOKEN==",
    "key": "AIza-proxy_key+with/odd=chars",
}


def test_a_query_credential_upstream_quotes_percent_encoded_is_written_nowhere(
    proxied: tuple[str, Path],
) -> None:
    url, out = proxied
    answer = httpx2.post(
        f"{url}/v1/messages",
        params={**QUERY_CREDENTIALS, "beta": "true"},
        json=MESSAGE_REQUEST,
        headers={"x-test-answer": "echo-url"},
    )
    assert answer.status_code == 400 and "%2BSESSION" in answer.text, "upstream quoted it"
    [written] = sorted(out.iterdir())
    text = written.read_text()
    for value in QUERY_CREDENTIALS.values():
        for form in (value, quote(value, safe="/"), quote(value, safe=""), quote_plus(value)):
            assert form not in text
    assert "X-Amz-Security-Token=***&key=***&beta=true" in text


def test_a_credential_nested_in_the_body_is_masked_where_upstream_repeats_it(
    proxied: tuple[str, Path],
) -> None:
    """The kept request has no credential-like field; their values, wherever upstream
    repeats them (a 400 quoting the body), are masked too."""
    url, out = proxied
    auth = {"api_key": "NESTED-API-KEY-VALUE-1", "deep": [{"client_secret": "NESTED-SECRET-1"}]}
    request = {**MESSAGE_REQUEST, "metadata": {"user_id": "u-1", "auth": auth}}
    answer = httpx2.post(f"{url}/v1/messages", json=request, headers={"x-test-answer": "echo-body"})
    assert answer.status_code == 400 and "NESTED-SECRET-1" in answer.text, "upstream quoted it"
    [written] = sorted(out.iterdir())
    header, *_, error = _lines(written)
    assert header["request"]["metadata"] == {"user_id": "u-1", "auth": {"deep": [{}]}}
    assert "NESTED" not in written.read_text()
    assert '"api_key":"***"' in error["body"]["error"]["message"]


@pytest.mark.parametrize("failure", ["invalid-url", "unreadable-answer"])
def test_a_502_quotes_neither_the_upstreams_password_nor_the_clients_query(
    upstream: tuple[Upstream, str], tmp_path: Path, failure: str
) -> None:
    """aiohttp's errors quote the whole URL they were given: the 502 says what went wrong
    without it (the upstream shown without its userinfo)."""
    address = "127.0.0.1:99999" if failure == "invalid-url" else upstream[1].partition("//")[2]
    proxy = RecordingProxy(f"http://admin:UPSTREAM-PASSWORD-1@{address}", tmp_path)
    with ServerThread(proxy.app()) as url:
        answer = httpx2.post(
            f"{url}/v1/messages",
            params={"key": "AIzaQUERYKEY0123"},
            json=MESSAGE_REQUEST,
            headers={"x-test-answer": "big-headers"},
        )
    assert answer.status_code == 502
    message = answer.json()["error"]["message"]
    assert message.startswith(f"harness proxy: upstream http://{address} unreachable: ")
    assert "UPSTREAM-PASSWORD-1" not in message and "AIzaQUERYKEY0123" not in message


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_the_streaming_decoder_reads_any_cut_as_the_sdk_reads_the_whole(
    seed: int, newline: bytes
) -> None:
    import random

    from harness._providers.sse import StreamingDecoder, events_from_body

    body = b"".join(encode_event(event) for event in EVENTS).replace(b"\n", newline)
    rng = random.Random(seed)
    decoder = StreamingDecoder()
    decoded: list[dict[str, Any]] = []
    start = 0
    while start < len(body):
        end = start + rng.randint(1, 12)
        decoded += decoder.feed(body[start:end])
        start = end
    assert [*decoded, *decoder.finish()] == events_from_body(body) == EVENTS
