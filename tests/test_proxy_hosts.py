"""`harness proxy` at Bedrock's and Vertex's paths: `AnthropicBedrock` and
`AnthropicVertex` pointed at the proxy, the proxy at `harness serve`; each call is
recorded as the direct API's request, its header naming the host, Bedrock's frames
read into the dialect's events; `--strict` ends a broken stream in the host's framing,
so the SDK raises. Credentials (SigV4's `Authorization`, `X-Amz-Security-Token`, a
Google bearer token, cookies) reach upstream and are written nowhere, even where an
upstream on 127.0.0.1 echoes them back in its events and its errors. A Bedrock model id
holding a `/` (an ARN, sent as `%2F`) is recorded, decoded, and guarded as any other."""

from __future__ import annotations

import contextlib
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from aiohttp import web
from conftest import LIBRARY, anthropic_on, not_installed

from harness._cassette.codec import Cassette
from harness._hosts import HOSTS, bedrock
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._providers.sse import encode_event
from harness._replay.direct import replay_outcome

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason=not_installed("botocore"))

ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}
HOST_NAMES = ["bedrock", "vertex"]
#: Bedrock model ids: a plain one, and an application inference profile's ARN, whose `/`
#: the SDK sends as `%2F` (the model one segment of the path).
MODELS = {
    "plain": "claude-sonnet-5",
    "arn": "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
}
SESSION_TOKEN = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"
COOKIE = "sessionid-abcdef0123456789"
GOOGLE_TOKEN = "ya29.a0AfH6SMBexampleGoogleBearer"


def _client(host: str, url: str, **options: Any) -> Any:
    base = url + "/v1" if host == "vertex" else url
    return anthropic_on(host, base_url=base, max_retries=0, **options)


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    server = CassetteServer([str(LIBRARY)], match_on=None)
    with ServerThread(server.app()) as url:
        yield url


def _proxy(upstream: str, out: Path, *, strict: bool = False) -> RecordingProxy:
    return RecordingProxy(upstream, out, strict=strict)


@pytest.mark.parametrize("host", HOST_NAMES)
def test_a_hosted_stream_is_recorded_as_the_dialects_events_under_a_header_naming_the_host(
    served: str, tmp_path: Path, host: str
) -> None:
    proxy = _proxy(served, tmp_path)
    with ServerThread(proxy.app()) as url, _client(host, url) as client:
        headers = {"x-harness-cassette": "two_tools.jsonl"}
        with client.messages.stream(**ASK, extra_headers=headers) as stream:
            message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    [written] = proxy.written
    recorded = Cassette(written)
    header = recorded.header
    assert header is not None
    assert header["host"] == host
    assert header["request"]["model"] == "claude-sonnet-5"
    assert "stream" not in header["request"]
    assert list(recorded.events()) == list(Cassette(LIBRARY / "two_tools.jsonl").events())
    assert replay_outcome(written).error is None


@pytest.mark.parametrize("host", HOST_NAMES)
def test_a_hosted_plain_call_is_recorded_as_the_events_of_its_message(
    served: str, tmp_path: Path, host: str
) -> None:
    proxy = _proxy(served, tmp_path)
    with ServerThread(proxy.app()) as url, _client(host, url) as client:
        headers = {"x-harness-cassette": "two_tools.jsonl"}
        message = client.messages.create(**ASK, extra_headers=headers)
    assert message.stop_reason == "tool_use"
    header = Cassette(proxy.written[0]).header
    assert header is not None
    assert header["host"] == host
    assert header["synthesized_from"] == "message"
    assert replay_outcome(proxy.written[0]).error is None


