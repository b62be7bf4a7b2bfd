"""`harness import` on recordings shaped like the ones public projects keep.

The files in tests/data/recordings/ (README.md there says what each imitates) are
written for this suite. Each imported cassette is folded by the SDK's own accumulator
(`messages.stream()`'s), which must give the message the recording holds.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT, sdk_message

from harness import Cassette, replay_outcome
from harness_cli.main import cli

RECORDINGS = ROOT / "tests" / "data" / "recordings"

WEATHER = [
    ("text", "I'll check the weather in Paris."),
    ("tool_use", {"city": "Paris", "unit": "c"}),
]
LABEL = [
    ("text", "The sentiment is positive."),
    ("tool_use", {"label": "positive", "confidence": 0.93}),
]
#: output cassette -> (content as (block type, text or input), stop_reason, synthesised?)
EXPECTED: dict[str, tuple[list[tuple[str, Any]], str, bool]] = {
    "pydantic_ai_thinking-01.jsonl": (
        [
            ("thinking", "A plain question about tides."),
            ("text", "Tides come from the Moon's pull on the oceans. ✓"),
        ],
        "end_turn",
        False,
    ),
    "pydantic_ai_thinking-03.jsonl": (LABEL, "tool_use", True),
    "vcrpy_httpx_gzip-02.jsonl": (WEATHER, "tool_use", False),
    "vcrpy_legacy_httpx-01.jsonl": (
        [("text", "Hello! How can I help you today?")],
        "end_turn",
        False,
    ),
    "langchain_redacted-01.jsonl": (
        [("text", "Water finds its way\nstone by stone, the long patience\nof the valley floor")],
        "end_turn",
        False,
    ),
    "langchain_redacted-02.jsonl": (
        [("text", "Stone keeps its silence\nrain writes on it anyway")],
        "end_turn",
        False,
    ),
    "compressed_bodies-01.jsonl": ([("text", "Hi there!")], "end_turn", False),
    "compressed_bodies-02.jsonl": ([("text", "Bye!")], "end_turn", True),
    "ruby_vcr-01.jsonl": ([("text", "Pong.")], "end_turn", False),
    "go_vcr-01.jsonl": (WEATHER, "tool_use", False),
    "devtools-02.jsonl": (WEATHER, "tool_use", False),
    "devtools-03.jsonl": (LABEL, "tool_use", True),
}


def _content(message: dict[str, Any]) -> list[tuple[str, Any]]:
    value = {"text": "text", "thinking": "thinking", "tool_use": "input"}
    return [(block["type"], block[value[block["type"]]]) for block in message["content"]]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("imported")
    result = CliRunner().invoke(cli, ["import", str(RECORDINGS), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_every_sample_recording_imports_what_it_holds_and_nothing_else(imported: Path) -> None:
    assert sorted(path.name for path in imported.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=lambda name: name.removesuffix(".jsonl"))
def test_the_sdk_accumulates_each_imported_cassette_to_the_recorded_message(
    imported: Path, name: str
) -> None:
    content, stop_reason, synthesized = EXPECTED[name]
    cassette = Cassette(imported / name)
    message = sdk_message(list(cassette.events()))
    assert _content(message) == content
    assert message["stop_reason"] == stop_reason
    assert cassette.header is not None
    assert cassette.header["source"] == "imported"
    assert cassette.header.get("synthesized_from") == ("message" if synthesized else None)
    assert replay_outcome(imported / name).error is None


def test_the_report_names_each_exchange_skipped_and_why(tmp_path: Path) -> None:
    path = RECORDINGS / "vcrpy_httpx_gzip.yaml"
    result = CliRunner().invoke(cli, ["import", str(path), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"wrote {tmp_path / 'vcrpy_httpx_gzip-02.jsonl'}: 12 events",
        # the recorded URI held `deploy:hunter2-SECRET@` and `api_key=SECRET-IN-QUERY`
        f"skipped {path} #1 GET https://proxy.internal/health?v=2: not a POST to /v1/messages",
        f"skipped {path} #3 POST https://api.anthropic.com/v1/messages: status 529",
        "1 file: 1 cassette written, 2 skipped",
    ]


def test_headers_are_not_copied_and_the_request_keeps_no_credential(imported: Path) -> None:
    texts = "".join(path.read_text() for path in imported.iterdir())
    for planted in ("PLANTED", "hunter2", "SECRET", "sk-ant", "req_011", "x-api-key", "REDACTED"):
        assert planted not in texts
    header = Cassette(imported / "vcrpy_httpx_gzip-02.jsonl").header
    assert header is not None
    assert header["request"]["metadata"] == {"user_id": "user-42"}
    assert header["recorded_at"] == "2025-10-14T09:12:44Z"


def test_an_sdk_version_is_kept_only_when_it_reads_as_a_version(imported: Path) -> None:
    kept = Cassette(imported / "vcrpy_httpx_gzip-02.jsonl").header
    assert kept is not None and kept["sdk_version"] == "0.69.0"
    go = Cassette(imported / "go_vcr-01.jsonl").header
    assert go is not None and go["sdk_version"] == "1.14.0"
    # the recording says `<script>alert(1)</script>`; a redacted one says `**REDACTED**`
    for name in ("vcrpy_legacy_httpx-01.jsonl", "langchain_redacted-01.jsonl"):
        header = Cassette(imported / name).header
        assert header is not None and "sdk_version" not in header


def test_a_har_entry_and_a_ruby_interaction_keep_their_time_as_recorded_at(
    imported: Path,
) -> None:
    header = Cassette(imported / "devtools-02.jsonl").header
    assert header is not None
    assert header["recorded_at"].startswith("2025-10-14T09:12:40.215")
    header = Cassette(imported / "ruby_vcr-01.jsonl").header
    assert header is not None
    assert header["recorded_at"] == "2025-10-14T09:30:00Z"


@pytest.mark.parametrize("suffix", [".json.gz", ".yaml.gz", ".json.zst"])
def test_a_cassette_compressed_whole_reads_like_the_plain_one(tmp_path: Path, suffix: str) -> None:
    import zstandard

    document = json.loads((RECORDINGS / "vcrpy_legacy_httpx.json").read_text())
    text = json.dumps(document).encode()
    packed = (
        zstandard.ZstdCompressor().compress(text) if suffix.endswith("zst") else gzip.compress(text)
    )
    (tmp_path / f"legacy{suffix}").write_bytes(packed)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "legacy.json").write_bytes(text)
    runner = CliRunner()
    for source, out in ((tmp_path / f"legacy{suffix}", "a"), (tmp_path / "plain", "b")):
        result = runner.invoke(cli, ["import", str(source), "--out", str(tmp_path / out)])
        assert result.exit_code == 0, result.output
    events = list(Cassette(tmp_path / "a" / "legacy-01.jsonl").events())
    assert events == list(Cassette(tmp_path / "b" / "legacy-01.jsonl").events())
    assert len(events) == 9


def test_a_vertex_ai_stream_raw_predict_call_is_a_messages_call(tmp_path: Path) -> None:
    document = json.loads((RECORDINGS / "vcrpy_legacy_httpx.json").read_text())
    document["interactions"][0]["request"]["uri"] = (
        "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5"
        "/publishers/anthropic/models/claude-haiku-4-5@20251001:streamRawPredict"
    )
    source = tmp_path / "vertex.json"
    source.write_text(json.dumps(document))
    result = CliRunner().invoke(cli, ["import", str(source), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert len(list(Cassette(tmp_path / "o" / "vertex-01.jsonl").events())) == 9
