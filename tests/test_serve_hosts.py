"""`harness serve` at Bedrock's and Vertex's paths: every Anthropic library cassette read
by `anthropic.AnthropicBedrock` and `anthropic.AnthropicVertex` pointed at the server (as
their docs build them, `base_url=` the server, Vertex's below `/v1`) exactly as
`anthropic.Anthropic` reads it, streamed and not; Bedrock's answer in AWS event-stream
frames, and the wire directives (a cut mid-frame, an HTTP error, a stall) as on SSE; a
Bedrock model id holding a `/` (an ARN, sent as `%2F`) served and kept as any other."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    LIBRARY,
    anthropic_on,
    as_direct,
    boto3_runtime,
    library_cassettes,
    not_installed,
)

from harness._hosts import bedrock
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("botocore", reason=not_installed("botocore"))

CASSETTES = library_cassettes()
NAMES = [str(path.relative_to(LIBRARY)) for path in CASSETTES]
ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}
#: Bedrock model ids: a plain one, and an application inference profile's ARN, whose `/`
#: the SDKs send as `%2F` (the model one segment of the path).
MODELS = {
    "plain": "claude-sonnet-5",
    "arn": "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
}


def _client(host: str, url: str) -> Any:
    """`host`'s client pointed at `harness serve` (Vertex's base URL ends in `/v1`)."""
    return anthropic_on(host, base_url=url + "/v1" if host == "vertex" else url, max_retries=0)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, CassetteServer]]:
    server = CassetteServer([str(LIBRARY)], match_on=None)
    with ServerThread(server.app()) as url:
        yield url, server


def _outcome(client: Any, name: str, *, stream: bool) -> list[Any]:
    """What the code sees: each event (or the message), then what was raised (its class
    and body; its message names the path, which is the host's)."""
    seen: list[Any] = []
    headers = {"x-harness-cassette": name}
    try:
        if stream:
            for event in client.messages.create(**ASK, stream=True, extra_headers=headers):
                seen.append(event.to_dict(warnings=False))
        else:
            seen.append(
                client.messages.create(**ASK, extra_headers=headers).to_dict(warnings=False)
            )
    except anthropic.APIStatusError as error:
        seen.append((type(error).__name__, error.status_code, as_direct(error.body)))
    except Exception as error:  # a cut: the connection error the client raises
        seen.append(type(error).__name__)
    return seen


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("host", ["bedrock", "vertex"])
@pytest.mark.slow
def test_every_anthropic_cassette_is_served_at_the_hosts_paths_as_on_the_direct_api(
    served: tuple[str, CassetteServer], host: str, stream: bool
) -> None:
    url, server = served
    before = server.replayer.captured
    with _client("direct", url) as direct, _client(host, url) as hosted:
        for name in NAMES:
            assert _outcome(hosted, name, stream=stream) == _outcome(direct, name, stream=stream)
    asked = [request.path for request in list(server.replayer.requests)[before:]]
    paths = asked[::2]  # the hosted client's, then the direct one's, for each cassette
    assert len(paths) == len(NAMES)
    suffix = {
        ("bedrock", True): "/invoke-with-response-stream",
        ("bedrock", False): "/invoke",
        ("vertex", True): ":streamRawPredict",
        ("vertex", False): ":rawPredict",
    }[host, stream]
    assert all(path.endswith(suffix) for path in paths), paths


def test_a_bedrock_stream_is_event_stream_frames_of_the_cassettes_events(
    served: tuple[str, CassetteServer],
) -> None:
    url, _ = served
    with _client("bedrock", url) as client:
        response = client.messages.with_streaming_response.create(
            **ASK, stream=True, extra_headers={"x-harness-cassette": "text_only"}
        )
        with response as answer:
            assert answer.headers["content-type"] == bedrock.CONTENT_TYPE
            body = b"".join(answer.http_response.iter_bytes())
    decoder = bedrock.EventDecoder()
    events = decoder.feed(body)
    decoder.finish()
    lines = (LIBRARY / "text_only.jsonl").read_text().splitlines()[1:]
    assert events == [json.loads(line) for line in lines]


def _variant(tmp_path: Path, name: str, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


EVENTS = [json.loads(line) for line in (LIBRARY / "text_only.jsonl").read_text().splitlines()[1:]]
RATE_LIMITED = {
    "harness": "http_error",
    "status": 429,
    "headers": {"x-should-retry": "false"},
    "body": {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
}
DIRECTIVES = {
    "cut-mid-frame": [*EVENTS[:3], {"harness": "cut", "after_bytes": 9}, *EVENTS[3:]],
    "cut": [*EVENTS[:3], {"harness": "cut"}],
    "http-error": [RATE_LIMITED],
    "stall": [*EVENTS[:2], {"harness": "stall", "ms": 20}, *EVENTS[2:]],
}


@pytest.mark.parametrize("host", ["bedrock", "vertex"])
@pytest.mark.parametrize("directive", sorted(DIRECTIVES))
def test_the_wire_directives_behave_on_the_hosts_as_on_the_direct_api(
    tmp_path: Path, host: str, directive: str
) -> None:
    _variant(tmp_path, "v.jsonl", DIRECTIVES[directive])
    server = CassetteServer([str(tmp_path)], match_on=None)
    with (
        ServerThread(server.app()) as url,
        _client(host, url) as hosted_client,
        _client("direct", url) as direct_client,
    ):
        hosted = _outcome(hosted_client, "v", stream=True)
        direct = _outcome(direct_client, "v", stream=True)
    assert hosted == direct
    if directive.startswith("cut"):
        # the two events before the cut (the SDK skips the ping), then the connection
        # error (as each SDK release names it)
        assert len(hosted) == 3 and hosted[-1] in {"RemoteProtocolError", "APIConnectionError"}
    if directive == "http-error":
        assert hosted == [("RateLimitError", 429, RATE_LIMITED["body"])]


def test_a_request_to_a_host_is_kept_as_the_direct_apis(
    served: tuple[str, CassetteServer],
) -> None:
    """Bedrock carries the model and `stream` in its path: `/_harness/requests` (and the
    match on `model`) read them back in the body."""
    url, server = served
    with _client("bedrock", url) as client:
        _outcome(client, "text_only", stream=True)
    kept = list(server.replayer.requests)[-1]
    assert kept.path == "/model/claude-sonnet-5/invoke-with-response-stream"
    assert kept.json["model"] == "claude-sonnet-5" and kept.json["stream"] is True
    assert "anthropic_version" in kept.json  # what the SDK adds on a host


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_a_bedrock_model_id_holding_a_slash_is_served_and_kept_decoded(
    served: tuple[str, CassetteServer], model: str, stream: bool
) -> None:
    url, server = served
    headers = {"x-harness-cassette": "two_tools"}
    with _client("bedrock", url) as client:
        if stream:
            with client.messages.stream(**{**ASK, "model": model}, extra_headers=headers) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**{**ASK, "model": model}, extra_headers=headers)
    assert message.stop_reason == "tool_use"
    kept = list(server.replayer.requests)[-1]
    assert kept.json["model"] == model and kept.json.get("stream") is (True if stream else None)


def _boto3_client(url: str) -> Any:
    pytest.importorskip("boto3", reason=not_installed("boto3"))
    return boto3_runtime(url)


BEDROCK_BODY = json.dumps(
    {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": ASK["messages"]}
)


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_boto3_reads_a_cassette_through_invoke_model_with_response_stream(
    served: tuple[str, CassetteServer], model: str
) -> None:
    """boto3's own client, `endpoint_url=` the server: each `chunk` event's `bytes` is a
    cassette event; it sends no content type unless told, and is signed, so it is taken."""
    url, server = served
    client = _boto3_client(url)

    def name_the_cassette(request: Any, **_: Any) -> None:
        request.headers["x-harness-cassette"] = "two_tools"

    client.meta.events.register("before-sign.bedrock-runtime.*", name_the_cassette)
    answer = client.invoke_model_with_response_stream(modelId=model, body=BEDROCK_BODY)
    events = [json.loads(event["chunk"]["bytes"]) for event in answer["body"]]
    lines = (LIBRARY / "two_tools.jsonl").read_text().splitlines()[1:]
    assert events == [json.loads(line) for line in lines]
    plain = client.invoke_model(modelId=model, body=BEDROCK_BODY)
    message = json.loads(plain["body"].read())
    assert message["stop_reason"] == "tool_use"
    assert [block["type"] for block in message["content"]] == ["text", "tool_use", "tool_use"]
    assert list(server.replayer.requests)[-1].json["model"] == model  # boto3 quotes its `:` too


def test_an_unsigned_body_without_a_content_type_is_still_refused_at_a_hosts_path(
    served: tuple[str, CassetteServer],
) -> None:
    """What a web page can send unpreflighted never reaches the server's state."""
    url, _ = served
    import httpx2

    answer = httpx2.post(
        f"{url}/model/m/invoke-with-response-stream",
        content=BEDROCK_BODY.encode(),
        headers={"content-type": ""},
    )
    assert answer.status_code == 415


@pytest.mark.parametrize("host", ["bedrock", "vertex"])
def test_the_served_line_points_the_hosted_clients_at_the_server_by_their_variables(
    served: tuple[str, CassetteServer], host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness._http.hosting import base_url_line

    url, server = served
    line = base_url_line(url, server.providers)
    for assignment in line.split():
        name, _, value = assignment.partition("=")
        monkeypatch.setenv(name, value)
    with anthropic_on(host, max_retries=0) as client:  # no base_url: the SDK reads its own
        headers = {"x-harness-cassette": "two_tools.jsonl"}
        message = client.messages.create(**ASK, extra_headers=headers)
    assert message.stop_reason == "tool_use"
