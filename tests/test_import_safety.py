"""`harness import` on hostile and broken input: one line, the right exit, nothing lost.

Bombs (YAML aliases, compressed bodies, compressed files) are refused without being
expanded; oversized files without being read whole; outputs never collide and never
replace a file without `--force`; no traceback, whatever the input.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import brotli
import pytest
import zstandard
from click.testing import CliRunner, Result
from conftest import ROOT

import harness._interop.reading
from harness import Cassette
from harness_cli.main import cli

RECORDINGS = ROOT / "tests" / "data" / "recordings"
STREAM = RECORDINGS / "vcrpy_legacy_httpx.json"

BILLION_LAUGHS = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
interactions: [*i]
"""


def _import(*args: str) -> Result:
    return CliRunner().invoke(cli, ["import", *args])


def _one_line(result: Result) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def _vcr_yaml(body: bytes, encoding: str) -> str:
    """A one-interaction vcrpy cassette whose response body is `body`, `!!binary`."""
    packed = base64.b64encode(body).decode()
    return f"""\
interactions:
- request:
    body: '{{"model": "claude-haiku-4-5", "max_tokens": 8, "stream": true}}'
    headers: {{}}
    method: POST
    uri: https://api.anthropic.com/v1/messages
  response:
    body:
      string: !!binary |
        {packed}
    headers:
      Content-Encoding: [{encoding}]
      Content-Type: [text/event-stream]
    status: {{code: 200, message: OK}}
version: 1
"""


