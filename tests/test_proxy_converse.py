"""`harness proxy` records Bedrock's ConverseStream: boto3's `bedrock-runtime` client
pointed at the proxy (`endpoint_url`, the `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` the proxy
prints), the proxy at `harness serve`. A stream's frames are read into its lines by the
provider's own `EventDecoder`, a `Converse` answer into the events a stream of it
carries. SigV4's `Authorization`, `X-Amz-Security-Token` and cookies reach upstream and
are written and printed nowhere, even where an upstream on 127.0.0.1 echoes them back;
`X-Amz-Date`, a timestamp, is no credential and stays as said. A model id holding a `/`
(an ARN, which boto3 sends as `%2F`) is recorded, and guarded, as any other."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import not_installed

from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread, base_url_line
from harness._http.proxy import RecordingProxy
from harness._http.server import CassetteServer
from harness._providers.bedrock_converse.framing import CONTENT_TYPE, PATHS, encode_event
from harness._replay.direct import replay_outcome

boto3 = pytest.importorskip("boto3", reason=not_installed("boto3"))

LIBRARY = Path(__file__).resolve().parent.parent / "cassettes" / "bedrock" / "converse"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
ASK: Any = {"modelId": MODEL, "messages": [{"role": "user", "content": [{"text": "Go"}]}]}
#: Model ids: a foundation model's, and an application inference profile's ARN, whose
#: `/` boto3 sends as `%2F` (the model one segment of the path).
MODELS = {
    "plain": MODEL,
    "arn": "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
}
ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN0123"
COOKIE = "sessionid-abcdef0123456789"


def _client(url: str, cassette: str | None = None) -> Any:
    """boto3's client at `url`, with dummy credentials passed explicitly, naming
    `cassette` (a header set before signing) and sending a cookie."""
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        aws_session_token=SESSION_TOKEN,
    )

    def headers(request: Any, **_: Any) -> None:
        request.headers["Cookie"] = f"session={COOKIE}"
        if cassette is not None:
            request.headers["x-harness-cassette"] = cassette

    client.meta.events.register("before-sign.bedrock-runtime.*", headers)
    return client


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    server = CassetteServer([str(LIBRARY), str(LIBRARY / "errors")], match_on=None)
    with ServerThread(server.app()) as url:
        yield url


def test_the_proxys_first_line_names_the_variable_boto3_reads(tmp_path: Path) -> None:
    proxy = RecordingProxy("http://127.0.0.1:9", tmp_path)
    line = base_url_line("http://127.0.0.1:8080", proxy.providers)
    assert "AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://127.0.0.1:8080" in line.split()


def test_a_converse_stream_is_recorded_as_its_lines(
    served: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = RecordingProxy(served, tmp_path)
    with ServerThread(proxy.app()) as url:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", url)  # what the proxy prints
        client = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )
        client.meta.events.register(
            "before-sign.bedrock-runtime.*",
            lambda request, **_: request.headers.__setitem__("x-harness-cassette", "tool_use"),
        )
        events = list(client.converse_stream(**ASK)["stream"])
        client.close()
    [written] = proxy.written
    recorded = Cassette(written)
    assert recorded.provider == "bedrock-converse"
    header = recorded.header or {}
    assert header["request"]["model"] == MODEL
    assert header["request"]["messages"] == ASK["messages"]
    assert "stream" not in header["request"]
    expected = list(Cassette(LIBRARY / "tool_use.jsonl").events())
    assert list(recorded.events()) == expected
    assert [next(iter(event)) for event in events] == [next(iter(e)) for e in expected]
    assert sum(1 for line in recorded.lines() if line.data.get("harness") == "at") == len(expected)
    assert replay_outcome(written).error is None


def test_a_converse_call_is_recorded_as_the_events_of_its_answer(
    served: str, tmp_path: Path
) -> None:
    proxy = RecordingProxy(served, tmp_path)
    with ServerThread(proxy.app()) as url:
        client = _client(url, "tool_use")
        answer = client.converse(**ASK)
        client.close()
    assert answer["stopReason"] == "tool_use"
    recorded = Cassette(proxy.written[0])
    assert (recorded.header or {})["synthesized_from"] == "message"
    outcome = replay_outcome(proxy.written[0], sdk_objects=False)
    assert [line["type"] for line in outcome.to_json_lines()] == ["text", "tool_call", "done"]


@pytest.mark.parametrize("model", list(MODELS.values()), ids=list(MODELS))
def test_a_model_id_holding_a_slash_is_recorded_decoded_and_guarded(
    served: str, tmp_path: Path, model: str
) -> None:
    proxy = RecordingProxy(served, tmp_path, strict=True)
    with ServerThread(proxy.app()) as url:
        client = _client(url, "errors/invalid_tool_json")
        stream = client.converse_stream(**{**ASK, "modelId": model})["stream"]
        with pytest.raises(Exception, match="invalid_tool_json"):  # the proxy's exception frame
            list(stream)
        stream.close()
        client.close()
    header = Cassette(proxy.written[0]).header or {}
    assert header["request"]["model"] == model


def test_an_exception_frame_is_recorded_as_its_line(served: str, tmp_path: Path) -> None:
    proxy = RecordingProxy(served, tmp_path)
    with ServerThread(proxy.app()) as url:
        client = _client(url, "errors/throttling_exception")
        stream = client.converse_stream(**ASK)["stream"]
        with pytest.raises(Exception, match="throttlingException"):
            list(stream)
        stream.close()  # botocore leaves a stream it raised in open
        client.close()
    lines = list(Cassette(proxy.written[0]).events())
    assert "throttlingException" in lines[-1]
    outcome = replay_outcome(proxy.written[0], sdk_objects=False).to_json_lines()
    assert outcome[-1]["error_type"] == "throttlingException"


def _echo(headers: Any) -> str:
    return " ".join(f"{name}={value}" for name, value in headers.items())


def _echoing_upstream() -> web.Application:
    """ConverseStream answered with the request's headers said back in a text delta and
    nested deep in `metadata`; Converse, a 403 saying them."""
    app = web.Application()

    async def stream(request: web.Request) -> web.Response:
        said = _echo(request.headers)
        events: list[dict[str, Any]] = [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": said}}},
            {"contentBlockStop": {"contentBlockIndex": 0}},
            {"messageStop": {"stopReason": "end_turn"}},
            {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                          "metrics": {"latencyMs": 1}, "echo": {"deep": [{"said": said}]}}},
        ]  # fmt: skip
        body = b"".join(encode_event(event) for event in events)
        return web.Response(body=body, content_type=CONTENT_TYPE)

    async def refuse(request: web.Request) -> web.Response:
        error = {"message": _echo(request.headers), "__type": "AccessDeniedException"}
        return web.json_response(error, status=403)

    app.router.add_post(PATHS.stream_route, stream)
    app.router.add_post(PATHS.plain_route, refuse)
    return app


def test_credentials_reach_upstream_and_are_written_and_printed_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logged: list[str] = []
    with ServerThread(_echoing_upstream()) as upstream:
        proxy = RecordingProxy(upstream, tmp_path, log=logged.append)
        with ServerThread(proxy.app()) as url:
            client = _client(url)
            said = "".join(
                event["contentBlockDelta"]["delta"]["text"]
                for event in client.converse_stream(**ASK)["stream"]
                if "contentBlockDelta" in event
            )
            with pytest.raises(client.exceptions.AccessDeniedException):
                client.converse(**ASK)
            client.close()
    assert "Signature=" in said, "SigV4 reached upstream"
    signature = said.split("Signature=")[1].split()[0].strip(",")
    date = said.split("X-Amz-Date=")[1].split()[0]
    secrets = [ACCESS_KEY, signature, SESSION_TOKEN, COOKIE]
    for secret in secrets:
        assert secret in said, "upstream got every credential"
    assert len(proxy.written) == 2
    written = "".join(Path(path).read_text() for path in proxy.written)
    printed = "\n".join(logged) + capsys.readouterr().out
    for secret in [*secrets, SECRET_KEY]:
        assert secret not in written
        assert secret not in printed
    assert "***" in written, "what upstream repeated is masked, not dropped"
    assert f"X-Amz-Date={date}" in written, "a timestamp is no credential: kept as said"
    first = [json.loads(line) for line in Path(proxy.written[0]).read_text().splitlines()]
    assert first[0]["provider"] == "bedrock-converse"
    error = [json.loads(line) for line in Path(proxy.written[1]).read_text().splitlines()][-1]
    assert error["harness"] == "http_error" and error["status"] == 403
