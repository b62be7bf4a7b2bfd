"""`harness record` against a fake Messages API on 127.0.0.1: offline, with a dummy key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fake_api import ACCOUNT_HEADERS, FakeMessagesAPI

from harness import Cassette, outcome_via_sdk, record, replay_outcome
from harness._exceptions import InputError
from harness._providers import names, provider
from harness._redact import is_secret_name as is_secret_header
from harness.builder import StreamBuilder
from harness_cli.main import cli

DUMMY_KEY = "sk-ant-api03-DUMMY-offline-test-key-0123456789"
SERVED = (
    StreamBuilder(model="claude-harness-test")
    .ping()
    .text(0, "Let me look ", "at ✓ both.")
    .tool(1, "read", {"path": "notes/a.md"}, pieces=3)
    .stop("tool_use")
)


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI(SERVED.events()) as server:
        yield server


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def _record(base_url: str, out: Path, *extra: str) -> Result:
    args = ["record", "--model", "claude-harness-test", "--prompt", "Read notes/a.md"]
    return CliRunner().invoke(cli, [*args, "--base-url", base_url, "--out", str(out), *extra])


def _events_only(path: Path) -> list[dict[str, Any]]:
    return list(Cassette(path).events())


@pytest.mark.usefixtures("keyed")
def test_recorded_cassette_holds_the_served_events_and_replays_the_same(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    out = tmp_path / "rec.jsonl"
    result = _record(api.base_url, out)
    assert result.exit_code == 0, result.stderr
    assert _events_only(out) == SERVED.events()
    assert "Let me look at ✓ both." in result.stderr
    served = tmp_path / "served.jsonl"
    SERVED.write(served, "served")
    expected = replay_outcome(served).to_json_lines()
    assert replay_outcome(out).to_json_lines() == expected
    assert outcome_via_sdk(out).to_json_lines() == expected


@pytest.mark.usefixtures("keyed")
def test_header_keeps_source_sdk_model_redacted_request_and_utc_time(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    import anthropic

    request_file = tmp_path / "request.json"
    request_file.write_text(json.dumps({"api_key": DUMMY_KEY, "temperature": 0}))
    out = tmp_path / "rec.jsonl"
    assert _record(api.base_url, out, "--request", str(request_file)).exit_code == 0
    header = Cassette(out).header
    assert header is not None
    assert header["source"] == "recorded"
    assert header["sdk_version"] == anthropic.__version__
    assert header["model"] == "claude-harness-test"
    assert header["request"] == {
        "temperature": 0,
        "model": "claude-harness-test",
        "messages": [{"role": "user", "content": "Read notes/a.md"}],
        "max_tokens": 1024,
    }
    assert datetime.fromisoformat(header["recorded_at"]).utcoffset() is not None
    assert api.received[0].json()["temperature"] == 0


@pytest.mark.usefixtures("keyed")
def test_every_event_follows_its_arrival_offset_in_milliseconds(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    out = tmp_path / "rec.jsonl"
    assert _record(api.base_url, out).exit_code == 0
    lines = list(Cassette(out).lines())
    directives, events = lines[0::2], lines[1::2]
    assert [line.kind for line in events] == ["event"] * len(SERVED.events())
    offsets = [line.data["ms"] for line in directives]
    assert all(line.data["harness"] == "at" for line in directives)
    assert offsets == sorted(offsets) and all(isinstance(ms, int) for ms in offsets)


@pytest.mark.usefixtures("keyed")
@pytest.mark.slow
def test_offsets_measure_when_each_event_arrived(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    with FakeMessagesAPI(SERVED.events(), pace=0.02) as api:
        assert _record(api.base_url, out).exit_code == 0
    offsets = [line.data["ms"] for line in Cassette(out).lines() if line.kind == "directive"]
    # The server sleeps 20 ms between events: the last cannot arrive sooner than that.
    assert offsets == sorted(offsets)
    assert offsets[-1] >= 20 * (len(offsets) - 1)


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize("vcr_name", ["rec.vcr.yaml", "rec.vcr.json"])
def test_dummy_key_and_account_headers_appear_in_no_written_file(
    api: FakeMessagesAPI, tmp_path: Path, vcr_name: str
) -> None:
    out, vcr_path = tmp_path / "rec.jsonl", tmp_path / vcr_name
    result = _record(api.base_url, out, "--vcr", str(vcr_path))
    assert result.exit_code == 0, result.stderr
    sent = api.received[0].headers
    assert DUMMY_KEY in (sent.get("authorization", "") + sent.get("x-api-key", ""))
    assert "claude-harness-test" in vcr_path.read_text()
    for path in tmp_path.iterdir():
        text = path.read_text()
        assert DUMMY_KEY not in text, path
        for value in ACCOUNT_HEADERS.values():
            assert value not in text, (path, value)


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize("vcr", [False, True], ids=["plain", "vcr"])
def test_dropped_connection_writes_no_new_file(tmp_path: Path, vcr: bool) -> None:
    out = tmp_path / "rec.jsonl"
    extra = ["--vcr", str(tmp_path / "rec.vcr.yaml")] if vcr else []
    with FakeMessagesAPI(SERVED.events(), drop_after=4) as api:
        result = _record(api.base_url, out, *extra)
    assert result.exit_code == 1
    assert list(tmp_path.iterdir()) == []
    error_lines = [line for line in result.stderr.splitlines() if "harness record" in line]
    assert len(error_lines) == 1
    assert "connection failed or dropped" in error_lines[0]
    assert "nothing written" in error_lines[0]


@pytest.mark.usefixtures("keyed")
def test_dropped_connection_leaves_an_existing_cassette_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    with FakeMessagesAPI(SERVED.events()) as api:
        assert _record(api.base_url, out).exit_code == 0
    before = out.read_bytes()
    with FakeMessagesAPI(SERVED.events(), drop_after=2) as api:
        result = _record(api.base_url, out, "--force")
    assert result.exit_code == 1
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.jsonl"]


@pytest.mark.usefixtures("keyed")
def test_existing_out_is_refused_without_force(api: FakeMessagesAPI, tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    out.write_text("keep me\n")
    result = _record(api.base_url, out)
    assert result.exit_code == 2
    assert "already exists (use --force" in result.stderr
    assert out.read_text() == "keep me\n"
    assert api.received == []


def test_without_api_key_one_line_exit_2_and_no_file(
    api: FakeMessagesAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "rec.jsonl"
    result = _record(api.base_url, out)
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "ANTHROPIC_API_KEY is not set" in result.stderr
    assert not out.exists()
    assert api.received == []


@pytest.mark.parametrize("name", names())
@pytest.mark.parametrize(
    ("base_url", "said"),
    [
        ("notaurl", "'notaurl' is not an http(s) URL"),
        ("ftp://x", "'ftp://x' is not an http(s) URL"),
        ("http://", "'http://' names no host"),
        ("http://u:PASSWORD1@h:99999", "'http://h:99999' is not a URL: Port out of range 0-65535"),
    ],
    ids=["no-scheme", "ftp", "no-host", "bad-port"],
)
def test_an_unusable_base_url_is_one_line_and_status_2_before_anything(
    name: str, base_url: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Said before the key is looked for (none is set here), so before any request."""
    for variable in provider(name).client_env.key_variables:
        monkeypatch.delenv(variable, raising=False)
    out = tmp_path / "rec.jsonl"
    command = ["record", "--provider", name, "--base-url", base_url, "--model", "m"]
    result = CliRunner().invoke(cli, [*command, "--prompt", "x", "--out", str(out)])
    assert (result.exit_code, result.stderr) == (2, f"harness record: --base-url {said}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", names())