def test_an_alias_bomb_is_refused_in_one_line_without_expanding(tmp_path: Path) -> None:
    source = tmp_path / "laughs.yaml"
    source.write_text(BILLION_LAUGHS)
    result = _import(str(source), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert _one_line(result) == (
        f"{source}: YAML aliases expand to more than 5,000,000 nodes (an alias bomb); refused"
    )


def test_a_recursive_alias_is_refused_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "loop.yaml"
    source.write_text("interactions: &x [*x]\n")
    result = _import(str(source), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert _one_line(result).startswith(f"{source}: ")


def test_aliases_that_real_serializers_write_are_read(tmp_path: Path) -> None:
    # yaml.dump writes &id001 / *id001 for a header list shared by two requests
    source = RECORDINGS / "pydantic_ai_thinking.yaml"
    assert "*id001" in source.read_text()
    assert _import(str(source), "--out", str(tmp_path)).exit_code == 0


def test_a_file_over_the_size_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness._interop.reading, "MAX_FILE_BYTES", 1024)
    result = _import(str(STREAM), "--out", str(tmp_path))
    assert result.exit_code == 2
    assert _one_line(result) == f"{STREAM}: the file is larger than 0 MiB; refused"


@pytest.mark.slow
def test_a_gzip_body_bomb_is_skipped_in_one_line_at_the_real_limit(tmp_path: Path) -> None:
    bomb = gzip.compress(b"\0" * (harness._interop.reading.MAX_BODY_BYTES + 1), compresslevel=9)
    assert len(bomb) < 100_000
    source = tmp_path / "bomb.yaml"
    source.write_text(_vcr_yaml(bomb, "gzip"))
    result = _import(str(source), "--out", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert f"skipped {source} #1 POST https://api.anthropic.com/v1/messages: " in result.stdout
    assert "the gzip body decompresses to more than 64 MiB; refused" in result.stdout


COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}


@pytest.mark.parametrize("coding", sorted(COMPRESSORS))
def test_each_coding_decodes_and_stops_at_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, coding: str
) -> None:
    sse = json.loads(STREAM.read_text())["interactions"][0]["response"]["content"].encode()
    source = tmp_path / "one.yaml"
    source.write_text(_vcr_yaml(COMPRESSORS[coding](sse), coding))
    result = _import(str(source), "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert len(list(Cassette(tmp_path / "o" / "one-01.jsonl").events())) == 9
    monkeypatch.setattr(harness._interop.reading, "MAX_BODY_BYTES", len(sse) - 1)
    limited = _import(str(source), "--out", str(tmp_path / "p"))
    assert limited.exit_code == 1
    assert f"the {coding} body decompresses to more than" in limited.stdout


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_a_compressed_body_is_found_when_the_header_was_redacted(
    tmp_path: Path, coding: str
) -> None:
    sse = json.loads(STREAM.read_text())["interactions"][0]["response"]["content"].encode()
    source = tmp_path / "redacted.yaml"
    source.write_text(_vcr_yaml(COMPRESSORS[coding](sse), "'**REDACTED**'"))
    result = _import(str(source), "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert len(list(Cassette(tmp_path / "o" / "redacted-01.jsonl").events())) == 9


def test_a_whole_file_gzip_bomb_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness._interop.reading, "MAX_EXPANDED_BYTES", 4 * 1024 * 1024)
    source = tmp_path / "bomb.yaml.gz"
    source.write_bytes(gzip.compress(b"#" * (5 * 1024 * 1024)))
    result = _import(str(source), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert (
        _one_line(result) == f"{source}: the gzip-decompressed file is larger than 4 MiB; refused"
    )


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("notes.yaml", b"just: [a, list\n", "not a vcrpy cassette: "),
        ("binary.yaml", b"\x00\xff\xfe junk", "not a vcrpy cassette: not UTF-8 text"),
        ("deep.yaml", b"[" * 100_000, "not a vcrpy cassette: "),
        ("deep.json", b"[" * 100_000 + b"]" * 100_000, "not a vcrpy cassette: not valid JSON"),
        ("list.json", b"[1, 2]", "neither an interactions list (vcrpy) nor log.entries"),
        ("empty.yaml", b"", "neither an interactions list (vcrpy) nor log.entries"),
        ("page.har", b'{"log": {"entries": 3}}', "not a HAR file: "),
        ("python.yaml", b"x: !!python/object/apply:os.system ['true']\n", "not a vcrpy"),
        ("truncated.yaml.gz", gzip.compress(b"interactions: []\n")[:-12], "cannot decompress"),
    ],
    ids=lambda value: value if isinstance(value, str) and "." in value else "",
)
def test_an_unusable_file_is_one_line_and_exit_2(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    source = tmp_path / name
    source.write_bytes(content)
    result = _import(str(source), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    line = _one_line(result)
    assert line.startswith(f"{source}: ") and reason in line, line


def test_malformed_interactions_are_skipped_and_the_others_import(tmp_path: Path) -> None:
    source = tmp_path / "mixed.yaml"
    document = json.loads(STREAM.read_text())
    document["interactions"] = [
        "not a mapping",
        {"request": {"method": "POST"}, "response": {"status": {"code": "x"}}},
        *document["interactions"],
    ]
    source.write_text(json.dumps(document))
    result = _import(str(source), "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert f"skipped {source} #1: not an interaction (a request and a response)" in result.stdout
    assert f"skipped {source} #2: malformed interaction" in result.stdout
    assert (tmp_path / "o" / "mixed-03.jsonl").exists()


def test_import_out_naming_a_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me\n")
    result = _import(str(STREAM), "--out", str(target))
    assert result.exit_code == 2
    assert _one_line(result) == f"{target}: exists and is not a folder"
    assert target.read_text() == "keep me\n"


def test_same_named_files_from_two_folders_get_distinct_outputs(tmp_path: Path) -> None:
    for folder, suffix in (("a", ".yaml"), ("b", ".json")):
        (tmp_path / folder).mkdir()
        shutil.copy(STREAM, tmp_path / folder / f"chat{suffix}")
    out = tmp_path / "one"
    args = [str(tmp_path / "a" / "chat.yaml"), str(tmp_path / "b" / "chat.json")]
    result = _import(*args, "--out", str(out), "--force")
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in out.iterdir()) == ["a-chat-01.jsonl", "b-chat-01.jsonl"]


def test_same_named_files_in_one_folder_keep_their_suffix_apart(tmp_path: Path) -> None:
    shutil.copy(STREAM, tmp_path / "chat.json")
    shutil.copy(STREAM, tmp_path / "chat.yaml")
    result = _import(str(tmp_path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    names = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert names == ["chat-json-01.jsonl", "chat-yaml-01.jsonl"]


def test_names_that_cannot_be_made_distinct_refuse_the_run_before_any_write(
    tmp_path: Path,
) -> None:
    for relative in ("a/x.json", "b/x.json", "a-x.json"):
        (tmp_path / relative).parent.mkdir(exist_ok=True)
        shutil.copy(STREAM, tmp_path / relative)
    result = _import(str(tmp_path), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    line = _one_line(result)
    assert "would both be written as a-x-NN.jsonl; nothing was written" in line
    assert not (tmp_path / "out").exists()


def test_the_same_file_given_twice_is_imported_once(tmp_path: Path) -> None:
    result = _import(str(STREAM), str(STREAM), "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "1 file: 1 cassette written, 0 skipped"


def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    result = _import(str(fifo), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert _one_line(result) == f"{fifo}: not a regular file"


def test_text_from_a_recording_reaches_the_terminal_escaped_and_short(tmp_path: Path) -> None:
    document = json.loads(STREAM.read_text())
    document["interactions"][0]["request"]["method"] = "\x1b]0;owned\x07GET" + "x" * 500
    source = tmp_path / "escapes.json"
    source.write_text(json.dumps(document))
    result = _import(str(source), "--out", str(tmp_path / "o"))
    line = next(line for line in result.stdout.splitlines() if line.startswith("skipped"))
    assert "\x1b" not in line and "\\x1b]0;owned\\x07GET" in line
    assert line.endswith("...: not a POST to /v1/messages")


def test_what_json_cannot_hold_is_skipped_in_one_line(tmp_path: Path) -> None:
    sse = json.loads(STREAM.read_text())["interactions"][0]["response"]["content"]
    deep = "[" * 300 + "]" * 300
    source = tmp_path / "odd.yaml"
    source.write_text(
        f"""\
interactions:
- request: {{method: POST, uri: "https://api.anthropic.com/v1/messages",
            parsed_body: {{model: m, x: {deep}}}}}
  response: {{status: {{code: 200}}, body: {{string: {json.dumps(sse)}}}}}
- request: {{method: POST, uri: "https://api.anthropic.com/v1/messages",
            parsed_body: {{model: m, metadata: {{7: seven}}}}}}
  response: {{status: {{code: 200}}, body: {{string: {json.dumps(sse)}}}}}
"""
    )
    result = _import(str(source), "--out", str(tmp_path / "o"))
    label = f"skipped {source} #%d POST https://api.anthropic.com/v1/messages: "
    lines = result.stdout.splitlines()
    assert label % 1 + "cannot be written as JSON: nested deeper than 254 levels" in lines
    # a YAML key that is no string is written as JSON writes keys: as a string
    (written,) = (tmp_path / "o").iterdir()
    header = json.loads(written.read_text().splitlines()[0])
    assert header["request"]["metadata"] == {"7": "seven"}
    assert "Traceback" not in result.output
