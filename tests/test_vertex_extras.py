"""Vertex's own extras: its `vertex_event` (a usage report the anthropic SDK's
`AnthropicVertex` hands on from `create(stream=True)` and its stream helper passes over)
is passed over by the adapter and the guard wherever it comes, and a cassette may hold
it; an `overloaded_error` error event after a 200 is the API's error
(`api_error:overloaded_error`), the SDK raising its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBRARY, anthropic_on

import harness
from harness._cassette.codec import Cassette
from harness._http.hosting import ServerThread
from harness._http.server import CassetteServer
from harness._replay.direct import collect, replay_outcome
from harness._replay.sdk import replay_events
from harness._testing.coverage import outcome_code

anthropic = pytest.importorskip("anthropic")

ASK: Any = {
    "model": "claude-sonnet-5",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Go"}],
}
VERTEX_EVENT = {"type": "vertex_event", "usage": {"input_tokens": 9, "output_tokens": 1}}
TEXT_ONLY = LIBRARY / "text_only.jsonl"
OVERLOADED = LIBRARY / "errors" / "overloaded_error.jsonl"


def _with_vertex_event(tmp_path: Path, at: int) -> Path:
    lines = [json.loads(line) for line in TEXT_ONLY.read_text().splitlines()]
    header, events = {**lines[0], "host": "vertex"}, lines[1:]
    placed = [*events[:at], VERTEX_EVENT, *events[at:]]
    path = tmp_path / f"vertex_event_{at}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *placed]))
    return path


PLACES = {"first": 0, "mid-message": 3, "after-message_stop": 99}


@pytest.mark.parametrize("at", PLACES.values(), ids=PLACES.keys())
def test_a_vertex_event_anywhere_is_passed_over_as_the_sdk_passes_it(
    tmp_path: Path, at: int
) -> None:
    path = _with_vertex_event(tmp_path, at)
    assert VERTEX_EVENT in list(Cassette(path).events()), "a cassette holds it"
    expected = replay_outcome(TEXT_ONLY).to_json_lines()
    assert replay_outcome(path).to_json_lines() == expected
    through_vertex = collect(replay_events(path, via="sdk", host="vertex"))
    assert through_vertex.to_json_lines() == expected
    guarded = harness.strict(harness.cassette_client(path))
    assert type(guarded).__name__ == "AnthropicVertex"
    seen = [event.type for event in guarded.messages.create(**ASK, stream=True)]
    sent = [event["type"] for event in Cassette(path).events() if event["type"] != "ping"]
    assert seen == sent, "AnthropicVertex hands it on, in its place"
    with harness.strict(harness.cassette_client(path)).messages.stream(**ASK) as stream:
        assert stream.get_final_message().stop_reason == "end_turn"


def test_the_guard_passes_a_vertex_event_served_at_vertexs_path(tmp_path: Path) -> None:
    path = _with_vertex_event(tmp_path, 99)
    server = CassetteServer([str(path)], match_on=None)
    with ServerThread(server.app()) as url:
        client = harness.strict(anthropic_on("vertex", base_url=url + "/v1", max_retries=0))
        with client:
            seen = [event.type for event in client.messages.create(**ASK, stream=True)]
    assert seen[-2:] == ["message_stop", "vertex_event"], "in its place, never sent ahead"


def test_an_overloaded_error_after_a_200_is_the_apis_error_on_vertex() -> None:
    direct = outcome_code(replay_outcome(OVERLOADED))
    assert direct == "api_error:overloaded_error"
    through_vertex = collect(replay_events(OVERLOADED, via="sdk", host="vertex"))
    assert outcome_code(through_vertex) == direct
    for client in (
        harness.cassette_client(OVERLOADED, host="vertex"),
        harness.strict(harness.cassette_client(OVERLOADED, host="vertex")),
    ):
        with pytest.raises(anthropic.APIStatusError) as raised:
            for _event in client.messages.create(**ASK, stream=True):
                pass
        assert raised.value.body["error"]["type"] == "overloaded_error"
