"""`harness record --provider gemini`, against `harness serve` on 127.0.0.1.

serve answers a Gemini library cassette as the API answers `alt=sse` (each chunk a
`data:` line, no end marker; without it, a JSON array the recorder would refuse); the
middleware of `test_record_openai.Served` keeps each
request received, so the tests see what the recorder sent (the model in the path,
`?alt=sse`, the key as `x-goog-api-key`, the body without `model`) and that nothing
written or printed holds the key. The key is read as google-genai reads it:
`GOOGLE_API_KEY`, else `GEMINI_API_KEY`. No live API: a live recording is
`test_a_live_recording_replays`, which skips without either key.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import GEMINI_LIBRARY
from test_record_openai import Served

from harness._cassette.codec import Cassette
from harness._interop.importer import import_recording
from harness._replay.direct import replay_outcome
from harness_cli.main import cli

KEY = "AIzaSyDUMMY-offline-gemini-key-0123456789"
OTHER = "AIzaSyDUMMY-the-other-variable-987654321"
#: The real key, if the environment has one (google-genai's order): the live test's opt-in.
LIVE_KEY = os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
STREAMED = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"


@pytest.fixture(autouse=True)
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    for variable in ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)


def _record(base_url: str | None, out: Path, *extra: str) -> Result:
    args = ["record", "--provider", "gemini", "--model", "gemini-2.5-flash", "--out", str(out)]
    base = [] if base_url is None else ["--base-url", base_url]
    return CliRunner().invoke(cli, [*args, "--prompt", "Weather in Paris?", *base, *extra])


@pytest.mark.parametrize("name", ["text", "one_tool"])
def test_the_recording_holds_the_served_events_and_replays_the_same(
    tmp_path: Path, name: str
) -> None:
    schema = tmp_path / "weather.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"city": {"type": "string"}}}))
    served = Served(GEMINI_LIBRARY / f"{name}.jsonl")
    out, vcr = tmp_path / "rec.jsonl", tmp_path / "rec.vcr.yaml"
    with served.run() as url:
        tool = ["--tool", f"get_weather={schema}", "--system", "Be brief.", "--vcr", str(vcr)]
        result = _record(url, out, *tool)
    assert result.exit_code == 0, result.output
    original, recorded = Cassette(served.cassette), Cassette(out)
    assert list(recorded.events()) == list(original.events())
    assert replay_outcome(recorded).to_json_lines() == replay_outcome(original).to_json_lines()
    header = recorded.header or {}
    assert (header["provider"], header["source"], header["model"]) == (
        "gemini",
        "recorded",
        "gemini-2.5-flash",
    )
    [(path, headers, body)] = served.received
    assert path == STREAMED
    assert headers["x-goog-api-key"] == KEY
    # the header keeps the request with its model, the wire carries it in the path
    assert {"model": "gemini-2.5-flash", **body} == header["request"]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}]
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"
    for written in (out, vcr):
        assert KEY not in written.read_text()
    assert f"uri: {url}{STREAMED}?alt=sse" in vcr.read_text()  # SSE asked for
    imported = import_recording(str(vcr), str(tmp_path / "imported"))
    [(again, _)] = imported.written
    assert list(Cassette(again).events()) == list(original.events())  # the --vcr file reads back
    assert (Cassette(again).header or {})["request"]["model"] == "gemini-2.5-flash"
    if name == "text":
        assert "Paris is the capital of France." in result.stderr
    assert KEY not in result.output
    assert result.stdout == f"wrote {out} and {vcr}: {len(list(original.events()))} events\n"


def test_google_api_key_wins_over_gemini_api_key_as_in_google_genai(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", OTHER)
    served = Served(GEMINI_LIBRARY / "text.jsonl")
    with caplog.at_level(logging.WARNING), served.run() as url:
        result = _record(url, tmp_path / "rec.jsonl")
    assert result.exit_code == 0, result.output
    [(_, headers, _)] = served.received
    assert headers["x-goog-api-key"] == OTHER
    [warned] = [record.getMessage() for record in caplog.records]
    assert warned == (
        "GOOGLE_API_KEY and GEMINI_API_KEY are set: using GOOGLE_API_KEY, as google.genai does"
    )
    assert KEY not in caplog.text and OTHER not in caplog.text


def test_google_api_key_alone_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", OTHER)
    served = Served(GEMINI_LIBRARY / "text.jsonl")
    with served.run() as url:
        assert _record(url, tmp_path / "rec.jsonl").exit_code == 0
    [(_, headers, _)] = served.received
    assert headers["x-goog-api-key"] == OTHER
    assert OTHER not in (tmp_path / "rec.jsonl").read_text()


REFUSALS = {
    400: ("INVALID_ARGUMENT", f"API key not valid: {KEY}. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "Method doesn't allow unregistered callers."),
}


@pytest.mark.parametrize("status", list(REFUSALS))
def test_a_refusal_exits_1_in_one_line_writes_nothing_and_masks_the_key(
    tmp_path: Path, status: int
) -> None:
    name, message = REFUSALS[status]
    error = {"error": {"code": status, "message": message, "status": name}}
    line = {"harness": "http_error", "status": status, "headers": {}, "body": error}
    cassette = tmp_path / "refused.jsonl"
    header = {"cassette": 1, "description": "refused", "provider": "gemini"}
    cassette.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n")
    out = tmp_path / "rec.jsonl"
    out.write_text("old\n")
    with Served(cassette).run() as url:
        result = _record(url, out, "--force", "--vcr", str(tmp_path / "v.yaml"))
    assert result.exit_code == 1
    said = message.replace(KEY, "***")
    assert result.stderr == f"harness record: the API refused the request: {status} {said}\n"
    assert out.read_text() == "old\n"
    assert not (tmp_path / "v.yaml").exists()


@pytest.mark.parametrize("vcr", [False, True], ids=["plain", "vcr"])
def test_a_stream_cut_midway_exits_1_and_leaves_the_old_file(tmp_path: Path, vcr: bool) -> None:
    lines = (GEMINI_LIBRARY / "text.jsonl").read_text().splitlines()
    cassette = tmp_path / "cut.jsonl"
    cut = [*lines[:3], json.dumps({"harness": "cut", "after_bytes": 9}), *lines[3:]]
    cassette.write_text("\n".join(cut) + "\n")
    out = tmp_path / "rec.jsonl"
    out.write_text("old\n")
    with Served(cassette).run() as url:
        result = _record(url, out, "--force", *(["--vcr", str(tmp_path / "v.yaml")] * vcr))
    assert result.exit_code == 1
    last = result.stderr.splitlines()[-1]
    # vcrpy reads the whole body before the recorder sees any of it
    assert last.startswith(
        f"harness record: connection failed or dropped after {0 if vcr else 2} events ("
    )
    assert last.endswith("); nothing written")
    assert out.read_text() == "old\n"
    assert not (tmp_path / "v.yaml").exists()
    assert KEY not in result.output


def test_the_base_url_comes_from_google_gemini_base_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = Served(GEMINI_LIBRARY / "text.jsonl")
    with served.run() as url:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", f"{url}/")
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/never")
        result = _record(None, tmp_path / "rec.jsonl")
    assert result.exit_code == 0, result.output
    [(path, _, _)] = served.received
    assert path == STREAMED


def test_a_request_file_is_the_body_and_the_options_override_it(tmp_path: Path) -> None:
    request = {
        "model": "models/other",
        "contents": [{"role": "user", "parts": [{"text": "x"}]}],
        "generationConfig": {"temperature": 0},
    }
    (tmp_path / "body.json").write_text(json.dumps(request))
    served = Served(GEMINI_LIBRARY / "text.jsonl")
    with served.run() as url:
        args = ["record", "--provider", "gemini", "--request", str(tmp_path / "body.json")]
        more = ["--max-tokens", "9", "--base-url", url, "--out", str(tmp_path / "rec.jsonl")]
        result = CliRunner().invoke(cli, [*args, *more])
    assert result.exit_code == 0, result.output
    [(path, _, body)] = served.received
    assert path == "/v1beta/models/other:streamGenerateContent"  # `models/...` is the model
    config = {"temperature": 0, "maxOutputTokens": 9}  # an option adds to the file's
    assert body == {"contents": request["contents"], "generationConfig": config}


def test_without_a_key_one_line_exit_2_and_nothing_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-this-one")
    result = _record("http://127.0.0.1:9", tmp_path / "rec.jsonl")
    assert result.exit_code == 2
    assert result.stderr == (
        "harness record: GEMINI_API_KEY or GOOGLE_API_KEY is not set: recording calls the "
        "live API (and is billed); set it to opt in\n"
    )
    assert not (tmp_path / "rec.jsonl").exists()


def test_the_help_documents_gemini() -> None:
    result = CliRunner().invoke(cli, ["record", "--help"])
    text = " ".join(result.output.split())
    for said in ("gemini", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        assert said in text


@pytest.mark.skipif(
    not LIVE_KEY, reason="a live, billed recording: needs GEMINI_API_KEY or GOOGLE_API_KEY"
)
def test_a_live_recording_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", LIVE_KEY or "")
    out = tmp_path / "live.jsonl"
    args = ["record", "--provider", "gemini", "--model", "gemini-2.5-flash", "--prompt", "Say hi"]
    result = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert replay_outcome(Cassette(out)).completed
    assert (LIVE_KEY or "") not in out.read_text()
