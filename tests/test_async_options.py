"""One state machine, thin drivers, the same options: the async entry points take every
option the sync ones take and agree with them; per-request state is passed, not set."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from conftest import LIBRARY
from test_directives import requested_sleeps

from harness import (
    Chunking,
    Replayer,
    areplay_events,
    async_recording_client,
    recording_client,
    replay_events,
)
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._replay import replayer as replayer_module
from harness._replay.direct import acollect, collect
from harness.builder import StreamBuilder

SHIPPED = sorted(LIBRARY.glob("*.jsonl"))


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A cassette as `harness record` writes it: an `at` line before every event, 1 ms
    apart, and an `abort` line for a handler to see."""
    timed = StreamBuilder()
    events = StreamBuilder().text(0, "one ", "two ", "three").stop().events()
    for number, event in enumerate(events):
        timed.directive("at", ms=number).raw(event)
    timed.directive("abort")
    path = tmp_path / "recorded.jsonl"
    timed.write(path, "recorded")
    return path


def run_async(source: Path, **options: Any) -> Any:
    return asyncio.run(acollect(areplay_events(source, **options))).to_json_lines()


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"realtime": True},
        {"via": "sdk"},
        {"via": "sdk", "realtime": True},
        {"via": "sdk", "chunking": Chunking(size=3)},
        {"via": "sdk", "chunking": Chunking(seed=7)},
    ],
    ids=["direct", "direct-realtime", "sdk", "sdk-realtime", "sdk-size-3", "sdk-seed-7"],
)
def test_areplay_events_takes_every_option_and_agrees_with_replay_events(
    recorded: Path, options: dict[str, Any]
) -> None:
    for source in [recorded, *SHIPPED]:
        expected = collect(replay_events(source, **options)).to_json_lines()
        assert run_async(source, **options) == expected, source.name


@pytest.mark.parametrize("via", ["direct", "sdk"])
def test_both_drivers_hand_the_same_directives_to_the_handler(recorded: Path, via: str) -> None:
    seen_sync: list[dict[str, Any]] = []
    seen_async: list[dict[str, Any]] = []
    collect(replay_events(recorded, via=via, on_directive=seen_sync.append))
    run_async(recorded, via=via, on_directive=seen_async.append)
    assert seen_async == seen_sync
    assert [d["harness"] for d in seen_sync].count("at") == 8  # one an event
    assert seen_sync[-1] == {"harness": "abort"}


def test_chunking_without_the_wire_path_is_refused_by_both(recorded: Path) -> None:
    with pytest.raises(ValueError, match="chunking applies to via='sdk' only"):
        replay_events(recorded, chunking=Chunking(size=1))
    with pytest.raises(ValueError, match="chunking applies to via='sdk' only"):
        areplay_events(recorded, chunking=Chunking(size=1))


@pytest.mark.parametrize("via", ["direct", "sdk"])
def test_async_realtime_waits_on_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    path = tmp_path / "slow.jsonl"
    slow = StreamBuilder().directive("at", ms=0).message_start()
    slow.directive("at", ms=60_000).message_delta("end_turn").message_stop()
    slow.write(path, "one minute between two events")
    asked = requested_sleeps(monkeypatch)
    run_async(path, via=via, realtime=True)
    assert [delay for delay in asked if delay > 1] == [pytest.approx(60, abs=5)]


def test_recording_client_and_async_recording_client_make_the_two_kinds() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sync = recording_client([], api_key="sk-ant-dummy")
        asynchronous = async_recording_client([], api_key="sk-ant-dummy")
    assert isinstance(sync, anthropic.Anthropic)
    assert isinstance(asynchronous, anthropic.AsyncAnthropic)


def test_recording_client_asynchronous_is_deprecated_but_works() -> None:
    with pytest.deprecated_call(match=r"recording_client\(asynchronous=...\) is deprecated"):
        client = recording_client([], api_key="sk-ant-dummy", asynchronous=True)
    assert isinstance(client, anthropic.AsyncAnthropic)


def test_the_replayers_logs_are_read_only() -> None:
    replayer = Replayer([LIBRARY / "text_only.jsonl"], match_on=None)
    replayer.respond("POST", "/v1/messages", {}, b'{"stream": true}')
    assert len(replayer.requests) == 1
    assert replayer.requests[0].json == {"stream": True}
    assert not hasattr(replayer.requests, "append")
    assert not hasattr(replayer.errors, "clear")


def test_the_server_parses_each_body_once_and_sets_nothing_per_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def parse_again(raw: bytes) -> Any:
        raise AssertionError("the body was parsed a second time")

    monkeypatch.setattr(replayer_module, "json_body", parse_again)
    path = tmp_path / "c.jsonl"
    StreamBuilder().directive("at", ms=1).text(0, "paced").stop().write(path, "c")
    server = CassetteServer([str(path), str(path)], realtime=True, match_on=None)
    handler = server.replayer.on_directive
    with ServerThread(server.app()) as url:
        for stream in (True, False):
            response = httpx2.post(
                f"{url}/v1/messages", json={"model": "m", "stream": stream}, timeout=10
            )
            assert response.status_code == 200, response.text
    assert "paced" in response.text
    assert server.replayer.on_directive is handler
    assert [request.json["stream"] for request in server.replayer.requests] == [True, False]
