"""`harness import` writes and prints no credential the recorded request carried, wherever
the recorded answer repeats it: in an error's kept headers, in the reason a call is
skipped for, and a repeated header's later values too (a second `Cookie`, a second
`Authorization`), which a recorder keeps as a list or as two HAR entries."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from harness._providers.bedrock_converse.interop import stream_body
from harness._providers.eventstream import encode_frame
from harness_cli.main import cli

BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com/model"
TOKEN = "ABSKQmVkcm9ja0FQSUtleS1zZWNyZXQ="
SESSION = "FwoGZXIvYXdzEBYaDSECRETSESSIONTOKENxyz123456"
COOKIE = "SECONDCOOKIESECRET123"
AUTHORIZATION = "SECONDAUTHTOKEN456789"


def _vcr(tmp_path: Path, request: dict[str, object], response: dict[str, object]) -> Path:
    path = tmp_path / "recorded.yaml"
    path.write_text(yaml.safe_dump({"interactions": [{"request": request, "response": response}]}))
    return path


def _imported(tmp_path: Path, path: Path, secrets: tuple[str, ...]) -> None:
    """Import `path`; none of `secrets` in what was written or printed."""
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["import", str(path), "--out", str(out)])
    written = "".join(found.read_text() for found in out.glob("*.jsonl"))
    for secret in secrets:
        assert secret not in result.output, result.output
        assert secret not in written


def test_an_error_header_that_repeats_the_token_is_masked(tmp_path: Path) -> None:
    """`x-amzn-errortype`, which an http_error line keeps for the AWS SDKs, repeating the
    request's bearer token (a Bedrock API key)."""
    path = _vcr(
        tmp_path,
        {
            "method": "POST",
            "uri": f"{BEDROCK}/us.amazon.nova-micro-v1%3A0/converse-stream",
            "headers": {"Authorization": [f"Bearer {TOKEN}"]},
            "body": json.dumps({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}),
        },
        {
            "status": {"code": 403, "message": "Forbidden"},
            "headers": {"x-amzn-errortype": [f"AccessDenied:{TOKEN}"]},
            "body": {"string": json.dumps({"message": "denied", "__type": "x#AccessDenied"})},
        },
    )
    _imported(tmp_path, path, (TOKEN,))
    [written] = (tmp_path / "out").glob("*.jsonl")
    assert "AccessDenied:***" in written.read_text()


def test_the_reason_a_call_is_skipped_for_masks_what_it_quotes(tmp_path: Path) -> None:
    """A frame whose `:event-type` repeats the session token: unreadable, and said so."""
    frame = encode_frame({":event-type": f"denied-{SESSION}", ":message-type": "event"}, b"{}")
    path = _vcr(
        tmp_path,
        {
            "method": "POST",
            "uri": f"{BEDROCK}/anthropic.claude-v2/invoke-with-response-stream",
            "headers": {"X-Amz-Security-Token": [SESSION]},
            "body": json.dumps({"anthropic_version": "bedrock-2023-05-31", "messages": []}),
        },
        {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": frame}},
    )
    _imported(tmp_path, path, (SESSION,))


def test_a_repeated_headers_later_values_are_masked_too(tmp_path: Path) -> None:
    events = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"text": f"{COOKIE} {AUTHORIZATION}"},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    headers = [
        {"name": "cookie", "value": "a=b1234567890"},
        {"name": "cookie", "value": f"sid={COOKIE}"},
        {"name": "Authorization", "value": "Bearer firsttoken1234"},
        {"name": "authorization", "value": f"Bearer {AUTHORIZATION}"},
    ]
    asked = {"messages": [{"role": "user", "content": [{"text": f"my cookie {COOKIE}"}]}]}
    entry = {
        "request": {
            "method": "POST",
            "url": f"{BEDROCK}/m/converse-stream",
            "headers": headers,
            "postData": {"text": json.dumps(asked)},
        },
        "response": {
            "status": 200,
            "headers": [],
            "content": {
                "text": base64.b64encode(stream_body(events)).decode(),
                "encoding": "base64",
            },
        },
    }
    path = tmp_path / "recorded.har"
    path.write_text(json.dumps({"log": {"entries": [entry]}}))
    _imported(tmp_path, path, (COOKIE, AUTHORIZATION))
    [written] = (tmp_path / "out").glob("*.jsonl")
    assert written.read_text().count("***") >= 2
