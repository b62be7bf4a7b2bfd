"""`--via sdk` on a host: every Anthropic library cassette read by `AnthropicBedrock`
(Bedrock's event-stream frames, cut at any byte) and `AnthropicVertex` (the same SSE at
Vertex's path) gives the outcome direct replay gives; the host is the one asked, else
the one the cassette's header names, else the direct API."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LIBRARY, library_cassettes, not_installed

from harness import Chunking, Outcome, replay_outcome
from harness._cassette.codec import Cassette
from harness._exceptions import InputError
from harness._replay.direct import acollect, collect
from harness._replay.readers import sdk_on
from harness._replay.sdk import areplay_events, replay_events
from harness._testing.coverage import outcome_code
from harness_cli.main import cli

pytest.importorskip("botocore", reason=not_installed("botocore"))

SHIPPED = library_cassettes()
HOSTS = ["bedrock", "vertex"]


def _lines(outcome: Outcome) -> list[dict[str, Any]]:
    return outcome.to_json_lines()


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(LIBRARY)) for p in SHIPPED])
def test_every_library_cassette_reads_the_same_through_the_hosts_client(
    path: Path, host: str
) -> None:
    expected = _lines(replay_outcome(path))
    chunked = Chunking(size=5, seed=len(path.name))
    read = collect(replay_events(path, via="sdk", host=host, chunking=chunked))
    assert _lines(read) == expected
    aread = asyncio.run(acollect(areplay_events(path, via="sdk", host=host)))
    assert _lines(aread) == expected


@pytest.mark.parametrize("host", HOSTS)
def test_bedrocks_frames_cut_at_every_byte_read_the_same(host: str) -> None:
    path = LIBRARY / "two_tools.jsonl"
    read = collect(replay_events(path, via="sdk", host=host, chunking=Chunking(size=1)))
    assert _lines(read) == _lines(replay_outcome(path))


def _with_header(tmp_path: Path, **fields: Any) -> Path:
    lines = (LIBRARY / "text_only.jsonl").read_text().splitlines()
    header = {**json.loads(lines[0]), **fields}
    path = tmp_path / "hosted.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return path


def test_the_host_is_the_one_asked_else_the_headers_else_the_direct_apis(
    tmp_path: Path,
) -> None:
    on_bedrock = Cassette(_with_header(tmp_path, host="bedrock"))
    assert sdk_on(on_bedrock, None).clients[0] == "AnthropicBedrock"
    assert sdk_on(on_bedrock, "vertex").clients[0] == "AnthropicVertex"
    assert sdk_on(on_bedrock, "direct").clients[0] == "Anthropic"
    assert sdk_on(Cassette(LIBRARY / "text_only.jsonl"), None).clients[0] == "Anthropic"


def test_a_host_a_dialect_is_not_served_on_is_refused_in_one_line() -> None:
    chat = next(iter(library_cassettes("openai-chat")))
    alone = r"openai-chat streams are served on their own API alone \(name no host\)"
    with pytest.raises(InputError, match=f"^host 'bedrock': {alone}$"):
        collect(replay_events(chat, via="sdk", host="bedrock"))
    result = CliRunner().invoke(cli, ["replay", "--via", "sdk", "--host", "vertex", str(chat)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    # a dialect served on a host names it, and its own API; Converse's none
    gemini = LIBRARY / "gemini" / "text.jsonl"
    result = CliRunner().invoke(cli, ["replay", "--via", "sdk", "--host", "bedrock", str(gemini)])
    assert result.output == (
        "harness replay: host 'bedrock': gemini streams are served on vertex or their own "
        "API (name no host)\n"
    )


def test_the_command_reads_through_the_hosts_client_as_directly() -> None:
    paths = [str(LIBRARY / "two_tools.jsonl"), str(LIBRARY / "errors" / "overloaded_error.jsonl")]
    direct = CliRunner().invoke(cli, ["replay", *paths])
    for host in HOSTS:
        args = ["replay", "--via", "sdk", "--host", host, "--chunk-size", "3", *paths]
        hosted = CliRunner().invoke(cli, args)
        assert (hosted.exit_code, hosted.output) == (direct.exit_code, direct.output)
    assert "api_error   overloaded_error: Overloaded" in direct.output


def test_host_needs_the_sdk_path() -> None:
    result = CliRunner().invoke(
        cli, ["replay", "--host", "bedrock", str(LIBRARY / "text_only.jsonl")]
    )
    assert result.exit_code == 2
    assert "--host needs --via sdk" in result.output
    with pytest.raises(InputError, match="host applies to via='sdk' only"):
        replay_events(LIBRARY / "text_only.jsonl", host="bedrock")


#: A chunk frame's bytes that carry no event -> what `AnthropicBedrock` makes of them
#: (direct replay's `bad_frame` in every case): its own code breaking over bytes that are
#: not JSON, or not UTF-8 (its refusal of the stream, named by the class), and JSON that
#: is no object, which it hands on as it is and which is refused as its frame is.
CHUNKS_OF_NO_EVENT = {
    "not_json": (b"hello", "connection_error:JSONDecodeError"),
    "not_utf8": (b"\xff", "connection_error:UnicodeDecodeError"),
    "list": (b"[]", "bad_frame"),
    "string": (b'"s"', "bad_frame"),
    "null": (b"null", "bad_frame"),
}


@pytest.mark.parametrize("name", sorted(CHUNKS_OF_NO_EVENT))
def test_a_chunk_that_carries_no_event_is_a_stream_failure_through_anthropic_bedrock(
    tmp_path: Path, name: str
) -> None:
    chunk, code = CHUNKS_OF_NO_EVENT[name]
    lines = (LIBRARY / "text_only.jsonl").read_text().splitlines()
    frame = {
        "harness": "frame",
        "headers": {":message-type": "event", ":event-type": "chunk"},
        "payload": {"bytes": base64.b64encode(chunk).decode()},
    }
    header = json.dumps({**json.loads(lines[0]), "host": "bedrock"})
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join([header, *lines[1:3], json.dumps(frame), *lines[3:]]) + "\n")
    assert outcome_code(replay_outcome(path)) == "bad_frame"
    assert outcome_code(collect(replay_events(path, via="sdk"))) == code
    assert outcome_code(asyncio.run(acollect(areplay_events(path, via="sdk")))) == code
    result = CliRunner().invoke(cli, ["replay", "--via", "sdk", str(path)])
    assert result.exit_code == 1, result.output
    assert "internal error" not in result.output
