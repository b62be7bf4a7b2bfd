"""`harness import` and `export` of calls served on a host: Bedrock's
`invoke-with-response-stream` (a binary body of event-stream frames: `!!binary` in vcrpy
YAML, base64 `content.encoding` in HAR) and Vertex's `streamRawPredict` (SSE). The
recordings here are built by the test; their YAML is shaped as pydantic-ai's public
Bedrock recordings are (botocore's header values as `!!binary`, the model id quoted in
the path, the body `string: !!binary`)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import LIBRARY

from harness._cassette.codec import Cassette
from harness._hosts import bedrock
from harness._interop.export import export_har, export_name, export_vcr
from harness._interop.importer import import_recording
from harness._providers.sse import encode_event
from harness._replay.direct import replay_outcome
from harness._testing.coverage import outcome_code

EVENTS = list(Cassette(LIBRARY / "two_tools.jsonl").events())
FRAMES = b"".join(bedrock.encode_event(event) for event in EVENTS)
MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
BEDROCK = (
    "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
    "anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"
)
VERTEX = (
    "https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5"
    "/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
)
ASKED = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": []}
SECRETS = {
    "authorization": "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20250101/us-east-1/"
    "bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a",
    "x-amz-security-token": "FQoGZXIvYXdzEJr//////////wEaDOSECRETSESSIONTOKEN",
    "cookie": "session=SECRETCOOKIEVALUE0123456789",
}


def _vcr(tmp_path: Path, uri: str, body: bytes, content_type: str) -> Path:
    """A vcrpy cassette of one call, botocore's header values as bytes (`!!binary`)."""
    headers = {name: [value.encode()] for name, value in SECRETS.items()}
    headers["x-amz-date"] = [b"20250101T000000Z"]
    document = {
        "interactions": [
            {
                "request": {
                    "body": json.dumps(ASKED),
                    "headers": headers,
                    "method": "POST",
                    "uri": uri,
                },
                "response": {
                    "body": {"string": body},
                    "headers": {"content-type": [content_type]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }
    path = tmp_path / "recorded.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _har(tmp_path: Path, uri: str, body: bytes, content_type: str) -> Path:
    entry = {
        "startedDateTime": "2025-01-01T00:00:00Z",
        "request": {
            "method": "POST",
            "url": uri,
            "headers": [{"name": name, "value": value} for name, value in SECRETS.items()],
            "postData": {"mimeType": "application/json", "text": json.dumps(ASKED)},
        },
        "response": {
            "status": 200,
            "headers": [{"name": "content-type", "value": content_type}],
            "content": {"text": base64.b64encode(body).decode(), "encoding": "base64"},
        },
    }
    path = tmp_path / "recorded.har"
    path.write_text(json.dumps({"log": {"entries": [entry]}}))
    return path


def _imported(recording: Path, out: Path) -> Cassette:
    report = import_recording(str(recording), str(out), force=True)
    assert report.skipped == [] and len(report.written) == 1, report
    written = Path(report.written[0][0]).read_text()
    for secret in ("AKIAIOSFODNN7EXAMPLE", "fe5f80f77d5", "SECRETSESSIONTOKEN", "SECRETCOOKIE"):
        assert secret not in written
    return Cassette(report.written[0][0])


SSE = b"".join(encode_event(event) for event in EVENTS)
CALLS = {
    "bedrock": (BEDROCK, FRAMES, bedrock.CONTENT_TYPE, MODEL),
    "vertex": (VERTEX, SSE, "text/event-stream", "claude-sonnet-4-5@20250929"),
}


@pytest.mark.parametrize("shape", [_vcr, _har], ids=["vcr", "har"])
@pytest.mark.parametrize("host", sorted(CALLS))
def test_a_hosted_call_imports_as_its_events_naming_its_host_and_model(
    tmp_path: Path, host: str, shape: Any
) -> None:
    uri, body, content_type, model = CALLS[host]
    cassette = _imported(shape(tmp_path, uri, body, content_type), tmp_path / "out")
    assert list(cassette.events()) == EVENTS
    header = cassette.header or {}
    assert (header["host"], header["model"], header["request"]["model"]) == (host, model, model)
    assert outcome_code(replay_outcome(cassette.path)) == "done"


@pytest.mark.parametrize("to", ["vcr", "har"])
@pytest.mark.parametrize("host", sorted(CALLS))
def test_an_exported_hosted_cassette_reimports_to_the_same_cassette(
    tmp_path: Path, host: str, to: str
) -> None:
    uri, body, content_type, _ = CALLS[host]
    first = _imported(_vcr(tmp_path, uri, body, content_type), tmp_path / "one")
    exported = Path(export_name(str(tmp_path), "exported", to))
    (export_har if to == "har" else export_vcr)(first.path, str(exported))
    if host == "bedrock" and to == "vcr":
        assert "string: !!binary" in exported.read_text()
    if to == "har":
        (entry,) = json.loads(exported.read_text())["log"]["entries"]
        content = entry["response"]["content"]
        if host == "bedrock":
            assert entry["request"]["url"] == uri
        assert content.get("encoding") == ("base64" if host == "bedrock" else None)
        assert content["mimeType"].startswith(content_type)
    again = _imported(exported, tmp_path / "two")
    assert [line.data for line in again.lines()] == [line.data for line in first.lines()]
    assert (again.header or {})["request"] == (first.header or {})["request"]
    assert (again.header or {})["host"] == host


def _flipped(body: bytes, at: int) -> bytes:
    return body[:at] + bytes([body[at] ^ 1]) + body[at + 1 :]


FIRST_TWO = len(bedrock.encode_event(EVENTS[0])) + len(bedrock.encode_event(EVENTS[1]))


@pytest.mark.parametrize(
    ("body", "cut"),
    [
        (FRAMES[: FIRST_TWO + 6], {"harness": "cut", "after_bytes": 6}),
        (FRAMES[: FIRST_TWO + 40], {"harness": "cut", "after_bytes": 40}),
        (_flipped(FRAMES, FIRST_TWO + 30), {"harness": "cut"}),
    ],
    ids=["cut-in-prelude", "cut-in-payload", "bad-crc"],
)
def test_a_cut_or_bad_frame_in_a_recorded_body_is_imported_as_its_cut(
    tmp_path: Path, body: bytes, cut: dict[str, Any]
) -> None:
    cassette = _imported(_vcr(tmp_path, BEDROCK, body, bedrock.CONTENT_TYPE), tmp_path / "out")
    lines = [line.data for line in cassette.lines()]
    assert lines == [*EVENTS[:2], cut]
    assert outcome_code(replay_outcome(cassette.path)) == "connection_error:RemoteProtocolError"


def test_a_body_that_is_no_frames_at_all_is_skipped_with_its_reason(tmp_path: Path) -> None:
    recording = _vcr(tmp_path, BEDROCK, b"\x00\x00\x00\x10garbage-bytes", bedrock.CONTENT_TYPE)
    report = import_recording(str(recording), str(tmp_path / "out"))
    assert report.written == []
    assert "unreadable frames: frame 1: prelude CRC" in report.skipped[0]