def test_an_unusable_base_url_from_the_environment_names_its_variable(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    variable = provider(name).client_env.base_url_variable
    monkeypatch.setenv(variable, "notaurl")
    out = tmp_path / "rec.jsonl"
    command = ["record", "--provider", name, "--model", "m", "--prompt", "x", "--out", str(out)]
    result = CliRunner().invoke(cli, command)
    assert (result.exit_code, result.stderr) == (
        2,
        f"harness record: {variable} 'notaurl' is not an http(s) URL\n",
    )


def test_the_library_refuses_an_unusable_base_url_before_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`harness.record` as the command: an `InputError` naming the argument, no key asked."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    request = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "x"}]}
    out = tmp_path / "rec.jsonl"
    with pytest.raises(InputError, match=r"^base_url 'notaurl' is not an http\(s\) URL$"):
        record(request, str(out), base_url="notaurl")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.usefixtures("keyed")
def test_tool_option_sends_the_schema_file_as_input_schema(
    api: FakeMessagesAPI, tmp_path: Path
) -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    (tmp_path / "read.json").write_text(json.dumps(schema))
    out = tmp_path / "rec.jsonl"
    result = _record(api.base_url, out, "--tool", f"read={tmp_path / 'read.json'}")
    assert result.exit_code == 0, result.stderr
    assert api.received[0].json()["tools"] == [{"name": "read", "input_schema": schema}]
    header = Cassette(out).header
    assert header is not None and header["request"]["tools"][0]["input_schema"] == schema


@pytest.mark.usefixtures("keyed")
def test_bad_tool_spec_is_one_clear_line(api: FakeMessagesAPI, tmp_path: Path) -> None:
    result = _record(api.base_url, tmp_path / "rec.jsonl", "--tool", "read")
    assert result.exit_code == 2
    assert "--tool 'read': expected NAME=SCHEMA.json" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("Authorization", True),
        ("x-api-key", True),
        ("anthropic-organization-id", True),
        ("request-id", True),
        ("Cookie", True),
        ("set-cookie", True),
        ("x-session-token", True),
        ("X-Custom-Key", True),
        ("content-type", False),
        ("anthropic-version", False),
        ("x-stainless-retry-count", False),
    ],
)
def test_secret_headers_cover_bearer_and_x_api_key_clients(name: str, secret: bool) -> None:
    assert is_secret_header(name) is secret
