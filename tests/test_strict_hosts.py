"""`harness.strict` and `StrictTransport` for Anthropic on Bedrock and Vertex: every
library cassette's verdict through `AnthropicBedrock` (the guard reading Bedrock's
frames, handing them on byte for byte) and `AnthropicVertex` (the same SSE at Vertex's
path) is the direct client's; a bad or cut frame raises its `FrameError` code as the
SDK's own error; a model id holding a `/` (an ARN, sent as `%2F`) is guarded as any."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
from conftest import (
    LIBRARY,
    OTHER_BEDROCK_DIALECTS,
    anthropic_on,
    bedrock_invoked_at,
    library_cassettes,
    not_installed,
)

import harness
from harness import StrictTransport
from harness._cassette.codec import Cassette
from harness._hosts import bedrock, vertex
from harness._http.hosting import ServerThread
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._providers.anthropic.guard import AnthropicReader
from harness._providers.eventstream import FrameDecoder, FrameError
from harness._replay.clients import HOST
from harness._strict.dialects import provider_of
from harness._strict.guard import StreamGuard

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason=not_installed("botocore"))

CASSETTES = library_cassettes()
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}
#: Bedrock model ids: a plain one, and an application inference profile's ARN, whose `/`
#: the SDK sends as `%2F` (the model one segment of the path).
MODELS = {
    "plain": "claude-sonnet-5",
    "arn": "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
}
STREAM_PATHS = {
    "bedrock": "/model/claude-sonnet-5/invoke-with-response-stream",
    "vertex": "/v1/projects/p/locations/l/publishers/anthropic/models/claude:streamRawPredict",
}


def _verdict(client: Any, *, stream: bool) -> list[Any]:
    """The events the code read, then what was raised: the guard's code, or the SDK's
    error class."""
    seen: list[Any] = []
    try:
        if stream:
            seen += [event.type for event in client.messages.create(**ASK, stream=True)]
        else:
            seen.append(client.messages.create(**ASK).stop_reason)
    except harness.StreamProtocolError as error:
        seen.append(("refused", error.code))
    except anthropic.APIStatusError as error:
        seen.append((type(error).__name__, error.status_code))
    return seen


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_every_cassettes_verdict_on_a_host_is_the_direct_clients(host: HOST, stream: bool) -> None:
    refused = 0
    for path in CASSETTES:
        with (
            harness.cassette_client(path, host=host, match_on=None, max_retries=0) as hosted,
            harness.cassette_client(path, match_on=None, max_retries=0) as direct,
        ):
            verdict = _verdict(harness.strict(hosted), stream=stream)
            assert verdict == _verdict(harness.strict(direct), stream=stream), path
            refused += isinstance(verdict[-1], tuple) and verdict[-1][0] == "refused"
    # every broken stream but the 529 (the API's own error) refused; of the Messages the
    # broken ones fold into, some
    errors = len(list((LIBRARY / "errors").glob("*.jsonl")))
    assert refused >= (errors - 1 if stream else 1)


@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_the_async_clients_on_a_host_are_guarded_too(host: HOST) -> None:
    path = LIBRARY / "errors" / "unclosed_tool_blocks.jsonl"

    async def read() -> str:
        async with harness.async_cassette_client(path, host=host, match_on=None) as client:
            try:
                async for _ in await harness.strict(client).messages.create(**ASK, stream=True):
                    pass
            except harness.StreamProtocolError as error:
                return error.code
        return "passed"

    assert asyncio.run(read()) == "unclosed_tool_blocks"


def _bedrock_body(path: Path) -> bytes:
    return b"".join(bedrock.encode_event(event) for event in Cassette(path).events())


@pytest.mark.parametrize("size", [1, 5, 64, None], ids=["1", "5", "64", "whole"])
def test_the_guard_hands_bedrocks_frames_on_as_they_came(size: int | None) -> None:
    body = _bedrock_body(LIBRARY / "two_tools.jsonl")
    guard = StreamGuard(reader=bedrock.FramedReader(AnthropicReader()))
    step = size or len(body)
    released = b"".join(guard.feed(body[at : at + step]) for at in range(0, len(body), step))
    assert released + guard.finish() == body
    assert guard.failure is None


def _client_over(body: bytes, *, by: str = "StrictTransport") -> Any:
    """`AnthropicBedrock` answered `body`, guarded by `StrictTransport` or `harness.strict`."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": bedrock.CONTENT_TYPE}
        return httpx2.Response(200, headers=headers, content=body)

    mock = httpx2.MockTransport(answer)
    if by == "strict":
        client = anthropic_on("bedrock", max_retries=0, http_client=httpx2.Client(transport=mock))
        return harness.strict(client)
    transport = StrictTransport(mock)
    return anthropic_on("bedrock", max_retries=0, http_client=httpx2.Client(transport=transport))


