"""`harness record --provider bedrock-converse`: through boto3's own `converse_stream`,
signed with the user's usual AWS credentials (here dummy ones in the environment, the
files of `~/.aws` set to the empty file), against a fake endpoint on 127.0.0.1 given as
`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`. The cassette holds the stream's events, the request
without credentials; no credential is written or printed, even where the endpoint
echoes them back. Without credentials the command refuses in one line."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from click.testing import CliRunner
from conftest import not_installed

from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._providers.bedrock_converse.framing import CONTENT_TYPE, PATHS, encode_event
from harness._replay.direct import replay_outcome
from harness_cli.main import cli

pytest.importorskip("boto3", reason=not_installed("boto3"))

LIBRARY = Path(__file__).resolve().parent.parent / "cassettes" / "bedrock" / "converse"
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SESSION_TOKEN = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN0123"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The user's AWS chain: dummy credentials in the environment, nothing else read."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    yield monkeypatch


def _with_credentials(aws: pytest.MonkeyPatch) -> None:
    aws.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    aws.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    aws.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)


def _record(out: Path, *extra: str) -> Any:
    arguments = ["record", "--provider", "bedrock-converse", "--model", MODEL]
    arguments += ["--prompt", "Weather in Paris?", "--out", str(out), *extra]
    return CliRunner().invoke(cli, arguments)


def test_a_stream_is_recorded_through_boto3_at_the_endpoint_it_reads(
    aws: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _with_credentials(aws)
    server = CassetteServer([str(LIBRARY / "tool_use.jsonl")], match_on=None)
    with ServerThread(server.app()) as url:
        aws.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", url)
        result = _record(tmp_path / "rec.jsonl", "--max-tokens", "64")
        [asked] = server.replayer.requests
    assert result.exit_code == 0, result.output
    assert result.output.endswith("wrote " + str(tmp_path / "rec.jsonl") + ": 9 events\n")
    assert asked.path == f"/model/{MODEL}/converse-stream"
    recorded = Cassette(tmp_path / "rec.jsonl")
    header = recorded.header or {}
    assert (header["provider"], header["source"], header["model"]) == (
        "bedrock-converse",
        "recorded",
        MODEL,
    )
    assert header["request"] == {
        "model": MODEL,
        "messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
        "inferenceConfig": {"maxTokens": 64},
    }
    assert list(recorded.events()) == list(Cassette(LIBRARY / "tool_use.jsonl").events())
    text = (tmp_path / "rec.jsonl").read_text()
    for secret in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN):
        assert secret not in text
    assert replay_outcome(str(tmp_path / "rec.jsonl")).error is None


def _echoing(got: list[dict[str, str]]) -> web.Application:
    """A stream saying the request's headers back, and an exception frame after it; the
    headers kept in `got`."""
    app = web.Application()

    async def stream(request: web.Request) -> web.Response:
        got.append(dict(request.headers))
        said = " ".join(f"{name}={value}" for name, value in request.headers.items())
        events: list[dict[str, Any]] = [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": said}}},
            {"throttlingException": {"message": f"slow down {said}"}},
        ]
        body = b"".join(encode_event(event) for event in events)
        return web.Response(body=body, content_type=CONTENT_TYPE)

    app.router.add_post(PATHS.stream_route, stream)
    return app


def test_no_credential_is_written_or_printed_where_the_endpoint_echoes_them(
    aws: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _with_credentials(aws)
    got: list[dict[str, str]] = []
    with ServerThread(_echoing(got)) as url:
        result = _record(tmp_path / "rec.jsonl", "--base-url", url)
    assert result.exit_code == 0, result.output
    [sent] = got
    assert sent["X-Amz-Security-Token"] == SESSION_TOKEN
    signature = sent["Authorization"].split("Signature=")[1]
    text = (tmp_path / "rec.jsonl").read_text()
    assert "Authorization=***" in text, "upstream said them back: masked"
    assert "X-Amz-Security-Token=***" in text
    for secret in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, signature):
        assert secret not in text
        assert secret not in result.output
    lines = list(Cassette(tmp_path / "rec.jsonl").events())
    assert next(iter(lines[-1])) == "throttlingException"
    error = replay_outcome(str(tmp_path / "rec.jsonl")).error
    assert getattr(error, "body", {})["error"]["type"] == "throttlingException"


def test_without_aws_credentials_it_refuses_in_one_line(
    aws: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result = _record(tmp_path / "rec.jsonl")
    assert result.exit_code == 2
    assert result.output.startswith("harness record: no AWS credentials found")
    assert len(result.output.splitlines()) == 1
    assert not (tmp_path / "rec.jsonl").exists()


def test_a_refusal_is_one_line_and_nothing_is_written(
    aws: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _with_credentials(aws)
    app = web.Application()

    async def refuse(request: web.Request) -> web.Response:
        body = {"message": "The provided model identifier is invalid."}
        return web.json_response(
            body, status=400, headers={"x-amzn-errortype": "ValidationException"}
        )

    app.router.add_post(PATHS.stream_route, refuse)
    with ServerThread(app) as url:
        result = _record(tmp_path / "rec.jsonl", "--base-url", url)
    assert result.exit_code == 1
    assert result.output == (
        "harness record: the API refused the request: 400 ValidationException: "
        "The provided model identifier is invalid.\n"
    )
    assert not (tmp_path / "rec.jsonl").exists()


#: A live, billed recording: the Bedrock model id to record with, given by a user whose
#: AWS credentials (their usual chain) may call it; skipped otherwise.
LIVE_MODEL = os.environ.get("HARNESS_LIVE_BEDROCK_MODEL")


@pytest.mark.skipif(
    not LIVE_MODEL,
    reason="a live, billed recording: needs AWS credentials and HARNESS_LIVE_BEDROCK_MODEL",
)
def test_a_live_recording_replays(tmp_path: Path) -> None:
    out = tmp_path / "live.jsonl"
    arguments = ["record", "--provider", "bedrock-converse", "--model", str(LIVE_MODEL)]
    result = CliRunner().invoke(cli, [*arguments, "--prompt", "Say hi", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert replay_outcome(str(out)).completed
