"""Issue 20: every fault row keeps its promise, and a failed write has one exit code.

Each variant `harness faults` writes replays, with `harness replay`, to the outcome its
header lists, directly and `--via sdk`, within seconds: the `stall` row (601 s of
silence) is a `ReadTimeout` at once directly and after `--timeout` through the SDK.
Over `serve`, `--stall-ms` cuts a stall short for a client whose timeout is not yours.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner
from conftest import LIBRARY, ROOT
from fake_api import FakeMessagesAPI

import harness._files
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness.builder import StreamBuilder
from harness.faults import STALL_MS
from harness_cli.main import cli
from harness_cli.replay import DEFAULT_TIMEOUT

GOOD = LIBRARY / "interleaved.jsonl"
RECORDING = ROOT / "tests" / "cassettes" / "test_chat.yaml"
BODY = {"model": "m", "max_tokens": 9, "messages": [], "stream": True}


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every variant `harness faults` writes of a good cassette, by fault name."""
    out = tmp_path_factory.mktemp("variants")
    result = CliRunner().invoke(cli, ["faults", str(GOOD), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return {path.name.split(".")[1]: path for path in sorted(out.iterdir())}


def _expected(path: Path) -> str:
    first = path if path.is_file() else sorted(path.glob("*.jsonl"))[-1]
    expect: str = json.loads(first.read_text().splitlines()[0])["expect"]
    return expect


def _replayed(path: Path, *options: str) -> str:
    """The outcome `harness replay --format json` ends in, as the catalogue names it."""
    result = CliRunner().invoke(cli, ["replay", "--format", "json", *options, str(path)])
    assert result.exit_code in (0, 1), result.output
    last: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    if last["type"] == "done":
        return "done"
    if last["type"] == "protocol_error":
        return str(last["code"])
    return f"{last['type']}:{last['error_type']}"


def test_the_stall_row_is_longer_than_any_read_timeout_replay_gives() -> None:
    assert STALL_MS / 1000 > 600 > DEFAULT_TIMEOUT  # the SDK's own default, then ours


@pytest.mark.parametrize("via", ["direct", "sdk"])
def test_every_variant_replays_to_the_outcome_it_lists(variants: dict[str, Path], via: str) -> None:
    assert {"stall", "http_429_then_ok"} <= set(variants)  # a file and a session folder
    timeout = [] if via == "direct" else ["--timeout", "0.05"]  # the default: the slow test
    got = {name: _replayed(path, "--via", via, *timeout) for name, path in variants.items()}
    assert got == {name: _expected(path) for name, path in variants.items()}


def test_a_folder_of_variants_replays_a_session_variant_as_one_call(
    variants: dict[str, Path],
) -> None:
    folder = variants["stall"].parent
    result = CliRunner().invoke(cli, ["replay", "--format", "json", str(folder)])
    labels = {json.loads(line)["cassette"] for line in result.stdout.splitlines()}
    session = variants["http_429_then_ok"]
    assert str(session / "turn-02.jsonl") in labels, "the call is named after the turn it plays"
    assert str(session / "turn-01.jsonl") not in labels, "the 429 is retried, no outcome of its own"
    text = CliRunner().invoke(cli, ["replay", str(folder)]).stdout.splitlines()
    assert f"== {session}/turn-02.jsonl  (after turn-01.jsonl, which the SDK retries)" in text


@pytest.mark.slow
def test_the_stall_row_through_the_sdk_ends_within_the_default_timeout(
    variants: dict[str, Path],
) -> None:
    assert _replayed(variants["stall"], "--via", "sdk") == "connection_error:ReadTimeout"


@pytest.mark.parametrize("via", ["direct", "sdk"])
def test_a_stall_shorter_than_the_timeout_is_waited_out(tmp_path: Path, via: str) -> None:
    events = StreamBuilder().text(0, "hi").stop().events()
    path = tmp_path / "short_stall.jsonl"
    lines = [*events[:2], {"harness": "stall", "ms": 20}, *events[2:]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert _replayed(path, "--via", via, "--timeout", "5") == "done"
    assert _replayed(path, "--via", via, "--timeout", "0.01") == "connection_error:ReadTimeout"


def test_serve_stall_ms_cuts_a_stall_for_a_client_whose_timeout_is_long(
    variants: dict[str, Path],
) -> None:
    lines: list[str] = []
    server = CassetteServer([str(variants["stall"])], log=lines.append, stall_ms=50)
    with (
        ServerThread(server.app()) as url,
        httpx2.Client(timeout=600) as client,  # the SDK's own: a stall of 601 s would pass it
        pytest.raises(httpx2.RemoteProtocolError),
    ):
        client.post(f"{url}/v1/messages", json=BODY)
    assert lines[-1] == f"#1 POST /v1/messages: a {STALL_MS} ms stall cut at 50 ms (--stall-ms)"


@pytest.mark.slow
def test_serve_without_stall_ms_holds_a_stall_past_a_clients_read_timeout(
    variants: dict[str, Path],
) -> None:
    with (
        ServerThread(CassetteServer([str(variants["stall"])]).app()) as url,
        httpx2.Client(timeout=0.2) as client,
        pytest.raises(httpx2.ReadTimeout),
    ):
        client.post(f"{url}/v1/messages", json=BODY)


def _disk_full(target: str) -> int:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failed_write_exits_2_in_every_command_that_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-DUMMY-disk-full-0123456789")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setattr(harness._files, "_file_mode", _disk_full)  # every atomic write fails
    with FakeMessagesAPI(StreamBuilder(model="m").text(0, "Hello").stop().events()) as api:
        commands = {
            "record": ["record", "--model", "m", "--prompt", "hi", "--base-url", api.base_url,
                       "--out", str(tmp_path / "rec.jsonl")],
            "faults": ["faults", str(GOOD), "--out", str(tmp_path / "faults")],
            "export": ["export", str(GOOD), "--to", "vcr", "--out", str(tmp_path / "vcr")],
            "import": ["import", str(RECORDING), "--out", str(tmp_path / "imported")],
        }  # fmt: skip
        results = {name: CliRunner().invoke(cli, args) for name, args in commands.items()}
    for name, result in results.items():
        assert result.exit_code == 2, (name, result.output)
        assert "No space left on device" in result.stderr, name
        assert "Traceback" not in result.output, name
    assert not (tmp_path / "rec.jsonl").exists()
