"""`harness import` on vcrpy cassettes that the suite records itself against the fake API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import vcr
from click.testing import CliRunner
from fake_api import ACCOUNT_HEADERS, FakeMessagesAPI

from harness import Cassette, InputError, import_recording, replay_outcome
from harness.builder import StreamBuilder
from harness_cli.main import cli

DUMMY_KEY = "sk-ant-api03-DUMMY-import-test-key-9876543210"
SERVED = (
    StreamBuilder(model="claude-harness-test")
    .text(0, "Reading ", "é ✓")
    .tool(1, "read", {"path": "b.md"}, pieces=2)
    .stop("tool_use")
)


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(SERVED.events()) as server:
        yield server


def _record_unfiltered(api: FakeMessagesAPI, path: Path, serializer: str) -> None:
    """A project's vcrpy cassette, made with no filter at all: the key is in it."""
    from anthropic import Anthropic

    recorder = vcr.VCR(serializer=serializer, record_mode="all")
    with recorder.use_cassette(str(path)):
        httpx2.get(f"{api.base_url}/status").raise_for_status()
        client = Anthropic(api_key=DUMMY_KEY, base_url=api.base_url, max_retries=0)
        with client:
            stream = client.messages.create(
                model="claude-harness-test",
                max_tokens=64,
                messages=[{"role": "user", "content": "read b.md"}],
                stream=True,
            )
            for _ in stream:
                pass
        assert httpx2.post(f"{api.base_url}/v1/other", json={}).status_code == 404


@pytest.mark.parametrize(("serializer", "name"), [("yaml", "chat.yaml"), ("json", "chat.json")])
def test_streamed_messages_call_becomes_one_cassette_and_others_are_listed(
    api: FakeMessagesAPI, tmp_path: Path, serializer: str, name: str
) -> None:
    source = tmp_path / name
    _record_unfiltered(api, source, serializer)
    assert DUMMY_KEY in source.read_text()
    out = tmp_path / "imported"
    result = CliRunner().invoke(cli, ["import", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out / 'chat-02.jsonl'}: {len(SERVED.events())} events" in result.output
    skipped = [line for line in result.stdout.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 2
    assert "#1 GET" in skipped[0] and "not a POST to /v1/messages" in skipped[0]
    assert "#3 POST" in skipped[1] and "not a POST to /v1/messages" in skipped[1]
    imported = out / "chat-02.jsonl"
    assert list(Cassette(imported).events()) == SERVED.events()
    header = Cassette(imported).header
    assert header is not None and header["source"] == "imported"
    assert header["model"] == "claude-harness-test"
    served = tmp_path / "served.jsonl"
    SERVED.write(served, "served")
    assert replay_outcome(imported).to_json_lines() == replay_outcome(served).to_json_lines()
    text = imported.read_text()
    assert DUMMY_KEY not in text
    assert not any(value in text for value in ACCOUNT_HEADERS.values())


def test_a_cassette_from_harness_record_vcr_imports_to_the_same_events(
    api: FakeMessagesAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    runner = CliRunner()
    recorded, vcr_path = tmp_path / "rec.jsonl", tmp_path / "rec.vcr.yaml"
    args = ["record", "--model", "m-test", "--prompt", "hi", "--base-url", api.base_url]
    result = runner.invoke(cli, [*args, "--out", str(recorded), "--vcr", str(vcr_path)])
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(cli, ["import", str(vcr_path), "--out", str(tmp_path / "imp")])
    assert result.exit_code == 0, result.output
    assert list(Cassette(tmp_path / "imp" / "rec.vcr-01.jsonl").events()) == list(
        Cassette(recorded).events()
    )


def test_existing_output_is_left_as_it_was_without_force(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    source = tmp_path / "chat.yaml"
    _record_unfiltered(api, source, "yaml")
    out = tmp_path / "imported"
    runner = CliRunner()
    assert runner.invoke(cli, ["import", str(source), "--out", str(out)]).exit_code == 0
    (out / "chat-02.jsonl").write_text("mine\n")
    again = runner.invoke(cli, ["import", str(source), "--out", str(out)])
    assert again.exit_code == 1
    assert "chat-02.jsonl: already exists, left as it was (use --force" in again.stderr
    assert (out / "chat-02.jsonl").read_text() == "mine\n"
    forced = runner.invoke(cli, ["import", str(source), "--out", str(out), "--force"])
    assert forced.exit_code == 0
    assert list(Cassette(out / "chat-02.jsonl").events()) == SERVED.events()


def test_a_file_that_is_not_a_vcr_cassette_is_one_clear_line(tmp_path: Path) -> None:
    source = tmp_path / "notes.yaml"
    source.write_text("just: [a, list\n")
    result = CliRunner().invoke(cli, ["import", str(source), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{source}: not a vcrpy cassette")
    assert result.stderr.count("\n") == 1


def test_a_cassette_without_any_stream_exits_1(api: FakeMessagesAPI, tmp_path: Path) -> None:
    source = tmp_path / "plain.yaml"
    with vcr.VCR(record_mode="all").use_cassette(str(source)):
        httpx2.get(f"{api.base_url}/status")
    result = CliRunner().invoke(cli, ["import", str(source), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert (
        "no Messages, Chat Completions, Responses, Bedrock ConverseStream or Gemini"
        " generateContent call found to import" in result.stderr
    )


@pytest.mark.parametrize("bad", [None, 3], ids=["none", "int"])
def test_import_recording_of_what_is_no_path_is_one_input_error(tmp_path: Path, bad: Any) -> None:
    recording = tmp_path / "recording.yaml"
    recording.write_text("interactions: []\n")
    with pytest.raises(InputError, match=r"^import_recording: path is a path, not "):
        import_recording(bad, str(tmp_path / "out"))
    with pytest.raises(InputError, match=r"^import_recording: out_dir is a path, not "):
        import_recording(str(recording), bad)
