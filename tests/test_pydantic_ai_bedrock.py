"""pydantic-ai's public Bedrock ConverseStream recordings (tests/data/pydantic-ai-bedrock/,
real answers of Nova, Claude and gpt-oss kept by vcrpy as `!!binary` event-stream
bodies) import to bedrock-converse cassettes that replay as the model answered, directly
and through boto3, each event the one botocore's own `EventStreamBuffer` decodes from the
same bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from botocore.eventstream import EventStreamBuffer

from harness._cassette.codec import Cassette
from harness._interop.export import export_har, export_name, export_vcr
from harness._interop.importer import import_recording
from harness._replay.direct import Outcome, replay_outcome
from harness._replay.sdk import outcome_via_sdk

DATA = Path(__file__).parent / "data" / "pydantic-ai-bedrock"
RECORDINGS = sorted(DATA.glob("*.yaml"))

#: cassette -> (the model, the text it answered, its tool calls, how the stream ended)
ANSWERED: dict[str, tuple[str, str, list[tuple[str, dict[str, Any]]], str]] = {
    "test_bedrock_model_code_execution_tool_stream-01": (
        "us.amazon.nova-2-lite-v1:0",
        "",
        [("final_result", {"result": 7006652.0})],
        "done",
    ),
    "test_bedrock_model_iter_stream-01": (
        "us.amazon.nova-micro-v1:0",
        "<thinking> To find the temperature of the capital of France, ",
        [("get_temperature", {"city": "Paris"})],
        "done",
    ),
    "test_bedrock_model_iter_stream-02": (
        "us.amazon.nova-micro-v1:0",
        "The current temperature in Paris, the capital of France, is 30°C.",
        [],
        "done",
    ),
    "test_bedrock_model_stream_empty_text_delta-01": (
        "openai.gpt-oss-120b-1:0",
        "Hello! How can I help you today?",
        [],
        "done",
    ),
    "test_bedrock_model_thinking_part_redacted_stream-01": (
        "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "I notice you've sent what appears to be some kind of command or trigger string, ",
        [],
        "done",
    ),
    "test_bedrock_model_thinking_part_stream-01": (
        "us.anthropic.claude-sonnet-4-20250514-v1:0",
        "Hello! It's nice to meet you. How can I help you today?",
        [],
        "done",
    ),
    "test_bedrock_streaming_error-01": ("us.does-not-exist-model-v1:0", "", [], "api_error:400"),
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("imported")
    for recording in RECORDINGS:
        report = import_recording(str(recording), str(out))
        assert report.skipped == []
    return {path.stem: path for path in sorted(out.glob("*.jsonl"))}


def _answer(outcome: Outcome) -> tuple[str, list[tuple[str, dict[str, Any]]], str]:
    lines = outcome.to_json_lines()
    text = "".join(line["text"] for line in lines if line["type"] == "text")
    calls = [(line["call"]["name"], line["call"]["input"]) for line in lines if "call" in line]
    last = lines[-1]
    ended = "done" if last["type"] == "done" else f"{last['type']}:{last.get('error_type')}"
    return text, calls, ended


def test_every_recorded_call_imports(imported: dict[str, Path]) -> None:
    assert sorted(imported) == sorted(ANSWERED)


@pytest.mark.parametrize("name", sorted(ANSWERED))
def test_each_replays_as_the_model_answered_directly_and_through_boto3(
    imported: dict[str, Path], name: str
) -> None:
    model, text, calls, ended = ANSWERED[name]
    cassette = Cassette(imported[name])
    assert cassette.provider == "bedrock-converse"
    assert cassette.header is not None
    assert cassette.header["request"]["model"] == model
    for outcome in (
        replay_outcome(imported[name], sdk_objects=False),
        outcome_via_sdk(imported[name]),
    ):
        got_text, got_calls, got_end = _answer(outcome)
        assert got_text.startswith(text) and bool(got_text) == bool(text)
        assert (got_calls, got_end) == (calls, ended)


def _botocore_lines(body: bytes) -> list[dict[str, Any]]:
    """The events botocore's `EventStreamBuffer` decodes from `body`, as lines."""
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    lines = []
    for message in buffer:
        kind = message.headers[":message-type"]
        name = message.headers[":event-type" if kind == "event" else ":exception-type"]
        payload = json.loads(message.payload)
        payload.pop("p", None)
        lines.append({name: payload})
    return lines


def test_each_cassettes_events_are_what_botocore_decodes_from_the_same_bytes(
    imported: dict[str, Path],
) -> None:
    compared = 0
    for recording in RECORDINGS:
        document = yaml.safe_load(recording.read_text())
        for number, interaction in enumerate(document["interactions"], 1):
            body = (interaction["response"].get("body") or {}).get("string")
            if not isinstance(body, bytes):
                continue  # the 400's JSON, no stream
            events = list(Cassette(imported[f"{recording.stem}-{number:02d}"]).events())
            assert events == _botocore_lines(body)
            compared += 1
    assert compared == 6


def test_a_reasoning_signature_is_kept_as_the_protocols_own_field(
    imported: dict[str, Path],
) -> None:
    """Claude's thinking on Bedrock ends in a `reasoningContent` delta of its `signature`,
    which boto3 refuses to parse if it is dropped (the one member it must have)."""
    events = Cassette(imported["test_bedrock_model_thinking_part_stream-01"]).events()
    signatures = [
        event["contentBlockDelta"]["delta"]["reasoningContent"]["signature"]
        for event in events
        if "signature"
        in event.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
    ]
    assert len(signatures) == 1 and signatures[0].startswith("Eu0CCkgIBxABGAIq")


def test_nova_2s_client_tool_typed_tool_use_is_a_client_call_its_server_tool_is_not(
    imported: dict[str, Path],
) -> None:
    """Nova 2 names its client tool's start `"type": "tool_use"` (the service model lists
    only `server_tool_use`); the code interpreter it ran itself is passed over."""
    events = list(Cassette(imported["test_bedrock_model_code_execution_tool_stream-01"]).events())
    types = [
        event["contentBlockStart"]["start"]["toolUse"].get("type")
        for event in events
        if "toolUse" in event.get("contentBlockStart", {}).get("start", {})
    ]
    assert types == ["server_tool_use", "tool_use"]


@pytest.mark.parametrize("to", ["vcr", "har"])
def test_each_exports_and_reimports_to_the_same_cassette(
    imported: dict[str, Path], tmp_path: Path, to: str
) -> None:
    """The export (vcrpy `!!binary` frames, or HAR base64) of every imported cassette,
    imported again, is the same cassette: its lines, its request, its model."""
    for name, path in imported.items():
        first = Cassette(path)
        target = export_name(str(tmp_path), name, to)
        (export_har if to == "har" else export_vcr)(str(path), target)
        report = import_recording(target, str(tmp_path / "again"))
        again = Cassette(report.written[0][0])
        assert [line.data for line in again.lines()] == [line.data for line in first.lines()]
        for key in ("provider", "model", "request"):
            assert (again.header or {})[key] == (first.header or {})[key], (name, key)
