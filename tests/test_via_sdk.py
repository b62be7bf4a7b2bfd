"""Replay through the SDK's wire path gives the same outcome as the in-process replay."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import LIBRARY, library_cassettes
from hypothesis import given, settings, strategies as st

from harness import (
    Chunking,
    Outcome,
    RealtimePacer,
    aoutcome_via_sdk,
    outcome_via_sdk,
    replay_events,
    replay_outcome,
)
from harness._providers.sse import encode_event
from harness.builder import StreamBuilder
from harness_cli.main import cli

SHIPPED = library_cassettes()


def _built_streams() -> dict[str, StreamBuilder]:
    """Streams whose outcomes the shipped cassettes may not cover: failures, non-ASCII text."""
    return {
        "unicode_text": StreamBuilder().text(0, "naïve ✓ ", "日本語 🎉", "\u2028line").stop(),
        "api_error_mid_stream": StreamBuilder().text(0, "partial").error("overloaded_error"),
        "orphan_delta": StreamBuilder().json_delta(2, '{"a": 1}').stop("tool_use"),
        "tool_then_stop": StreamBuilder()
        .tool(1, "read", {"path": "é.md"}, pieces=4)
        .stop("tool_use"),
        "missing_stop": StreamBuilder().text(0, "cut off"),
        "with_at_directives": StreamBuilder()
        .directive("at", ms=0)
        .text(0, "paced")
        .directive("at", ms=1)
        .stop(),
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("built")
    paths = {}
    for name, stream in _built_streams().items():
        paths[name] = folder / f"{name}.jsonl"
        stream.write(paths[name], name)
    return paths


def _lines(outcome: Outcome) -> list[dict[str, Any]]:
    return outcome.to_json_lines()


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(LIBRARY)) for p in SHIPPED])
def test_every_shipped_cassette_replays_the_same_through_the_sdk(path: Path) -> None:
    expected = _lines(replay_outcome(path))
    assert _lines(outcome_via_sdk(path)) == expected
    assert _lines(asyncio.run(aoutcome_via_sdk(path))) == expected
    assert _lines(outcome_via_sdk(path, Chunking(size=1))) == expected


@pytest.mark.parametrize("name", sorted(_built_streams()))
def test_failures_and_unicode_replay_the_same_through_the_sdk(
    built: dict[str, Path], name: str
) -> None:
    path = built[name]
    expected = _lines(replay_outcome(path))
    assert _lines(outcome_via_sdk(path, Chunking(size=3))) == expected
    assert _lines(asyncio.run(aoutcome_via_sdk(path, Chunking(seed=7)))) == expected


def test_api_error_event_surfaces_as_the_sdks_api_status_error(built: dict[str, Path]) -> None:
    from anthropic import APIStatusError

    outcome = outcome_via_sdk(built["api_error_mid_stream"], Chunking(size=5))
    assert isinstance(outcome.error, APIStatusError)
    async_outcome = asyncio.run(aoutcome_via_sdk(built["api_error_mid_stream"]))
    assert isinstance(async_outcome.error, APIStatusError)
    assert outcome.to_json_lines()[-1] == {
        "type": "api_error",
        "error_type": "overloaded_error",
        "message": "Overloaded",
    }


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(sorted(_built_streams())),
    size=st.integers(min_value=1, max_value=64),
    seed=st.integers(min_value=0, max_value=2**32),
)
@pytest.mark.slow
def test_random_chunkings_never_change_the_outcome(
    built: dict[str, Path], name: str, size: int, seed: int
) -> None:
    expected = _lines(replay_outcome(built[name]))
    assert _lines(outcome_via_sdk(built[name], Chunking(size, seed))) == expected


def test_chunks_cut_inside_utf8_characters_and_lines() -> None:
    payload = encode_event({"type": "content_block_delta", "index": 0, "delta": {"text": "é✓"}})
    chunks = list(Chunking(size=1).cut([payload]))
    assert b"".join(chunks) == payload
    undecodable = 0
    for chunk in chunks:
        try:
            chunk.decode()
        except UnicodeDecodeError:
            undecodable += 1
    assert undecodable > 0


def test_same_seed_gives_same_cuts_and_lengths_stay_in_range() -> None:
    data = [bytes(range(200)), bytes(300)]
    first = list(Chunking(size=9, seed=42).cut(data))
    assert first == list(Chunking(size=9, seed=42).cut(data))
    assert first != list(Chunking(size=9, seed=43).cut(data))
    assert b"".join(first) == b"".join(data)
    assert all(1 <= len(chunk) <= 9 for chunk in first)


def test_each_event_is_framed_with_its_type_and_a_closing_blank_line() -> None:
    assert encode_event({"type": "ping"}) == b'event: ping\ndata: {"type":"ping"}\n\n'


def test_via_sdk_opens_no_socket(built: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert outcome_via_sdk(built["unicode_text"]).completed


def test_realtime_sleeps_until_each_recorded_offset(built: dict[str, Path]) -> None:
    waits: list[float] = []
    pacer = RealtimePacer(sleep=waits.append)
    pacer({"harness": "at", "ms": 60_000})
    pacer({"harness": "abort"})
    assert len(waits) == 1 and 59 < waits[0] <= 60
    plain = list(replay_events(built["with_at_directives"]))
    assert list(replay_events(built["with_at_directives"], via="sdk", realtime=True)) == plain
    assert list(replay_events(built["with_at_directives"], realtime=True)) == plain


def test_cli_via_sdk_prints_what_direct_replay_prints(built: dict[str, Path]) -> None:
    runner = CliRunner()
    paths = [str(built[name]) for name in sorted(built)]
    direct = runner.invoke(cli, ["replay", "--format", "json", *paths])
    via_sdk = runner.invoke(
        cli, ["replay", "--format", "json", "--via", "sdk", "--chunk-size", "5", *paths]
    )
    assert via_sdk.exit_code == direct.exit_code == 1
    assert via_sdk.output == direct.output


def test_cli_rejects_chunking_without_via_sdk(built: dict[str, Path]) -> None:
    result = CliRunner().invoke(cli, ["replay", "--chunk-seed", "3", str(built["unicode_text"])])
    assert result.exit_code == 2
    assert "--chunk-seed needs --via sdk" in result.output