def _flipped(body: bytes, at: int) -> bytes:
    return body[:at] + bytes([body[at] ^ 1]) + body[at + 1 :]


GOOD = _bedrock_body(LIBRARY / "text_only.jsonl")
FIRST = len(bedrock.encode_event(next(Cassette(LIBRARY / "text_only.jsonl").events())))
BROKEN = {
    "prelude-crc": (_flipped(GOOD, FIRST + 9), "bad_frame"),
    "message-crc": (_flipped(GOOD, FIRST + 20), "bad_frame"),
    "cut-in-prelude": (GOOD[: FIRST + 6], "truncated_frame"),
    "cut-in-payload": (GOOD[: FIRST + 40], "truncated_frame"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_bad_or_cut_frame_is_raised_as_the_sdks_own_error_with_its_code(name: str) -> None:
    body, code = BROKEN[name]
    with _client_over(body) as client, pytest.raises(FrameError) as raised:
        list(client.messages.create(**ASK, stream=True))
    assert raised.value.code == code
    assert isinstance(raised.value, anthropic.APIError)  # neither wrapped nor retried


def test_strict_transport_under_anthropic_bedrock_refuses_a_broken_stream() -> None:
    body = _bedrock_body(LIBRARY / "errors" / "missing_message_stop.jsonl")
    with _client_over(body) as client, pytest.raises(harness.StreamProtocolError) as raised:
        list(client.messages.create(**ASK, stream=True))
    assert raised.value.code == "missing_message_stop"
    with _client_over(GOOD) as client:
        assert [e.type for e in client.messages.create(**ASK, stream=True)][-1] == "message_stop"


@pytest.mark.parametrize("host", sorted(STREAM_PATHS))
def test_the_guard_claims_a_call_at_a_hosts_path_for_the_dialect_served_there(host: str) -> None:
    path = STREAM_PATHS[host]
    assert (bedrock.STREAM_PATH if host == "bedrock" else vertex.STREAM_PATH).search(path)
    found = provider_of("POST", path)
    assert found is not None and host in found.hosted
    assert provider_of("GET", path) is None


def test_the_errors_request_keeps_no_aws_session_token() -> None:
    """Temporary credentials (SSO, an assumed role) sign with a session token, sent as
    `x-amz-security-token`: the error's `request` holds it no more than the signature."""
    token = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN"
    served = CassetteServer([str(LIBRARY / "errors" / "missing_message_stop.jsonl")])
    with ServerThread(served.app()) as url:
        client = harness.strict(
            anthropic.AnthropicBedrock(
                aws_access_key="ASIAEXAMPLEKEYID",
                aws_secret_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                aws_session_token=token,
                aws_region="us-east-1",
                base_url=url,
                max_retries=0,
            )
        )
        with client, pytest.raises(harness.StreamProtocolError) as raised:
            list(client.messages.create(**ASK, stream=True))
    error: Any = raised.value
    assert error.code == "missing_message_stop"
    headers = error.request.headers
    assert "authorization" not in headers and "x-amz-security-token" not in headers
    assert token not in repr(headers) and headers["x-amz-date"]


@pytest.mark.parametrize("by", ["strict", "StrictTransport"])
@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_a_bedrock_model_id_holding_a_slash_is_guarded_as_any_other(model: str, by: str) -> None:
    ask = {**ASK, "model": model}
    with _client_over(GOOD, by=by) as client:
        assert [e.type for e in client.messages.create(**ask, stream=True)][-1] == "message_stop"
    broken = _bedrock_body(LIBRARY / "errors" / "missing_message_stop.jsonl")
    with (
        _client_over(broken, by=by) as client,
        pytest.raises(harness.StreamProtocolError) as raised,
    ):
        list(client.messages.create(**ask, stream=True))
    assert raised.value.code == "missing_message_stop"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_a_bedrock_cassette_client_answers_a_model_id_holding_a_slash(
    model: str, stream: bool
) -> None:
    """Answered in Bedrock's frames (a stream) or as a `Message`, the request kept with
    the model decoded, as the direct API's."""
    ask = {**ASK, "model": model}
    path = LIBRARY / "two_tools.jsonl"
    with harness.cassette_client(path, host="bedrock", match_on=None, max_retries=0) as client:
        guarded = harness.strict(client)
        if stream:
            with guarded.messages.stream(**ask) as events:
                message = events.get_final_message()
        else:
            message = guarded.messages.create(**ask)
        [asked] = harness.captured_requests(client)
    assert message.stop_reason == "tool_use"
    assert asked.json["model"] == model and asked.json.get("stream") is (True if stream else None)


def _frames_read(body: bytes) -> list[Any]:
    """The `bytes` of each chunk frame a Bedrock body holds, read as JSON."""
    framed = FrameDecoder()
    frames = framed.feed(body)
    framed.finish()
    return [json.loads(base64.b64decode(json.loads(frame.payload)["bytes"])) for frame in frames]


@pytest.mark.parametrize("model", OTHER_BEDROCK_DIALECTS)
def test_strict_transport_and_proxy_pass_another_models_invoke_stream_as_it_is(
    model: str, tmp_path: Path
) -> None:
    """Bedrock's invoke path serves every model: a call whose body is not a Messages call
    (no `anthropic_version`) is none of the guard's, nor the proxy's to record."""
    events = OTHER_BEDROCK_DIALECTS[model]
    path = f"/model/{quote(model, safe='')}/invoke-with-response-stream"
    body = {"prompt": "Say hello", "max_gen_len": 16}
    with bedrock_invoked_at(events) as url:
        transport = StrictTransport(httpx2.HTTPTransport())
        with httpx2.Client(transport=transport) as client:
            guarded = client.post(url + path, json=body)
        proxy = RecordingProxy(url, tmp_path, strict=True)
        with ServerThread(proxy.app()) as proxied:
            through = httpx2.post(proxied + path, json=body)
    assert _frames_read(guarded.content) == _frames_read(through.content) == events
    assert proxy.written == []


def test_a_messages_call_at_the_invoke_path_is_still_guarded_by_its_body() -> None:
    """The same path with a Messages body (`anthropic_version`, as AnthropicBedrock and
    Bedrock's Claude models ask) is judged by the Messages rules."""
    events = Cassette(LIBRARY / "errors" / "invalid_tool_json.jsonl").events()
    path = f"/model/{quote('anthropic.claude-sonnet-5', safe='')}/invoke-with-response-stream"
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 16, "messages": []}
    with bedrock_invoked_at(list(events)) as url:
        transport = StrictTransport(httpx2.HTTPTransport())
        with (
            httpx2.Client(transport=transport) as client,
            pytest.raises(harness.StreamProtocolError) as raised,
        ):
            client.post(url + path, json=body).read()
    assert raised.value.code == "invalid_tool_json"