@pytest.mark.parametrize("host", HOST_NAMES)
def test_strict_ends_a_broken_hosted_stream_so_the_sdk_raises_the_code(
    served: str, tmp_path: Path, host: str
) -> None:
    proxy = _proxy(served, tmp_path, strict=True)
    seen: list[str] = []
    headers = {"x-harness-cassette": "errors/missing_message_stop.jsonl"}
    with (
        ServerThread(proxy.app()) as url,
        _client(host, url) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        for event in client.messages.create(**ASK, stream=True, extra_headers=headers):
            seen.append(event.type)
    assert raised.value.body["error"]["code"] == "missing_message_stop"
    assert "message_delta" not in seen
    outcome = replay_outcome(proxy.written[0]).error
    assert getattr(outcome, "code", None) == "missing_message_stop"


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_a_bedrock_model_id_holding_a_slash_is_recorded_decoded_and_guarded(
    served: str, tmp_path: Path, model: str
) -> None:
    proxy = _proxy(served, tmp_path, strict=True)
    headers = {"x-harness-cassette": "errors/missing_message_stop.jsonl"}
    with (
        ServerThread(proxy.app()) as url,
        _client("bedrock", url) as client,
        pytest.raises(anthropic.APIStatusError) as raised,
    ):
        list(client.messages.create(**{**ASK, "model": model}, stream=True, extra_headers=headers))
    assert raised.value.body["error"]["code"] == "missing_message_stop"
    header = Cassette(proxy.written[0]).header or {}
    assert (header["host"], header["request"]["model"]) == ("bedrock", model)


@pytest.mark.parametrize("host", HOST_NAMES)
def test_strict_passes_a_good_hosted_stream_as_it_is(
    served: str, tmp_path: Path, host: str
) -> None:
    proxy = _proxy(served, tmp_path, strict=True)
    headers = {"x-harness-cassette": "two_tools.jsonl"}
    with ServerThread(proxy.app()) as url, _client(host, url) as client:
        types = [
            event.type
            for event in client.messages.create(**ASK, stream=True, extra_headers=headers)
        ]
    expected = [e["type"] for e in Cassette(LIBRARY / "two_tools.jsonl").events()]
    assert types == [kind for kind in expected if kind != "ping"]


def _echo(request_headers: Any) -> str:
    """What an upstream that repeats its request's credentials says back."""
    return " ".join(f"{name}={value}" for name, value in request_headers.items())


def _echoing_events(said: str) -> list[dict[str, Any]]:
    return [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message",
         "role": "assistant", "content": [], "model": "m", "stop_reason": None,
         "usage": {"input_tokens": 1, "output_tokens": 0}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": said}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 1}, "echo": {"deep": [{"said": said}]}},
        {"type": "message_stop"},
    ]  # fmt: skip


def _echoing_upstream() -> web.Application:
    """Bedrock's and Vertex's streamed calls answered with the request's headers said
    back in a text delta and nested in an event; any other call, a 403 saying them."""
    app = web.Application()

    async def stream(request: web.Request) -> web.StreamResponse:
        events = _echoing_events(_echo(request.headers))
        if "invoke-with-response-stream" in request.path:
            body = b"".join(bedrock.encode_event(event) for event in events)
            return web.Response(body=body, content_type=bedrock.CONTENT_TYPE)
        body = b"".join(encode_event(event) for event in events)
        return web.Response(body=body, content_type="text/event-stream")

    async def refuse(request: web.Request) -> web.Response:
        error = {"type": "error", "error": {"type": "permission_error",
                                            "message": _echo(request.headers)}}  # fmt: skip
        return web.json_response(error, status=403)

    for found in HOSTS.values():
        app.router.add_post(found.stream_route, stream)
        app.router.add_post(found.plain_route, refuse)
    return app


def _credentials(host: str) -> dict[str, Any]:
    cookie = {"default_headers": {"Cookie": f"session={COOKIE}"}}
    if host == "bedrock":
        return {**cookie, "aws_session_token": SESSION_TOKEN}
    return cookie


@pytest.mark.parametrize("host", HOST_NAMES)
def test_credentials_reach_upstream_and_are_written_and_printed_nowhere(
    tmp_path: Path, host: str, capsys: pytest.CaptureFixture[str]
) -> None:
    logged: list[str] = []
    with ServerThread(_echoing_upstream()) as upstream:
        proxy = RecordingProxy(upstream, tmp_path, log=logged.append)
        with ServerThread(proxy.app()) as url:
            options = _credentials(host)
            if host == "bedrock":
                client = _client(host, url, **options)
            else:
                client = anthropic.AnthropicVertex(
                    region="us-east5",
                    project_id="a-project",
                    access_token=GOOGLE_TOKEN,
                    base_url=url + "/v1",
                    max_retries=0,
                    **options,
                )
            with client:
                said = [
                    event.delta.text
                    for event in client.messages.create(**ASK, stream=True)
                    if event.type == "content_block_delta"
                ]
                with pytest.raises(anthropic.PermissionDeniedError):
                    client.messages.create(**ASK)
    said_text = " ".join(said)
    secrets = [COOKIE]
    if host == "bedrock":
        secrets += [SESSION_TOKEN, "AKIDEXAMPLE"]
        assert "Signature=" in said_text, "SigV4 reached upstream"
        signature = said_text.split("Signature=")[1].split()[0].strip(",")
        secrets.append(signature)
    else:
        secrets.append(GOOGLE_TOKEN)
    for secret in secrets:
        assert secret in said_text, "upstream got every credential"
    assert len(proxy.written) == 2
    written = "".join(Path(path).read_text() for path in proxy.written)
    printed = "\n".join(logged) + capsys.readouterr().out
    for secret in secrets:
        assert secret not in written
        assert secret not in printed
    assert "***" in written, "what upstream repeated is masked, not dropped"
    lines = [json.loads(line) for line in Path(proxy.written[0]).read_text().splitlines()]
    assert lines[0]["host"] == host


# -- what the log quotes of a frame ------------------------------------------------------------

SIGNATURE = "ab12" * 16
SIGNED = {
    "Authorization": f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250101/us-east-1/bedrock/"
    f"aws4_request, SignedHeaders=host;x-amz-date, Signature={SIGNATURE}",
    "X-Amz-Security-Token": SESSION_TOKEN,
    "Cookie": f"session={COOKIE}",
}


def _raw_frame(headers: bytes) -> bytes:
    """A frame whose headers are `headers` as they are (a name twice, a type unknown)."""
    total = 16 + len(headers)
    prelude = total.to_bytes(4, "big") + len(headers).to_bytes(4, "big")
    start = prelude + zlib.crc32(prelude).to_bytes(4, "big") + headers
    return start + zlib.crc32(start).to_bytes(4, "big")


def _named(name: str, kind: bytes) -> bytes:
    return len(name).to_bytes(1, "big") + name.encode() + kind


def _bad_frame(echo: str, request: web.Request) -> bytes:
    """A frame quoting the request's credentials where the decoder's message names it:
    as its `:event-type`, whole or among all the request's headers, or as a header's name."""
    if echo == "event-type":
        return bedrock.encode_frame({":message-type": "event", ":event-type": SESSION_TOKEN}, b"")
    if echo == "event-type-long":
        said = _echo(request.headers)
        return bedrock.encode_frame({":message-type": "event", ":event-type": said}, b"")
    if echo == "unknown-type":
        return _raw_frame(_named(COOKIE, b"\x0a"))
    return _raw_frame(_named(SIGNATURE, b"\x00") * 2)  # a header named twice


@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
@pytest.mark.parametrize("echo", ["event-type", "event-type-long", "unknown-type", "twice"])
def test_a_frame_quoting_the_requests_credentials_is_logged_without_them(
    tmp_path: Path, echo: str, strict: bool
) -> None:
    """The line saying why a stream is not recorded (and, with `--strict`, why it was cut)
    quotes a frame's header: a short one whole, the request's credentials masked in it, a
    long one by its length alone."""

    async def stream(request: web.Request) -> web.Response:
        good = bedrock.encode_event(_echoing_events("hi")[0])
        body = good + _bad_frame(echo, request)
        return web.Response(body=body, content_type=bedrock.CONTENT_TYPE)

    app = web.Application()
    app.router.add_post(HOSTS["bedrock"].stream_route, stream)
    logged: list[str] = []
    with ServerThread(app) as upstream:
        proxy = RecordingProxy(upstream, tmp_path, log=logged.append, strict=strict)
        with ServerThread(proxy.app()) as url, contextlib.suppress(httpx2.HTTPError):
            httpx2.post(
                f"{url}/model/claude-sonnet-5/invoke-with-response-stream",
                json={"anthropic_version": "bedrock-2023-05-31", **ASK},
                headers=SIGNED,
            )
    printed = "\n".join(logged)
    assert "not recorded: frame 2: " in printed and proxy.written == []
    assert ("--strict: frame 2: " in printed) is strict
    for secret in [SESSION_TOKEN, COOKIE, SIGNATURE, "AKIDEXAMPLE"]:
        assert secret not in printed
    assert ("characters>" if echo == "event-type-long" else "***") in printed
